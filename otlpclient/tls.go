package otlpclient

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// TLSFiles is a client's TLS configuration as files and names, as flags
// and URLs give it.
type TLSFiles struct {
	// CAFile holds the PEM certificates that sign the server's; empty
	// means the system roots.
	CAFile string
	// CertFile and KeyFile are a client certificate (mTLS), both or
	// neither.
	CertFile, KeyFile string
	// ServerName is the name checked in the server's certificate.
	ServerName string
	// InsecureSkipVerify does not check the server's certificate.
	InsecureSkipVerify bool
}

// ClientTLS loads f's files now, so that a wrong path is an error at
// start rather than at the first connection, and returns a TLS 1.2+
// client configuration. Errors name the file.
func ClientTLS(f TLSFiles) (*tls.Config, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: f.ServerName, InsecureSkipVerify: f.InsecureSkipVerify}
	if f.CAFile != "" {
		pem, err := os.ReadFile(f.CAFile)
		if err != nil {
			return nil, fmt.Errorf("cannot read the CA file: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("the CA file %s holds no PEM certificate", f.CAFile)
		}
	}
	if (f.CertFile == "") != (f.KeyFile == "") {
		return nil, errors.New("a client certificate and its key must be given together")
	}
	if f.CertFile != "" {
		pair, err := tls.LoadX509KeyPair(f.CertFile, f.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("cannot load the client certificate: %w", err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}
