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
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/otlp-lite/otlp-lite/storage"
)

// testPKI is a CA and the certificates it issued, as PEM files.
type testPKI struct {
	dir     string
	caFile  string
	caCert  *x509.Certificate
	caKey   *ecdsa.PrivateKey
	caPool  *x509.CertPool
	serials int64
}

func newTestPKI(t *testing.T, name string) *testPKI {
	t.Helper()
	p := &testPKI{dir: t.TempDir(), serials: 1}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	if p.caCert, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	p.caKey = key
	p.caFile = filepath.Join(p.dir, "ca.pem")
	writePEM(t, p.caFile, "CERTIFICATE", der)
	p.caPool = x509.NewCertPool()
	p.caPool.AddCert(p.caCert)
	return p
}

// issue writes a certificate the CA signed (for 127.0.0.1 when server) and
// its key; it returns their files and the loaded pair.
func (p *testPKI) issue(t *testing.T, name string, server bool) (certFile, keyFile string, pair tls.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p.serials++
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(p.serials), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, key.Public(), p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(p.dir, name+".pem"), filepath.Join(p.dir, name+"-key.pem")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "PRIVATE KEY", kder)
	if pair, err = tls.LoadX509KeyPair(certFile, keyFile); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, pair
}

func writePEM(t *testing.T, file, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// runServeExpectingFailure runs `otlp-lite serve` with args and returns its
// output, failing the test unless it exits with an error within a minute.
func runServeExpectingFailure(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	full := append([]string{"serve", "-grpc-addr", "127.0.0.1:0", "-http-addr", "", "-admin-addr", "", "-data-dir", t.TempDir(), "-storage", "disk"}, args...)
	out, err := exec.CommandContext(ctx, serverBin, full...).CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("serve %s did not exit within a minute; output:\n%s", strings.Join(args, " "), out)
	}
	if err == nil {
		t.Fatalf("serve %s exited cleanly, want a refusal; output:\n%s", strings.Join(args, " "), out)
	}
	return string(out)
}

// TestKafkaConsumeTLS: otlp-lite serve -kafka-consume reads from a Kafka
// listener that speaks only TLS and requires a client certificate (an
// in-process kfake cluster), with the -kafka-tls-* flags the producer uses:
// the broker's certificate is verified against -kafka-tls-ca, ours is
// -kafka-tls-cert/-key. Every record produced is stored, equal to what was
// sent. A wrong CA, and a missing client certificate, make serve refuse to
// start with a message that names the cause, rather than retry in the log
// forever.
func TestKafkaConsumeTLS(t *testing.T) {
	pki := newTestPKI(t, "otlp-lite test CA")
	_, _, brokerPair := pki.issue(t, "broker", true)
	clientCert, clientKey, clientPair := pki.issue(t, "otlp-lite", false)
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(3),
		kfake.GroupMinSessionTimeout(time.Second),
		kfake.TLS(&tls.Config{Certificates: []tls.Certificate{brokerPair}, ClientAuth: tls.RequireAndVerifyClientCert,
			ClientCAs: pki.caPool, MinVersion: tls.VersionTLS12}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	addr := cluster.ListenAddrs()[0]

	// Produce over TLS as any client would.
	const topic = "tls_spans"
	pcl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.AllowAutoTopicCreation(),
		kgo.DialTLSConfig(&tls.Config{RootCAs: pki.caPool, Certificates: []tls.Certificate{clientPair}, MinVersion: tls.VersionTLS12}))
	if err != nil {
		t.Fatal(err)
	}
	const n = 20
	sent := produceSeqTraces(t, pcl, topic, n, 3)

	consume := []string{"-kafka-consume", addr, "-kafka-consume-topic-traces", topic, "-kafka-consume-topic-metrics", "",
		"-kafka-consume-topic-logs", "", "-kafka-consume-topic-profiles", "", "-kafka-consume-session-timeout", "2s"}
	dataDir := t.TempDir()
	admin := freeAddr(t)
	srv := startServer(t, dataDir, append([]string{"-admin-addr", admin, "-kafka-tls-ca", pki.caFile,
		"-kafka-tls-cert", clientCert, "-kafka-tls-key", clientKey}, consume...)...)
	waitScrape(t, admin, `otlplite_kafka_consume_records_total{topic="`+topic+`"}`, strconv.Itoa(n))
	srv.stop()
	matchMessages(t, "traces over TLS", sent, scanStore(t, dataDir, storage.Traces, func() *coltracepb.ExportTraceServiceRequest { return new(coltracepb.ExportTraceServiceRequest) }))

	// A CA that did not sign the broker's certificate.
	other := newTestPKI(t, "another CA")
	out := runServeExpectingFailure(t, append([]string{"-kafka-tls-ca", other.caFile, "-kafka-tls-cert", clientCert, "-kafka-tls-key", clientKey}, consume...)...)
	if !strings.Contains(out, "cannot start the Kafka source") || !strings.Contains(out, "certificate signed by unknown authority") {
		t.Errorf("serve with the wrong -kafka-tls-ca: want a refusal naming the unknown authority, got:\n%s", out)
	}
	t.Logf("wrong CA: %s", lastLine(out))
	// The right CA but no client certificate: the broker refuses us.
	out = runServeExpectingFailure(t, append([]string{"-kafka-tls-ca", pki.caFile}, consume...)...)
	if !strings.Contains(out, "cannot start the Kafka source") || !strings.Contains(out, "certificate") {
		t.Errorf("serve without -kafka-tls-cert against an mTLS broker: want a refusal about the certificate, got:\n%s", out)
	}
	t.Logf("no client certificate: %s", lastLine(out))
}

