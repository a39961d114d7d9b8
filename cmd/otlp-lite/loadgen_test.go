package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// Tests of the client tools' safety and their connection flags and
// summary: loadgen and replay run as the real binary against `otlp-lite
// serve` on free loopback ports, secured with TLS, mTLS and a bearer token
// where the test says so.

// announceRE reads loadgen's line before it starts: how many requests,
// about how many bytes.
var announceRE = regexp.MustCompile(`^loadgen: about to send traces to (\S+): (\d+) requests \(~([\d.]+) (B|kB|MB|GB)\)`)

// parseAnnounce returns the requests and bytes loadgen announced.
func parseAnnounce(t *testing.T, stderr string) (endpoint string, requests int, bytes float64) {
	t.Helper()
	first, _, _ := strings.Cut(stderr, "\n")
	m := announceRE.FindStringSubmatch(first)
	if m == nil {
		t.Fatalf("the first line of loadgen is not its announcement:\n%s", stderr)
	}
	requests, _ = strconv.Atoi(m[2])
	bytes, _ = strconv.ParseFloat(m[3], 64)
	bytes *= map[string]float64{"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9}[m[4]]
	return m[1], requests, bytes
}

// readSummary reads a -summary-json file.
func readSummary(t *testing.T, path string) clientSummary {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s clientSummary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("summary JSON %q: %v", b, err)
	}
	return s
}

// textSummaryRE reads the text summary's requests line.
var textSummaryRE = regexp.MustCompile(`(?m)^  requests:  (\d+) sent to \S+ in [\d.]+s: (\d+) acknowledged, (\d+) refused for good, (\d+) dropped$`)

// TestLoadgenDefaultIsBounded: loadgen with nothing but -endpoint sends
// loadgenDefaultBatches requests and stops; it announces that, and about
// as many bytes as the receiver then stores, before it starts, and ends
// with a text summary and a JSON one that agree with what was stored.
func TestLoadgenDefaultIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("runs servers")
	}
	dir := t.TempDir()
	srv := startServe(t, dir, "")
	summary := filepath.Join(t.TempDir(), "summary.json")
	p := startCmd(t, "loadgen", "-endpoint", srv.addr, "-summary-json", summary)
	if code := p.exitCode(t); code != 0 {
		t.Fatalf("loadgen exited %d:\n%s", code, p.stderr.String())
	}
	srv.stop(t)

	var records, items int
	var stored int64
	if err := disk.Scan(dir, storage.Traces, func(r disk.Record) error {
		records++
		items += r.Items
		stored += int64(len(r.Data))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if records != loadgenDefaultBatches || items != loadgenDefaultBatches*500 {
		t.Fatalf("the default run stored %d requests of %d spans, want %d of %d", records, items, loadgenDefaultBatches, loadgenDefaultBatches*500)
	}
	endpoint, requests, announced := parseAnnounce(t, p.stderr.String())
	if endpoint != srv.addr || requests != loadgenDefaultBatches {
		t.Fatalf("announced %d requests to %s, want %d to %s", requests, endpoint, loadgenDefaultBatches, srv.addr)
	}
	if d := announced/float64(stored) - 1; d < -0.01 || d > 0.01 {
		t.Fatalf("announced ~%.0f bytes, %d stored", announced, stored)
	}

	m := textSummaryRE.FindStringSubmatch(p.stdout.String())
	if m == nil || m[1] != "100" || m[2] != "100" || m[3] != "0" || m[4] != "0" {
		t.Fatalf("text summary:\n%s", p.stdout.String())
	}
	for _, s := range []string{"delivered: 50000 items", "items/s", "MB/s", "latency:   p50 ", "retries:   0", "refusals:  none"} {
		if !strings.Contains(p.stdout.String(), s) {
			t.Fatalf("text summary without %q:\n%s", s, p.stdout.String())
		}
	}
	s := readSummary(t, summary)
	if s.Requests != 100 || s.Acknowledged != 100 || s.Items != 50000 || s.Bytes != stored || s.Retries != 0 || len(s.Refusals) != 0 {
		t.Fatalf("JSON summary %+v, want 100 requests of 500 spans, %d bytes (what the server stored), no retry or refusal", s, stored)
	}
	l := s.Latency
	if l.Count != 100 || l.P50 <= 0 || l.P50 > l.P90 || l.P90 > l.P99 || l.P99 > l.Max {
		t.Fatalf("latency percentiles %+v", l)
	}
	if s.ItemsPerSec <= 0 || s.MBPerSec <= 0 {
		t.Fatalf("rates %+v", s)
	}
}

// testPKI is a CA and the certificates it issued, as PEM files in dir.
type testPKI struct {
	dir    string
	caCert *x509.Certificate
	caKey  *ecdsa.PrivateKey
}

// newTestPKI makes a CA in dir: ca.crt.
func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	p := &testPKI{dir: t.TempDir()}
	p.caCert, p.caKey = p.issue(t, "ca", true)
	return p
}

