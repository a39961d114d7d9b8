package service

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tlsConfigOf is the Config that serve's TLS flags in args (flag, value
// pairs) make.
func tlsConfigOf(args []string) Config {
	c := DefaultConfig()
	for i := 0; i+1 < len(args); i += 2 {
		v := args[i+1]
		switch args[i] {
		case "-tls-cert":
			c.TLSCert = v
		case "-tls-key":
			c.TLSKey = v
		case "-tls-client-ca":
			c.TLSClientCA = v
		case "-tls-min-version":
			c.TLSMinVersion = v
		}
	}
	return c
}

func TestServerTLSFlags(t *testing.T) {
	dir := t.TempDir()
	crt, key := filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	pk, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &pk.PublicKey, pk)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(pk)
	os.WriteFile(crt, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)

	for _, tc := range []struct {
		args       []string
		minVersion uint16 // 0: no TLS
		err        string
	}{
		{nil, 0, ""},
		{[]string{"-tls-cert", crt, "-tls-key", key}, tls.VersionTLS12, ""},
		{[]string{"-tls-cert", crt, "-tls-key", key, "-tls-min-version", "1.3"}, tls.VersionTLS13, ""},
		{[]string{"-tls-cert", crt, "-tls-key", key, "-tls-min-version", "1.1"}, 0, "bad -tls-min-version"},
		{[]string{"-tls-cert", crt}, 0, "-tls-cert and -tls-key must be given together"},
		{[]string{"-tls-client-ca", crt}, 0, "-tls-client-ca needs -tls-cert and -tls-key"},
	} {
		cfg, err := tlsConfigOf(tc.args).serverTLS(nil)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.args, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case tc.minVersion == 0 && cfg != nil:
			t.Errorf("%q: TLS on without a certificate", tc.args)
		case tc.minVersion != 0 && (cfg == nil || cfg.MinVersion != tc.minVersion):
			t.Errorf("%q: config %+v, want MinVersion %x", tc.args, cfg, tc.minVersion)
		}
	}
}