// produceSeqTraces produces n requests of spansPer spans (seqRequest) to
// topic, each acknowledged, closes cl, and returns what it sent.
func produceSeqTraces(t *testing.T, cl *kgo.Client, topic string, n, spansPer int) []*coltracepb.ExportTraceServiceRequest {
	t.Helper()
	defer cl.Close()
	var sent []*coltracepb.ExportTraceServiceRequest
	for i := range n {
		v := seqRequest(i, spansPer)
		m := new(coltracepb.ExportTraceServiceRequest)
		if err := proto.Unmarshal(v, m); err != nil {
			t.Fatal(err)
		}
		sent = append(sent, m)
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: topic, Value: v}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	return sent
}

// lastLine is the last non-empty line of out.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}

// TestKafkaConsumeSASLBroker: against the real broker's SASL_PLAINTEXT
// listener (OTLP_LITE_KAFKA_SASL_BROKERS, user otlp/otlp-secret), serve
// -kafka-consume with the -kafka-sasl-* flags the producer uses stores what
// was produced; a wrong password refuses start with the broker's reason.
func TestKafkaConsumeSASLBroker(t *testing.T) {
	broker := os.Getenv("OTLP_LITE_KAFKA_SASL_BROKERS")
	if broker == "" {
		t.Skip("OTLP_LITE_KAFKA_SASL_BROKERS not set (make kafka-test sets it)")
	}
	sfx := strconv.FormatInt(time.Now().UnixNano(), 10)
	topic := "sasl_spans_" + sfx
	pcl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.AllowAutoTopicCreation(),
		kgo.SASL(plain.Auth{User: "otlp", Pass: "otlp-secret"}.AsMechanism()))
	if err != nil {
		t.Fatal(err)
	}
	const n = 10
	sent := produceSeqTraces(t, pcl, topic, n, 2)
	consume := []string{"-kafka-consume", broker, "-kafka-consume-group", "sasl_" + sfx, "-kafka-consume-topic-traces", topic,
		"-kafka-consume-topic-metrics", "", "-kafka-consume-topic-logs", "", "-kafka-consume-topic-profiles", "",
		"-kafka-consume-session-timeout", "6s", "-kafka-sasl-mechanism", "SCRAM-SHA-512", "-kafka-sasl-username", "otlp"}
	dataDir, admin := t.TempDir(), freeAddr(t)
	srv := startServer(t, dataDir, append([]string{"-admin-addr", admin, "-kafka-sasl-password", "otlp-secret"}, consume...)...)
	waitScrape(t, admin, `otlplite_kafka_consume_records_total{topic="`+topic+`"}`, strconv.Itoa(n))
	srv.stop()
	matchMessages(t, "traces over SASL", sent, scanStore(t, dataDir, storage.Traces, func() *coltracepb.ExportTraceServiceRequest { return new(coltracepb.ExportTraceServiceRequest) }))

	out := runServeExpectingFailure(t, append([]string{"-kafka-sasl-password", "wrong"}, consume...)...)
	if !strings.Contains(out, "cannot start the Kafka source") || !strings.Contains(strings.ToLower(out), "authentication") {
		t.Errorf("serve with a wrong SASL password: want a refusal naming the authentication failure, got:\n%s", out)
	}
	t.Logf("wrong password: %s", lastLine(out))
}
