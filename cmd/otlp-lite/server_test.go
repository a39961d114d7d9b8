package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"flag"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/server"
)

// parseServeFlags parses args as serve's flags.
func parseServeFlags(t *testing.T, args ...string) serveConfig {
	t.Helper()
	var cfg serveConfig
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	registerServeFlags(newFlagSections(fs), &cfg)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestServerLimitFlagsDefault(t *testing.T) {
	cfg := parseServeFlags(t)
	cfg.deriveLimits()
	if got, want := cfg.limits, server.DefaultLimits(); got != want {
		t.Fatalf("limits without flags: %+v, want server.DefaultLimits() %+v", got, want)
	}
}

// TestServerWindowsDerived: the HTTP/2 windows left to their default are
// derived from the admission budget and the connection limit.
func TestServerWindowsDerived(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{nil, 256 << 10},
		{[]string{"-max-connections", "64"}, 2 << 20},
		{[]string{"-max-connections", "8"}, 4 << 20},
		{[]string{"-max-connections", "0"}, 256 << 10},
		{[]string{"-admission-request-limit", "4294967296"}, 1 << 20},
	} {
		cfg := parseServeFlags(t, tc.args...)
		cfg.deriveLimits()
		if cfg.limits.StreamWindow != tc.want || cfg.limits.ConnWindow != tc.want {
			t.Errorf("%v: windows %d/%d, want %d", tc.args, cfg.limits.StreamWindow, cfg.limits.ConnWindow, tc.want)
		}
	}
	cfg := parseServeFlags(t, "-max-connections", "64", "-http2-stream-window", "100000")
	cfg.deriveLimits()
	if cfg.limits.StreamWindow != 100000 || cfg.limits.ConnWindow != 2<<20 {
		t.Errorf("an explicit window is kept and the other derived: got %d/%d", cfg.limits.StreamWindow, cfg.limits.ConnWindow)
	}
}

// TestServerLimitFlags: each limit flag sets its own field, and zero stays
// zero (net/http's default or no limit, as before the server package).
func TestServerLimitFlags(t *testing.T) {
	got := parseServeFlags(t,
		"-http2-max-concurrent-streams", "1", "-http2-stream-window", "2", "-http2-conn-window", "3",
		"-http2-max-frame-size", "4", "-max-header-bytes", "5", "-read-header-timeout", "0",
		"-idle-timeout", "7s", "-write-timeout", "8s", "-max-connection-age", "9s", "-max-connection-age-grace", "10s",
		"-max-connections", "11").limits
	want := server.Limits{MaxConcurrentStreams: 1, StreamWindow: 2, ConnWindow: 3, MaxFrameSize: 4, MaxHeaderBytes: 5,
		ReadHeaderTimeout: 0, IdleTimeout: 7 * time.Second, WriteByteTimeout: 8 * time.Second,
		MaxConnectionAge: 9 * time.Second, MaxConnectionAgeGrace: 10 * time.Second, MaxConnections: 11}
	if got != want {
		t.Fatalf("limits %+v, want %+v", got, want)
	}
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
		cfg, err := serverTLSConfig(parseServeFlags(t, tc.args...).tls, nil)
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
