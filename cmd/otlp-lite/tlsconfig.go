package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// certReloader serves the certificate in certFile/keyFile and reloads it
// when either file changes, so a rotated certificate (cert-manager, ACME)
// is picked up without a restart. It checks the files at most once a
// second, on handshakes; a broken new pair keeps the old one in use.
type certReloader struct {
	certFile, keyFile string

	mu       sync.Mutex
	cert     *tls.Certificate
	modCert  time.Time
	modKey   time.Time
	checked  time.Time
	onReload func(err error)
}

func newCertReloader(certFile, keyFile string, onReload func(error)) (*certReloader, error) {
	r := &certReloader{certFile: certFile, keyFile: keyFile, onReload: onReload}
	if err := r.load(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *certReloader) load() error {
	cs, err1 := os.Stat(r.certFile)
	ks, err2 := os.Stat(r.keyFile)
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("cannot read TLS key pair: %w", err)
	}
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return fmt.Errorf("cannot load TLS key pair: %w", err)
	}
	r.cert, r.modCert, r.modKey = &cert, cs.ModTime(), ks.ModTime()
	return nil
}

// GetCertificate is the tls.Config hook.
func (r *certReloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now := time.Now(); now.Sub(r.checked) >= time.Second {
		r.checked = now
		cs, err1 := os.Stat(r.certFile)
		ks, err2 := os.Stat(r.keyFile)
		if err1 == nil && err2 == nil && (!cs.ModTime().Equal(r.modCert) || !ks.ModTime().Equal(r.modKey)) {
			err := r.load()
			if r.onReload != nil {
				r.onReload(err)
			}
		}
	}
	return r.cert, nil
}

// tlsOptions are the TLS flags of serve.
type tlsOptions struct {
	certFile, keyFile, clientCAFile string
	minVersion                      string
}

// serverTLSConfig builds the listeners' TLS configuration; nil without a
// certificate (h2c). With a client CA, client certificates are required and
// verified against it (mTLS).
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
	cr, err := newCertReloader(o.certFile, o.keyFile, onReload)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{GetCertificate: cr.GetCertificate}
	switch o.minVersion {
	case "1.2", "":
		cfg.MinVersion = tls.VersionTLS12
	case "1.3":
		cfg.MinVersion = tls.VersionTLS13
	default:
		return nil, fmt.Errorf("unknown -tls-min-version %q: want 1.2 or 1.3", o.minVersion)
	}
	if o.clientCAFile != "" {
		pem, err := os.ReadFile(o.clientCAFile)
		if err != nil {
			return nil, fmt.Errorf("cannot read client CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("no certificates in client CA file %s", o.clientCAFile)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}