// issue writes name.crt and name.key: a CA certificate, or a leaf for
// 127.0.0.1 that serves as a server's and a client's, signed by p's CA.
func (p *testPKI) issue(t *testing.T, name string, ca bool) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: "otlp-lite test " + name},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(24 * time.Hour), BasicConstraintsValid: true}
	parent, signer := &tmpl, key
	if ca {
		tmpl.IsCA, tmpl.KeyUsage = true, x509.KeyUsageCertSign
	} else {
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		parent, signer = p.caCert, p.caKey
	}
	der, err := x509.CreateCertificate(rand.Reader, &tmpl, parent, key.Public(), signer)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for file, block := range map[string]*pem.Block{name + ".crt": {Type: "CERTIFICATE", Bytes: der}, name + ".key": {Type: "PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(p.path(file), pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cert, _ := x509.ParseCertificate(der)
	return cert, key
}

func (p *testPKI) path(file string) string { return filepath.Join(p.dir, file) }

// TestClientToolsSecured: loadgen (every mode) and replay (every protocol)
// deliver to a serve that wants TLS with a client certificate and a bearer
// token, given -tls-ca, -tls-cert, -tls-key, -token-file and a -header;
// with a wrong token, each run is refused, exits 1 and reports the
// refusals by reason: gRPC UNAUTHENTICATED, HTTP 401.
func TestClientToolsSecured(t *testing.T) {
	if testing.Short() {
		t.Skip("runs servers")
	}
	pki := newTestPKI(t)
	pki.issue(t, "server", false)
	pki.issue(t, "client", false)
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("# the load test's\nsecret-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	fillSource(t, src, "sec", 4, 2)
	srv := startServe(t, t.TempDir(), "", "-tls-cert", pki.path("server.crt"), "-tls-key", pki.path("server.key"),
		"-tls-client-ca", pki.path("ca.crt"), "-auth-token-file", tokens)
	secured := []string{"-endpoint", srv.addr, "-tls-ca", pki.path("ca.crt"), "-tls-cert", pki.path("client.crt"), "-tls-key", pki.path("client.key")}
	run := func(t *testing.T, wantCode int, args ...string) (*cmdProc, clientSummary) {
		t.Helper()
		summary := filepath.Join(t.TempDir(), "summary.json")
		p := startCmd(t, append(append(args, secured...), "-summary-json", summary)...)
		if code := p.exitCode(t); code != wantCode {
			t.Fatalf("%q exited %d, want %d:\n%s\n%s", args, code, wantCode, p.stdout.String(), p.stderr.String())
		}
		return p, readSummary(t, summary)
	}
	for _, mode := range []string{"unary", "unary-async", "stream"} {
		t.Run("loadgen "+mode, func(t *testing.T) {
			p, s := run(t, 0, "loadgen", "-mode", mode, "-batches", "7", "-spans-per-batch", "3", "-token-file", tokens, "-header", "x-scope:loadtest", "-compression", "zstd")
			if _, n, _ := parseAnnounce(t, p.stderr.String()); n != 7 || !strings.Contains(p.stderr.String(), "over TLS (CA "+pki.path("ca.crt")+", client certificate), bearer token, 1 extra header(s), compression zstd") {
				t.Fatalf("announcement:\n%s", p.stderr.String())
			}
			if s.Acknowledged != 7 || s.Items != 21 || len(s.Refusals) != 0 {
				t.Fatalf("summary %+v, want 7 requests of 3 spans acknowledged", s)
			}
			_, s = run(t, 1, "loadgen", "-mode", mode, "-batches", "3", "-spans-per-batch", "1", "-token", "wrong")
			if s.Acknowledged != 0 || s.Failed != 3 || len(s.Refusals) == 0 || s.Refusals[0].Reason != "gRPC UNAUTHENTICATED" || s.Refusals[0].Count < 3 {
				t.Fatalf("refused run's summary %+v, want 3 requests refused as gRPC UNAUTHENTICATED", s)
			}
		})
	}
	for _, protocol := range []string{"grpc", "http", "stream"} {
		t.Run("replay "+protocol, func(t *testing.T) {
			p, s := run(t, 0, "replay", "-data-dir", src, "-protocol", protocol, "-token-file", tokens, "-header", "x-scope:replay")
			if s.Acknowledged != 6 || s.Items != 9 || s.Latency.Count != 6 || s.Bytes == 0 || len(s.Refusals) != 0 {
				t.Fatalf("summary %+v, want 6 records of 9 items acknowledged", s)
			}
			if !strings.Contains(p.stdout.String(), "replayed 6 records (9 items)") || !textSummaryRE.MatchString(p.stdout.String()) {
				t.Fatalf("text summary:\n%s", p.stdout.String())
			}
			// A wrong token refuses the client, not the data: replay stops
			// at the first record of each signal.
			_, s = run(t, 1, "replay", "-data-dir", src, "-protocol", protocol, "-token", "wrong")
			want := map[string]string{"grpc": "gRPC UNAUTHENTICATED", "http": "HTTP 401", "stream": "gRPC UNAUTHENTICATED"}[protocol]
			if s.Acknowledged != 0 || len(s.Refusals) == 0 || s.Refusals[0].Reason != want || s.Refusals[0].Last == "" {
				t.Fatalf("refused replay's summary %+v, want refusals %s with their message", s, want)
			}
		})
	}
}

// TestLoadgenRetriesReported: against a receiver that answers UNAVAILABLE
// (RetryInfo 20ms) until it is opened, loadgen retries, delivers once it
// is, and reports the retries and the refusals by reason.
func TestLoadgenRetriesReported(t *testing.T) {
	if testing.Short() {
		t.Skip("runs servers")
	}
	sink := newGateSink(0)
	addr := startGateTarget(t, sink)
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- loadgen([]string{"-endpoint", addr, "-batches", "4", "-spans-per-batch", "2", "-concurrency", "2"}, &stdout, &stderr)
	}()
	sink.waitRefused(t, 4, storage.Traces)
	sink.open()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("loadgen exited %d:\n%s", code, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("loadgen did not finish:\n%s", stderr.String())
	}
	out := stdout.String()
	m := textSummaryRE.FindStringSubmatch(out)
	if m == nil || m[2] != "4" {
		t.Fatalf("summary:\n%s", out)
	}
	if strings.Contains(out, "retries:   0\n") || !regexp.MustCompile(`(?m)^    gRPC UNAVAILABLE +\d+  ".+"$`).MatchString(out) {
		t.Fatalf("the summary does not show the retries and the UNAVAILABLE refusals:\n%s", out)
	}
}

// TestClientFlagsRefused: a value or a combination that cannot work is a
// one-line error at parse time, exit status 2, before anything is sent.
func TestClientFlagsRefused(t *testing.T) {
	dir := t.TempDir()
	bearerFile := filepath.Join(dir, "bearer")
	os.WriteFile(bearerFile, []byte("Bearer abc\n"), 0o600)
	emptyFile := filepath.Join(dir, "empty")
	os.WriteFile(emptyFile, []byte("# nothing\n\n"), 0o600)
	notPEM := filepath.Join(dir, "ca.crt")
	os.WriteFile(notPEM, []byte("not a certificate"), 0o600)
	for _, tc := range []struct {
		replay bool
		args   []string
		want   string
	}{
		{false, []string{"-batches", "0"}, "-batches 0 needs -duration"},
		{false, []string{"-duration", "-1s"}, "cannot be negative"},
		{false, []string{"-rate", "-5"}, "cannot be negative"},
		{false, []string{"-max-pending", "9"}, "-max-pending applies to -mode stream only"},
		{false, []string{"-mode", "unary-async", "-rebalance-requests", "9"}, "applies to -mode stream only"},
		{false, []string{"-mode", "batch"}, "-mode must be"},
		{false, []string{"-concurrency", "0"}, "-concurrency 0"},
		{false, []string{"-concurrency", "5000"}, "-concurrency 5000"},
		{false, []string{"-spans-per-batch", "1000000"}, "more than receivers accept"},
		{false, []string{"-attrs", "1000", "-spans-per-batch", "20000"}, "more than receivers accept"},
		{false, []string{"-pregenerate", "4096", "-spans-per-batch", "20000", "-attrs", "10"}, "of memory"},
		{false, []string{"-compression", "brotli"}, `unknown -compression "brotli"`},
		{false, []string{"-tls", "-insecure"}, "contradict"},
		{false, []string{"-insecure", "-tls-ca", notPEM}, "-tls-ca needs TLS"},
		{false, []string{"-tls-ca", notPEM}, "holds no PEM certificate"},
		{false, []string{"-tls-ca", filepath.Join(dir, "missing")}, "cannot read the CA file"},
		{false, []string{"-tls-cert", notPEM}, "-tls-cert and -tls-key must be given together"},
		{false, []string{"-tls-insecure-skip-verify", "-tls-server-name", "x"}, "verifies nothing"},
		{false, []string{"-token", "a", "-token-file", bearerFile}, "give one"},
		{false, []string{"-token", "Bearer abc"}, `starts with "Bearer "`},
		{false, []string{"-token", "a b"}, "cannot travel in an HTTP header"},
		{false, []string{"-token-file", emptyFile}, "holds no token"},
		{false, []string{"-header", "novalue"}, "is not NAME:VALUE"},
		{false, []string{"-header", "bad name:x"}, "not a valid header name"},
		{false, []string{"-header", "content-type:text/plain"}, "set by the client itself"},
		{false, []string{"-header", "grpc-timeout:1S"}, "set by the client itself"},
		{false, []string{"-header", "authorization:Bearer x", "-token", "y"}, "give one"},
		{false, []string{"-nope"}, "flag provided but not defined"},
		{true, []string{"-token-file", bearerFile}, `starts with "Bearer "`},
		{true, []string{"-insecure", "-tls-cert", notPEM, "-tls-key", notPEM}, "-tls-cert needs TLS"},
		{true, []string{"-compression", "zstd"}, `want gzip or none`},
	} {
		var stdout, stderr bytes.Buffer
		var code int
		if tc.replay {
			code = replayContext(context.Background(), append([]string{"-endpoint", "127.0.0.1:1", "-data-dir", dir}, tc.args...), &stdout, &stderr)
		} else {
			code = loadgen(append([]string{"-endpoint", "127.0.0.1:1"}, tc.args...), &stdout, &stderr)
		}
		if code != 2 || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), tc.want) || stdout.Len() != 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and one line saying %q", tc.args, code, stdout.String(), stderr.String(), tc.want)
		}
	}
}
