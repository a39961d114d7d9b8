//go:build !nokafka

package service

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/forward"
)

// TestKafkaDestinationTLSAndSASL: a kafka:// destination takes the TLS and
// SASL settings of -storage kafka as URL parameters; the password comes
// from an environment variable or a file, never from the URL, and every
// mistake is an error that names the parameter.
func TestKafkaDestinationTLSAndSASL(t *testing.T) {
	caFile := testCA(t)
	pwdFile := filepath.Join(t.TempDir(), "pwd")
	if err := os.WriteFile(pwdFile, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FWD_TEST_KAFKA_PWD", "from-env")
	t.Setenv("FWD_TEST_EMPTY", "")

	for _, c := range []struct {
		query          string
		tls            bool
		mech, user, pw string
	}{
		{query: "", tls: false},
		{query: "tls=true", tls: true},
		{query: "tls-ca=" + caFile, tls: true},
		{query: "insecure-skip-verify=true", tls: true},
		{query: "sasl-mechanism=SCRAM-SHA-512&sasl-username=otlp&sasl-password-env=FWD_TEST_KAFKA_PWD", mech: "SCRAM-SHA-512", user: "otlp", pw: "from-env"},
		{query: "tls=true&sasl-mechanism=PLAIN&sasl-username=otlp&sasl-password-file=" + pwdFile, tls: true, mech: "PLAIN", user: "otlp", pw: "from-file"},
	} {
		q, _ := url.ParseQuery(c.query)
		cfg, err := kafkaDestinationConfig("127.0.0.1:9092", q)
		if err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		if (cfg.TLS != nil) != c.tls {
			t.Errorf("%s: TLS %v, want %v", c.query, cfg.TLS != nil, c.tls)
		}
		if c.mech == "" && cfg.SASL != nil {
			t.Errorf("%s: SASL %+v, want none", c.query, cfg.SASL)
		}
		if c.mech != "" && (cfg.SASL == nil || cfg.SASL.Mechanism != c.mech || cfg.SASL.Username != c.user || cfg.SASL.Password != c.pw) {
			t.Errorf("%s: SASL %+v, want %s %s %s", c.query, cfg.SASL, c.mech, c.user, c.pw)
		}
		if len(q) != 0 {
			t.Errorf("%s: parameters left in the query: %v", c.query, q)
		}
	}

	for _, c := range []struct{ query, want string }{
		{"sasl-mechanism=PLAIN&sasl-username=u&sasl-password=secret", "sasl-password is not taken in the URL"},
		{"sasl-mechanism=PLAIN&sasl-username=u", "sasl-mechanism needs a password"},
		{"sasl-password-env=FWD_TEST_KAFKA_PWD", "need sasl-mechanism"},
		{"sasl-mechanism=PLAIN&sasl-username=u&sasl-password-env=FWD_TEST_EMPTY", `"FWD_TEST_EMPTY" is not set or empty`},
		{"sasl-mechanism=PLAIN&sasl-username=u&sasl-password-env=FWD_TEST_KAFKA_PWD&sasl-password-file=" + pwdFile, "use one"},
		{"sasl-mechanism=PLAIN&sasl-username=u&sasl-password-file=/nonexistent/pwd", "sasl-password-file: cannot read"},
		{"sasl-mechanism=GSSAPI&sasl-username=u&sasl-password-env=FWD_TEST_KAFKA_PWD", "sasl-mechanism=GSSAPI"},
		{"sasl-mechanism=PLAIN&sasl-password-env=FWD_TEST_KAFKA_PWD", "sasl-mechanism needs sasl-username"},
		{"sasl-username=u", "sasl-username needs sasl-mechanism"},
		{"tls=maybe", "tls=maybe"},
		{"tls-ca=/nonexistent/ca.crt", "bad tls-*"},
		{"tls-ca=", "tls-ca is empty"},
	} {
		q, _ := url.ParseQuery(c.query)
		_, err := kafkaDestinationConfig("127.0.0.1:9092", q)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.query, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: the error shows the password: %v", c.query, err)
		}
	}

	if _, err := forward.Parse("k=kafka://127.0.0.1:9092/?tls=true&signals=traces"); err != nil {
		t.Errorf("tls=true with a common parameter: %v", err)
	}
}

// TestKafkaDestinationLogLevel: the Kafka client of a kafka:// destination
// logs from warn up unless log-level says otherwise; a bad or repeated
// value is an error naming the parameter.
func TestKafkaDestinationLogLevel(t *testing.T) {
	for _, c := range []struct {
		query string
		want  slog.Level
		err   string
	}{
		{query: "", want: slog.LevelWarn},
		{query: "log-level=debug", want: slog.LevelDebug},
		{query: "log-level=info", want: slog.LevelInfo},
		{query: "log-level=error", want: slog.LevelError},
		{query: "log-level=loud", err: "bad log-level=loud"},
		{query: "log-level=info&log-level=warn", err: "log-level is given 2 times"},
	} {
		q, _ := url.ParseQuery(c.query)
		got, err := kafkaDestinationLogLevel(q)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one containing %q", c.query, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%s: %v, %v; want %v", c.query, got, err, c.want)
		case len(q) != 0:
			t.Errorf("%s: parameters left in the query: %v", c.query, q)
		}
	}
}

// testCA writes a self-signed CA certificate (PEM) and returns its path.
func testCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "otlp-lite test ca"},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour), BasicConstraintsValid: true,
		IsCA: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, &tmpl, &tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestKafkaBatchBound: the Kafka source's batch bound follows the largest
// request by default.
func TestKafkaBatchBound(t *testing.T) {
	for recv, want := range map[int]int{16 << 20: 64 << 20, 128 << 20: 128 << 20} {
		cfg := DefaultConfig()
		cfg.MaxRecvMsgSize = recv
		if got := cfg.kafkaBatchBytes(); got != want {
			t.Errorf("batch bound with -grpc-max-recv-msg-size %d: %d, want %d", recv, got, want)
		}
	}
}
