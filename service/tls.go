package service

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"github.com/otlp-lite/otlp-lite/server"
)

// checkTLS checks the TLS settings before start: the files are given
// together, readable and hold what they should.
func (c Config) checkTLS() error {
	if _, err := tlsMinVersion(c.TLSMinVersion); err != nil {
		return err
	}
	if c.TLSCert == "" && c.TLSKey == "" {
		if c.TLSClientCA != "" {
			return errors.New("-tls-client-ca needs -tls-cert and -tls-key")
		}
		return nil
	}
	if c.TLSCert == "" || c.TLSKey == "" {
		return errors.New("-tls-cert and -tls-key must be given together")
	}
	if _, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey); err != nil {
		return fmt.Errorf("bad -tls-cert/-tls-key: %w", err)
	}
	if c.TLSClientCA != "" {
		pem, err := os.ReadFile(c.TLSClientCA)
		if err != nil {
			return fmt.Errorf("bad -tls-client-ca: %w", err)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(pem) {
			return fmt.Errorf("bad -tls-client-ca %s: no PEM certificate in it", c.TLSClientCA)
		}
	}
	return nil
}

func tlsMinVersion(v string) (uint16, error) {
	switch v {
	case "1.2", "":
		return tls.VersionTLS12, nil
	case "1.3":
		return tls.VersionTLS13, nil
	}
	return 0, fmt.Errorf("bad -tls-min-version %q: want 1.2 or 1.3", v)
}

// serverTLS builds the listeners' TLS configuration with server.LoadTLS;
// nil without a certificate (h2c).
func (c Config) serverTLS(onReload func(error)) (*tls.Config, error) {
	if c.TLSCert == "" && c.TLSKey == "" {
		if c.TLSClientCA != "" {
			return nil, errors.New("-tls-client-ca needs -tls-cert and -tls-key")
		}
		return nil, nil
	}
	if c.TLSCert == "" || c.TLSKey == "" {
		return nil, errors.New("-tls-cert and -tls-key must be given together")
	}
	minVersion, err := tlsMinVersion(c.TLSMinVersion)
	if err != nil {
		return nil, err
	}
	return server.LoadTLS(server.TLSFiles{CertFile: c.TLSCert, KeyFile: c.TLSKey, ClientCAFile: c.TLSClientCA,
		MinVersion: minVersion, OnReload: onReload})
}
