package main

import (
	"crypto/tls"
	"errors"
	"fmt"

	"github.com/otlp-lite/otlp-lite/server"
)

// tlsOptions are the TLS flags of serve.
type tlsOptions struct {
	certFile, keyFile, clientCAFile string
	minVersion                      string
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
	var minVersion uint16
	switch o.minVersion {
	case "1.2", "":
		minVersion = tls.VersionTLS12
	case "1.3":
		minVersion = tls.VersionTLS13
	default:
		return nil, fmt.Errorf("unknown -tls-min-version %q: want 1.2 or 1.3", o.minVersion)
	}
	return server.LoadTLS(server.TLSFiles{CertFile: o.certFile, KeyFile: o.keyFile, ClientCAFile: o.clientCAFile,
		MinVersion: minVersion, OnReload: onReload})
}
