package deploy

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	buildDir  string
	builtBin  string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// otlpLiteBinary returns the otlp-lite binary the tests run: $OTLP_LITE_BIN
// (`make deploy-test` builds bin/otlp-lite first), or one built from the
// repository once for the whole test binary.
func otlpLiteBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("OTLP_LITE_BIN"); bin != "" {
		abs, err := filepath.Abs(bin)
		if err != nil {
			t.Fatal(err)
		}
		return abs
	}
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "otlp-lite-deploy-test"); buildErr != nil {
			return
		}
		builtBin = filepath.Join(buildDir, "otlp-lite")
		cmd := exec.Command("go", "build", "-o", builtBin, "./cmd/otlp-lite")
		cmd.Dir = ".."
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// hasKafka reports whether bin was built with Kafka: its serve flags
// include -kafka-brokers.
func hasKafka(t *testing.T, bin string) bool {
	out, err := exec.Command(bin, "serve", "-h").CombinedOutput()
	if err != nil {
		t.Fatalf("%s serve -h: %v\n%s", bin, err, out)
	}
	return strings.Contains(string(out), "-kafka-brokers")
}

// urlHost matches the host:port of each URL in a -forward list.
var urlHost = regexp.MustCompile(`(://)[^/?\s]+`)

// servingLine is the receiver's start-up log line with the bound addresses.
// (http_addr is left out when it is the gRPC listener, as with two :0s).
var servingLine = regexp.MustCompile(`msg="otlp-lite serving" grpc_addr=(\S+) .*?admin_addr=(\S+)`)

// TestChartEnvStartsTheReceiver runs the real binary with nothing but the
// environment the chart renders (default values, and the tenants and
// forwarding examples), as the container would, with the listeners moved
// to free loopback ports and /data and /etc/otlp-lite to a temporary
// directory. It must accept every value, then answer the kubelet's probes
// as the chart declares them: GET /readyz on the admin port, and
// grpc.health.v1.Health/Check with the empty service name on the OTLP gRPC
// port, over h2c without credentials (what the kubelet's gRPC prober
// sends); and stop with status 0 on SIGTERM within the grace period.
func TestChartEnvStartsTheReceiver(t *testing.T) {
	bin := otlpLiteBinary(t)
	for _, values := range []string{"", "examples/tenants.yaml", "examples/forwarding.yaml", "examples/kafka.yaml"} {
		name := "default"
		if values != "" {
			name = filepath.Base(values)
		}
		t.Run(name, func(t *testing.T) {
			var files []string
			if values != "" {
				files = append(files, filepath.Join(chartDir, values))
			}
			rendered, err := Render(chartDir, files...)
			if err != nil {
				t.Fatal(err)
			}
			o := decodeAll(t, rendered)
			pod := o.sts.Spec.Template.Spec
			root := t.TempDir()
			// The mounted files: the ConfigMap's keys, a token file for the
			// Secret, a CA certificate for the forwarding TLS Secret.
			for _, m := range pod.Containers[0].VolumeMounts {
				dir := filepath.Join(root, m.MountPath)
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				switch m.Name {
				case "tenants":
					for k, v := range o.configMaps["otlp-lite-tenants"].Data {
						os.WriteFile(filepath.Join(dir, k), []byte(v), 0o644)
					}
				case "tokens":
					os.WriteFile(filepath.Join(dir, "tokens"), []byte("test-token-of-team-a tenant=team-a\n"), 0o600)
				case "forward-tls", "kafka-tls":
					os.WriteFile(filepath.Join(dir, "ca.crt"), selfSignedPEM(t), 0o644)
				}
			}
			env := []string{}
			for _, e := range pod.Containers[0].Env {
				v := e.Value
				if f := e.ValueFrom; f != nil && f.SecretKeyRef != nil {
					v = "secret-from-" + f.SecretKeyRef.Name // kubelet reads the Secret
				} else if f != nil && f.FieldRef != nil && f.FieldRef.FieldPath == "metadata.name" {
					v = o.sts.Name + "-0" // the first pod
				}
				switch e.Name {
				case "OTLP_LITE_GRPC_ADDR", "OTLP_LITE_HTTP_ADDR", "OTLP_LITE_ADMIN_ADDR":
					v = "127.0.0.1:0"
				}
				// Paths in the pod become paths under root.
				v = strings.ReplaceAll(v, "/etc/otlp-lite/", root+"/etc/otlp-lite/")
				if e.Name == "OTLP_LITE_DATA_DIR" {
					v = filepath.Join(root, v)
				}
				// Peers only on loopback, where nothing listens: no name
				// is looked up, no packet leaves the machine.
				switch e.Name {
				case "OTLP_LITE_FORWARD":
					v = urlHost.ReplaceAllString(v, "${1}127.0.0.1:1")
				case "OTLP_LITE_KAFKA_BROKERS", "OTLP_LITE_KAFKA_CONSUME":
					brokers := strings.Split(v, ",")
					for i := range brokers {
						if e.Name == "OTLP_LITE_KAFKA_BROKERS" {
							brokers[i] = fmt.Sprintf("127.0.0.%d:1", i+1)
						} else {
							brokers[i] = fmt.Sprintf("127.0.1.%d:1", i+1)
						}
					}
					v = strings.Join(brokers, ",")
				}
				env = append(env, e.Name+"="+v)
			}
			if o.sts.Spec.Template.Spec.Containers[0].Image != "otlp-lite:dev" && !hasKafka(t, bin) {
				t.Skipf("%s is built without Kafka (-tags nokafka): the example needs the Kafka-capable image and binary", bin)
			}
			grace := time.Duration(*pod.TerminationGracePeriodSeconds) * time.Second
			token := "" // an export without a token
			if o.configMaps["otlp-lite-tenants"] != nil {
				token = "test-token-of-team-a"
			} else if envOf(o)["OTLP_LITE_STORAGE"] == "kafka" {
				token = "-" // no export: no broker here
			}
			runAndProbe(t, bin, env, grace, token)
		})
	}
}

