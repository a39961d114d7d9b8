package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"github.com/otlp-lite/otlp-lite/server"
)

// tlsOptions are the TLS flags of serve.
type tlsOptions struct {
	certFile, keyFile, clientCAFile string
	minVersion                      string
}

// checkTLSOptions checks the TLS flags at parse time: the files are given
// together, readable and hold what they should.
func checkTLSOptions(o tlsOptions) error {
	if _, err := tlsMinVersion(o.minVersion); err != nil {
		return err
	}
	if o.certFile == "" && o.keyFile == "" {
		if o.clientCAFile != "" {
			return errors.New("-tls-client-ca needs -tls-cert and -tls-key")
		}
		return nil
	}
	if o.certFile == "" || o.keyFile == "" {
		return errors.New("-tls-cert and -tls-key must be given together")
	}
	if _, err := tls.LoadX509KeyPair(o.certFile, o.keyFile); err != nil {
		return fmt.Errorf("bad -tls-cert/-tls-key: %w", err)
	}
	if o.clientCAFile != "" {
		pem, err := os.ReadFile(o.clientCAFile)
		if err != nil {
			return fmt.Errorf("bad -tls-client-ca: %w", err)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(pem) {
			return fmt.Errorf("bad -tls-client-ca %s: no PEM certificate in it", o.clientCAFile)
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

// serverTLSConfig checks the TLS flags and builds the listeners' TLS
// configuration with server.LoadTLS; nil without a certificate (h2c).
func serverTLSConfig(o tlsOptions, onReload func(error)) (*tls.Config, error) {
	if o.certFile == "" && o.keyFile == "" {
		if o.clientCAFile != "" {
			return nil, errors.New("-tls-client-ca needs -tls-cert and -tls-key")
		}
		return nil, nil
	}
	if o.certFile == "" || o.keyFile == "" {
		return nil, errors.New("-tls-cert and -tls-key must be given together")
	}
	minVersion, err := tlsMinVersion(o.minVersion)
	if err != nil {
		return nil, err
	}
	return server.LoadTLS(server.TLSFiles{CertFile: o.certFile, KeyFile: o.keyFile, ClientCAFile: o.clientCAFile,
		MinVersion: minVersion, OnReload: onReload})
}
