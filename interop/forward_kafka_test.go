package interop

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TestForwardKafka: otlp-lite forwards from its disk log to Kafka (the
// franz-go project's kfake broker, speaking the Kafka protocol) that is not
// running yet: clients are acknowledged after the local fsync, and once
// the broker comes up every acknowledged span reaches the topic.
func TestForwardKafka(t *testing.T) {
	addr := freeAddr(t)
	_, portStr, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portStr)
	dataDir := t.TempDir()
	srv, admin := startForwarder(t, dataDir, "k=kafka://"+addr+"/?signals=traces&topic-traces=fwd_spans&retry-initial-backoff=50ms&retry-max-backoff=500ms")
	want := sendFwdSpans(t, srv, "kafka", 20)
	waitScrape(t, admin, `otlplite_forward_state{destination="k",state="backing_off"}`, "1")

	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port), kfake.AllowAutoTopicCreation())
	if err != nil {
		t.Fatalf("cannot start kfake on %s: %v", addr, err)
	}
	defer c.Close()
	waitScrape(t, admin, `otlplite_forward_lag_records{destination="k",signal="traces"}`, "0")
	srv.stop()

	waitKafkaSpans(t, want, "fwd_spans", kgo.SeedBrokers(addr))
}

// waitKafkaSpans reads topic with a franz-go client (opts: its brokers and
// connection) until every span id of want arrived, failing after a
// generous deadline.
func waitKafkaSpans(t *testing.T, want map[string]bool, topic string, opts ...kgo.Opt) {
	t.Helper()
	cl, err := kgo.NewClient(append(opts, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got := map[string]int{}
	deadline := time.Now().Add(60 * time.Second)
	for len(got) < len(want) && time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		fetches := cl.PollFetches(ctx)
		cancel()
		fetches.EachRecord(func(r *kgo.Record) {
			var req coltracepb.ExportTraceServiceRequest
			if err := proto.Unmarshal(r.Value, &req); err != nil {
				t.Errorf("a Kafka record is not an ExportTraceServiceRequest: %v", err)
				return
			}
			for _, rs := range req.ResourceSpans {
				for _, ss := range rs.ScopeSpans {
					for _, sp := range ss.Spans {
						for _, kv := range sp.Attributes {
							if kv.Key == fwdIDKey {
								got[kv.Value.GetStringValue()]++
							}
						}
					}
				}
			}
		})
	}
	for id := range want {
		if got[id] == 0 {
			t.Fatalf("span %s never reached Kafka topic %s (%d of %d did)", id, topic, len(got), len(want))
		}
	}
}

// sendFwdSpans sends n requests of 3 spans to srv, ids prefix0-0 ..., and
// returns the ids.
func sendFwdSpans(t *testing.T, srv *server, prefix string, n int) map[string]bool {
	t.Helper()
	conn := srv.dial(t)
	want := map[string]bool{}
	for i := range n {
		p := fmt.Sprintf("%s%d", prefix, i)
		if err := exportTraces(conn, fwdRequest(p, 3)); err != nil {
			t.Fatal(err)
		}
		for j := range 3 {
			want[fmt.Sprintf("%s-%d", p, j)] = true
		}
	}
	return want
}

// TestForwardKafkaTLSSASL: a kafka:// destination over TLS with SCRAM
// authentication (the franz-go project's kfake broker with TLS and SASL
// on), configured by URL parameters, the password read from a file; a
// second destination with a wrong password (from an environment
// variable) is refused by the broker, backs off and delivers nothing,
// and the effective configuration shows neither password nor parameters.
func TestForwardKafkaTLSSASL(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := selfSignedCert(t, dir)
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	caPEM, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	pool.AppendCertsFromPEM(caPEM)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(),
		kfake.TLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "otlp", "otlp-secret"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	pwdFile := filepath.Join(dir, "kafka-password")
	if err := os.WriteFile(pwdFile, []byte("otlp-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FWD_KAFKA_BAD_PASSWORD", "not-the-secret")
	common := "/?signals=traces&retry-initial-backoff=50ms&retry-max-backoff=500ms&tls-ca=" + certFile + "&sasl-mechanism=SCRAM-SHA-256&sasl-username=otlp"
	srv, admin := startForwarder(t, t.TempDir(),
		"k=kafka://"+addr+common+"&topic-traces=fwd_tls_sasl&sasl-password-file="+pwdFile,
		"bad=kafka://"+addr+common+"&topic-traces=fwd_bad&sasl-password-env=FWD_KAFKA_BAD_PASSWORD")
	want := sendFwdSpans(t, srv, "sasl", 10)
	waitScrape(t, admin, `otlplite_forward_lag_records{destination="k",signal="traces"}`, "0")
	waitScrape(t, admin, `otlplite_forward_state{destination="bad",state="backing_off"}`, "1")
	if v := scrape(t, admin, `otlplite_forward_sent_records_total{destination="bad",signal="traces"}`); v != "0" {
		t.Fatalf("the destination with the wrong password sent %s records", v)
	}
	resp, err := http.Get("http://" + admin + "/config")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	cfg := string(body)
	if !strings.Contains(cfg, "kafka://"+addr) {
		t.Fatalf("/config lacks the destinations:\n%s", cfg)
	}
	// The URL is shown as given: where the password is (a file, a
	// variable) and who logs in, never the password (README, Secrets).
	for _, secret := range []string{"otlp-secret", "not-the-secret"} {
		if strings.Contains(cfg, secret) {
			t.Fatalf("/config shows %q:\n%s", secret, cfg)
		}
	}
	if !strings.Contains(cfg, "sasl-password-env=FWD_KAFKA_BAD_PASSWORD") {
		t.Fatalf("/config does not say where the password is:\n%s", cfg)
	}
	srv.stop()
	waitKafkaSpans(t, want, "fwd_tls_sasl", kgo.SeedBrokers(addr),
		kgo.DialTLSConfig(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}),
		kgo.SASL(scram.Auth{User: "otlp", Pass: "otlp-secret"}.AsSha256Mechanism()))
}

// TestForwardKafkaSASLBroker: the same against the real broker's
// SASL_PLAINTEXT listener (OTLP_LITE_KAFKA_SASL_BROKERS, user
// otlp/otlp-secret, set by `make kafka-test`), SCRAM-SHA-512, the password
// from an environment variable.
func TestForwardKafkaSASLBroker(t *testing.T) {
	broker := os.Getenv("OTLP_LITE_KAFKA_SASL_BROKERS")
	if broker == "" {
		t.Skip("OTLP_LITE_KAFKA_SASL_BROKERS not set (make kafka-test sets it)")
	}
	t.Setenv("FWD_KAFKA_PASSWORD", "otlp-secret")
	topic := fmt.Sprintf("fwd_sasl_%d", time.Now().UnixNano())
	srv, admin := startForwarder(t, t.TempDir(), "k=kafka://"+broker+"/?signals=traces&topic-traces="+topic+
		"&sasl-mechanism=SCRAM-SHA-512&sasl-username=otlp&sasl-password-env=FWD_KAFKA_PASSWORD&retry-initial-backoff=50ms&retry-max-backoff=500ms")
	want := sendFwdSpans(t, srv, "broker", 10)
	waitScrape(t, admin, `otlplite_forward_lag_records{destination="k",signal="traces"}`, "0")
	srv.stop()
	waitKafkaSpans(t, want, topic, kgo.SeedBrokers(broker),
		kgo.SASL(scram.Auth{User: "otlp", Pass: "otlp-secret"}.AsSha512Mechanism()))
}

// selfSignedCert writes a certificate for 127.0.0.1 that is its own CA,
// and its key, into dir.
func selfSignedCert(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "otlp-lite kafka test"},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, &tmpl, &tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "kafka.crt"), filepath.Join(dir, "kafka.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