// runAndProbe starts bin serve with exactly env, probes it as the kubelet
// would, stores one export (with token as its bearer token, if any), then
// stops it with SIGTERM, which must end it within grace.
func runAndProbe(t *testing.T, bin string, env []string, grace time.Duration, token string) {
	t.Helper()
	runServer(t, exec.Command(bin, "serve"), env, grace, token, nil)
}

// runTraced is runAndProbe for a receiver that strace (name, with args)
// runs; stop sends the receiver its SIGTERM.
func runTraced(t *testing.T, name string, args, env []string, stop func() error) {
	t.Helper()
	runServer(t, exec.Command(name, args...), env, 30*time.Second, "", stop)
}

func runServer(t *testing.T, cmd *exec.Cmd, env []string, grace time.Duration, token string, stop func() error) {
	t.Helper()
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	var logMu sync.Mutex
	addrs := make(chan []string, 1)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			logMu.Lock()
			log.WriteString(sc.Text() + "\n")
			logMu.Unlock()
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				addrs <- m[1:]
			}
		}
		close(addrs)
	}()
	logText := func() string { logMu.Lock(); defer logMu.Unlock(); return log.String() }
	var a []string
	select {
	case a = <-addrs:
	case <-time.After(20 * time.Second): // a failsafe, not a wait: the line comes at once
	}
	if a == nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the receiver did not start with the chart's environment:\n%s", logText())
	}
	stopped := false
	defer func() {
		if !stopped {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	grpcAddr, adminAddr := a[0], a[1]

	// Every variable was taken (none ignored, as a Kafka variable is by a
	// build without Kafka).
	m := regexp.MustCompile(`set_by_env=(\S*)`).FindStringSubmatch(logText())
	if m == nil {
		t.Fatalf("no effective configuration line:\n%s", logText())
	}
	taken := strings.Split(m[1], ",")
	for _, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); !slices.Contains(taken, name) {
			t.Errorf("%s was not taken by the receiver (set_by_env=%s)", name, m[1])
		}
	}

	for _, path := range []string{"/readyz", "/metrics", "/"} {
		resp, err := http.Get("http://" + adminAddr + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s on the admin port = %d, want 200", path, resp.StatusCode)
		}
	}
	if status, err := grpcHealthCheck(grpcAddr); err != nil || status != 1 {
		t.Errorf("liveness probe: Health/Check(\"\") = status %d, %v; want SERVING (1)", status, err)
	}
	req, _ := http.NewRequest("POST", "http://"+grpcAddr+"/v1/traces", strings.NewReader(oneSpan))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if token == "-" {
		// no export
	} else if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Errorf("export: %v", err)
	} else {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("export: %d %s", resp.StatusCode, body)
		}
	}

	start := time.Now()
	if stop == nil {
		stop = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	}
	if err := stop(); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	select {
	case <-readDone:
	case <-time.After(grace): // the kubelet's SIGKILL
		cmd.Process.Kill()
		<-readDone
	}
	err = cmd.Wait()
	stopped = true
	if took := time.Since(start); err != nil || took >= grace {
		t.Errorf("SIGTERM: exit %v after %v, want status 0 within the grace period %v\n%s", err, took, grace, logText())
	}
	if !strings.Contains(logText(), "msg=stopped") {
		t.Errorf("no graceful stop in the log:\n%s", logText())
	}
}

// oneSpan is an OTLP/JSON export of one span.
const oneSpan = `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"deploy-test"}}]},` +
	`"scopeSpans":[{"spans":[{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":"hello",` +
	`"kind":2,"startTimeUnixNano":"1700000000000000000","endTimeUnixNano":"1700000001000000000"}]}]}]}`

// grpcHealthCheck calls grpc.health.v1.Health/Check with an empty
// HealthCheckRequest (service "") over h2c, as the kubelet's gRPC prober
// does (no TLS, no credentials, its user agent), and returns the
// HealthCheckResponse's status (1 is SERVING).
func grpcHealthCheck(addr string) (int, error) {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	client := &http.Client{Transport: &http.Transport{Protocols: &p}, Timeout: 10 * time.Second}
	req, err := http.NewRequest("POST", "http://"+addr+"/grpc.health.v1.Health/Check", bytes.NewReader([]byte{0, 0, 0, 0, 0}))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("TE", "trailers")
	req.Header.Set("User-Agent", "kube-probe/1.37")
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.ProtoMajor != 2 || resp.StatusCode != 200 {
		return 0, fmt.Errorf("%s %d", resp.Proto, resp.StatusCode)
	}
	if st := resp.Trailer.Get("Grpc-Status"); st != "0" {
		return 0, fmt.Errorf("grpc-status %q: %s", st, resp.Trailer.Get("Grpc-Message"))
	}
	// One uncompressed message: field 1 (status), varint.
	if len(body) != 7 || body[0] != 0 || body[4] != 2 || body[5] != 0x08 {
		return 0, fmt.Errorf("unexpected response message % x", body)
	}
	return int(body[6]), nil
}

// selfSignedPEM returns a self-signed CA certificate in PEM, for a
// forwarding destination's tls-ca.
func selfSignedPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
