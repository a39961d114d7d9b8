package server

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// TLSFiles names the PEM files of a TLS configuration built by LoadTLS.
type TLSFiles struct {
	// CertFile and KeyFile are the server's certificate (chain) and private
	// key; both are required.
	CertFile, KeyFile string
	// ClientCAFile, when set, holds the CA certificates that client
	// certificates must be signed by: clients without one are refused
	// (mTLS).
	ClientCAFile string
	// MinVersion is the lowest TLS version accepted; zero means TLS 1.2.
	MinVersion uint16
	// OnReload, when set, is called after each attempt to reload a changed
	// certificate, with nil or the reason the old one stays in use.
	OnReload func(error)
}

// LoadTLS returns a TLS configuration for Config.TLS serving the
// certificate in f.CertFile and f.KeyFile, reloaded when either file
// changes, so that a rotated certificate (cert-manager, ACME) is picked up
// without a restart. The files are checked at most once a second, on
// handshakes; a broken new pair keeps the old one in use. It fails if the
// files cannot be loaded now.
func LoadTLS(f TLSFiles) (*tls.Config, error) {
	if f.CertFile == "" || f.KeyFile == "" {
		return nil, errors.New("server: TLS needs a certificate and a key file")
	}
	cr, err := newCertReloader(f.CertFile, f.KeyFile, f.OnReload)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{GetCertificate: cr.GetCertificate, MinVersion: f.MinVersion}
	if cfg.MinVersion == 0 {
		cfg.MinVersion = tls.VersionTLS12
	}
	if f.ClientCAFile != "" {
		pem, err := os.ReadFile(f.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("cannot read client CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("no certificates in client CA file %s", f.ClientCAFile)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// certReloader serves the certificate in certFile/keyFile and reloads it
// when either file's modification time changes, checking at most once a
// second.
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
