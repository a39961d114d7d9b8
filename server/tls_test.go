package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"
)

// writeCert writes a certificate signed by parent (self-signed when nil)
// and returns it with its key.
func writeCert(t *testing.T, dir, name string, isCA bool, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  isCA,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	os.WriteFile(filepath.Join(dir, name+".crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	kb, _ := x509.MarshalECPrivateKey(key)
	os.WriteFile(filepath.Join(dir, name+".key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return cert, key
}

func TestTLSMutual(t *testing.T) {
	dir := t.TempDir()
	ca, caKey := writeCert(t, dir, "ca", true, nil, nil)
	writeCert(t, dir, "server", false, ca, caKey)
	writeCert(t, dir, "client", false, ca, caKey)
	otherCA, otherKey := writeCert(t, dir, "other-ca", true, nil, nil)
	writeCert(t, dir, "stranger", false, otherCA, otherKey)

	cfg, err := LoadTLS(TLSFiles{CertFile: filepath.Join(dir, "server.crt"), KeyFile: filepath.Join(dir, "server.key"),
		ClientCAFile: filepath.Join(dir, "ca.crt")})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MinVersion != tls.VersionTLS12 {
		t.Fatalf("MinVersion %x, want TLS 1.2 by default", cfg.MinVersion)
	}
	addr := serveTCP(t, okHandler, Config{TLS: cfg, Limits: testLimits()})
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	client := func(name string) *http.Client {
		tc := &tls.Config{RootCAs: roots}
		if name != "" {
			pair, err := tls.LoadX509KeyPair(filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key"))
			if err != nil {
				t.Fatal(err)
			}
			tc.Certificates = []tls.Certificate{pair}
		}
		return &http.Client{Transport: &http.Transport{TLSClientConfig: tc, ForceAttemptHTTP2: true}}
	}
	if got, err := fetch(client("client"), "https://"+addr+"/"); err != nil || got != "HTTP/2.0" {
		t.Fatalf("client with a good certificate: %q, %v; want HTTP/2.0 by ALPN", got, err)
	}
	if _, err := fetch(client(""), "https://"+addr+"/"); err == nil {
		t.Fatal("client without a certificate was served")
	}
	if _, err := fetch(client("stranger"), "https://"+addr+"/"); err == nil {
		t.Fatal("client with a certificate from another CA was served")
	}
}

func TestTLSLoadErrors(t *testing.T) {
	dir := t.TempDir()
	ca, caKey := writeCert(t, dir, "ca", true, nil, nil)
	writeCert(t, dir, "server", false, ca, caKey)
	notPEM := filepath.Join(dir, "not.pem")
	os.WriteFile(notPEM, []byte("not a certificate"), 0o600)
	crt, key := filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	for name, f := range map[string]TLSFiles{
		"no key":               {CertFile: crt},
		"missing cert":         {CertFile: filepath.Join(dir, "missing.crt"), KeyFile: key},
		"key is not PEM":       {CertFile: crt, KeyFile: notPEM},
		"missing client CA":    {CertFile: crt, KeyFile: key, ClientCAFile: filepath.Join(dir, "missing.crt")},
		"client CA not PEM":    {CertFile: crt, KeyFile: key, ClientCAFile: notPEM},
		"cert and key swapped": {CertFile: key, KeyFile: crt},
	} {
		if _, err := LoadTLS(f); err == nil {
			t.Errorf("%s: LoadTLS succeeded", name)
		}
	}
}

// TestTLSCertificateReload: a changed pair is loaded on the first handshake
// a second or more after the last check, and a broken one keeps the old
// certificate in use.
func TestTLSCertificateReload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		ca, caKey := writeCert(t, dir, "ca", true, nil, nil)
		writeCert(t, dir, "server", false, ca, caKey)
		crt, key := filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
		var reloads []error
		r, err := newCertReloader(crt, key, func(err error) { reloads = append(reloads, err) })
		if err != nil {
			t.Fatal(err)
		}
		// touch gives both files a new modification time: the file system's
		// clock may not have moved since they were written.
		mtime := time.Now()
		touch := func() {
			mtime = mtime.Add(time.Hour)
			for _, f := range []string{crt, key} {
				if err := os.Chtimes(f, mtime, mtime); err != nil {
					t.Fatal(err)
				}
			}
		}
		first, _ := r.GetCertificate(nil)

		writeCert(t, dir, "server", false, ca, caKey)
		touch()
		if c, _ := r.GetCertificate(nil); c != first || len(reloads) != 0 {
			t.Fatal("files checked again within a second")
		}
		time.Sleep(time.Second)
		second, _ := r.GetCertificate(nil)
		if second == first || len(reloads) != 1 || reloads[0] != nil {
			t.Fatalf("certificate not reloaded a second later (reloads: %v)", reloads)
		}

		os.WriteFile(key, []byte("broken"), 0o600)
		touch()
		time.Sleep(time.Second)
		if c, _ := r.GetCertificate(nil); c != second || len(reloads) != 2 || reloads[1] == nil {
			t.Fatalf("broken pair: reloads %v, certificate kept: %v", reloads, c == second)
		}
	})
}
