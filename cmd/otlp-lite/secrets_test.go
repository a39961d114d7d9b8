package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The proof of "one redaction": the real binary is given known secrets in
// every place a secret can go, driven through every output, and no byte of
// any output holds one; every error is one line.

// outputs collects every byte a run produced, by where it came from.
type outputs map[string][]byte

func (o outputs) add(name string, b []byte) { o[name] = append(o[name], b...) }

// leaks fails t for each secret found in any output.
func (o outputs) leaks(t *testing.T, secrets []string) {
	t.Helper()
	names := make([]string, 0, len(o))
	for n := range o {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, s := range secrets {
			if i := bytes.Index(o[n], []byte(s)); i >= 0 {
				from, to := max(i-200, 0), min(i+len(s)+100, len(o[n]))
				t.Errorf("secret %q in %s: …%s…", s, n, o[n][from:to])
			}
		}
	}
}

// secretProc is an `otlp-lite serve` child whose stdout and stderr are
// both kept.
type secretProc struct {
	cmd       *exec.Cmd
	mu        sync.Mutex
	out, err  bytes.Buffer
	done      chan struct{}
	line      chan struct{} // a line came on stderr
	grpcAddr  string
	adminAddr string
}

func (p *secretProc) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err.String()
}

var secretAddrRE = regexp.MustCompile(`"?grpc_addr"?[=:]"?([0-9.:]+)"?.*"?admin_addr"?[=:]"?([0-9.:]+)"?`)

// startSecretServe starts serve with env added to the environment and args,
// on free loopback ports, and waits for its serving line.
func startSecretServe(t *testing.T, env []string, args ...string) *secretProc {
	t.Helper()
	args = append([]string{"serve", "-grpc-addr", "127.0.0.1:0", "-http-addr", "", "-admin-addr", "127.0.0.1:0",
		"-shutdown-timeout", "2s"}, args...)
	p := &secretProc{cmd: exec.Command(otlpLiteBinary(t), args...), done: make(chan struct{}), line: make(chan struct{}, 1)}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout = &lockedWriter{&p.mu, &p.out}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan [2]string, 1)
	go func() {
		r := bufio.NewReader(stderr)
		for {
			line, err := r.ReadString('\n')
			p.mu.Lock()
			p.err.WriteString(line)
			p.mu.Unlock()
			select {
			case p.line <- struct{}{}:
			default:
			}
			if m := secretAddrRE.FindStringSubmatch(line); m != nil && strings.Contains(line, "otlp-lite serving") {
				select {
				case ready <- [2]string{m[1], m[2]}:
				default:
				}
			}
			if err != nil {
				break
			}
		}
		p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
	})
	select {
	case a := <-ready:
		p.grpcAddr, p.adminAddr = a[0], a[1]
	case <-p.done:
		t.Fatalf("serve exited before serving:\n%s", p.stderr())
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not start:\n%s", p.stderr())
	}
	return p
}

// waitLog waits until p's stderr holds s, or timeout passes.
func (p *secretProc) waitLog(s string, timeout time.Duration) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for !strings.Contains(p.stderr(), s) {
		select {
		case <-p.line:
		case <-p.done:
			return strings.Contains(p.stderr(), s)
		case <-deadline.C:
			return false
		}
	}
	return true
}

// stop shuts p down (SIGTERM) and adds its stdout and stderr to o.
func (p *secretProc) stop(t *testing.T, o outputs, name string) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		t.Errorf("serve did not stop on SIGTERM")
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	o.add(name+" stdout", p.out.Bytes())
	o.add(name+" stderr", p.err.Bytes())
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// fetch sends a request and returns the whole response as bytes: status,
// headers, body, trailers.
func fetch(t *testing.T, c *http.Client, method, url string, hdr http.Header, body []byte) []byte {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = hdr
	resp, err := c.Do(req)
	if err != nil {
		return []byte("error: " + err.Error())
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s\n", resp.Proto, resp.Status)
	resp.Header.Write(&b)
	io.Copy(&b, resp.Body)
	resp.Trailer.Write(&b)
	return b.Bytes()
}

// TestNoSecretInAnyOutput is finding 16 of issue 21 and its contract: a
// -forward URL's credential headers, a kafka:// URL's SASL password,
// -kafka-sasl-password (flag and environment), the token file's tokens and
// a client's Authorization header appear in no output: refused flags (8+
// malformed forms, flag and environment, each error one line), error
// bodies, the log at debug (the request log, forwarding's errors quoting a
// destination's response that echoes our credential, the Kafka client's
// log), /config (text and JSON), the status page and /status.json,
// /metrics, pprof's cmdline and the version command.
func TestNoSecretInAnyOutput(t *testing.T) {
	bin := otlpLiteBinary(t)
	dir := t.TempDir()
	o := outputs{}
	var secrets []string
	secret := func(s string) string { secrets = append(secrets, s); return s }

	// 1. Refused values: each error one line, exit 2, nothing on stdout.
	malformed := []string{
		"a=grpc://127.0.0.1:1?header=Authorization:Bearer%20" + secret("mf1-SeCrEt-a9") + "&bogus=1",
		"grpc://127.0.0.1:1?header=Authorization:Bearer%20" + secret("mf2-SeCrEt-b8"),
		"a=grpc://127.0.0.1?header=Authorization:Bearer%20" + secret("mf3-SeCrEt-c7"),
		"a=grpc://user:" + secret("mf4-SeCrEt-d6") + "@127.0.0.1:1",
		"a=foo://127.0.0.1:1?header=Authorization:" + secret("mf5-SeCrEt-e5"),
		"a=grpc://127.0.0.1:1?header=Authorization:Bearer " + secret("mf6-SeCrEt-f4") + "\nnext-line",
		"a=grpc://127.0.0.1:1?header=Authorization%0ABearer%20" + secret("mf7-SeCrEt-g3"),
		"a=grpc://127.0.0.1:1?header=Authorization:" + secret("mf8-SeCrEt-h2") + "&timeout=soon",
		"a=grpc://127.0.0.1:1?header=X-Api-Key:" + secret("mf9-SeCrEt-i1") + ";x",
		"a=kafka://127.0.0.1:1?sasl-password=" + secret("mf10-SeCrEt-j0"),
		// A space: the environment splits values at white space.
		"a=grpc://127.0.0.1:1?header=Authorization:Bearer " + secret("mf11-SeCrEt-k9") + "&bogus=1",
		"a=https://127.0.0.1:1?header=Cookie:session%3D" + secret("mf12-SeCrEt-l8") + "&tls-ca=/nonexistent/ca.pem",
		"a=grpc://127.0.0.1:1?header=Proxy-Authorization:Basic%20" + secret("mf13-SeCrEt-m7") + "&inflight=0",
	}
	type refused struct {
		name string
		env  []string
		args []string
	}
	var runs []refused
	for i, v := range malformed {
		runs = append(runs,
			refused{fmt.Sprintf("-forward form %d", i+1), nil, []string{"-forward", v}},
			refused{fmt.Sprintf("OTLP_LITE_FORWARD form %d", i+1), []string{"OTLP_LITE_FORWARD=" + v}, nil})
	}
	runs = append(runs,
		// The shell split a header value: the credential is an argument.
		refused{"split argument", nil, []string{"-forward", "a=grpc://127.0.0.1:1?header=Authorization:Bearer", secret("mf14-SeCrEt-n6")}},
		refused{"bad SASL mechanism", nil, []string{"-kafka-sasl-mechanism", "NOPE", "-kafka-sasl-username", "u", "-kafka-sasl-password", secret("mf15-SeCrEt-o5")}},
		refused{"bad SASL mechanism, env", []string{"OTLP_LITE_KAFKA_SASL_PASSWORD=" + secret("mf16-SeCrEt-p4")}, []string{"-kafka-sasl-mechanism", "NOPE", "-kafka-sasl-username", "u"}},
		refused{"SASL password with a newline", nil, []string{"-kafka-sasl-password", secret("mf17-SeCrEt-q3") + "\n", "-kafka-sasl-username", "u"}},
		refused{"bad kafka header", nil, []string{"-kafka-header", "Authorization:" + secret("mf18-SeCrEt-r2")}},
	)
	for _, r := range runs {
		var stdout, stderr bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"serve", "-data-dir", filepath.Join(dir, "refused"), "-grpc-addr", "127.0.0.1:0", "-admin-addr", ""}, r.args...)...)
		cmd.Env = append(os.Environ(), r.env...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := cmd.ProcessState.ExitCode()
		o.add(r.name+" stdout", stdout.Bytes())
		o.add(r.name+" stderr", stderr.Bytes())
		if code != 2 || stdout.Len() != 0 || strings.Count(stderr.String(), "\n") != 1 || !strings.HasSuffix(stderr.String(), "\n") {
			t.Errorf("%s: exit %d (%v), stdout %q, stderr %q: want exit 2 and one line on stderr", r.name, code, err, stdout.String(), stderr.String())
		}
	}

	// 2. A running server with a secret everywhere.
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		// A hostile or careless destination: its refusal quotes the
		// credentials we sent.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]any{"code": 3,
			"message": "refused; you sent authorization: " + r.Header.Get("Authorization") + ", x-api-key: " + r.Header.Get("X-Api-Key")})
	}))
	defer echo.Close()
	closed := freeAddr(t) // a Kafka broker that is not there

	tokens := filepath.Join(dir, "tokens")
	tokenA, tokenB := secret("tok-client-A1b2C3d4"), secret("tok-tenant-D4e5F6g7")
	if err := os.WriteFile(tokens, []byte("# clients\n"+tokenA+"\n"+tokenB+" tenant=team-a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fwdAuth, fwdKey := secret("fwd-hdr-7Q2xK9wE"), secret("apikey-Zr8Lw3sD")
	kafkaURLPwd, saslFlag := secret("kafka-url-pw-M4vN8"), secret("sasl-flag-pw-H6jT1")
	wrongToken := secret("wrong-client-tok-Z9y8")
	p := startSecretServe(t, []string{"FWD_KAFKA_PWD_T=" + kafkaURLPwd},
		"-data-dir", filepath.Join(dir, "data"), "-log-level", "debug", "-admin-pprof",
		"-auth-token-file", tokens,
		"-forward", "echo="+echo.URL+"?header=Authorization:Bearer%20"+fwdAuth+"&header=X-Api-Key:"+fwdKey+"&signals=traces&retry-max-backoff=1s",
		"-forward", "k=kafka://"+closed+"?sasl-mechanism=PLAIN&sasl-username=otlp&sasl-password-env=FWD_KAFKA_PWD_T&log-level=debug&signals=traces",
		"-kafka-sasl-mechanism", "PLAIN", "-kafka-sasl-username", "otlp", "-kafka-sasl-password", saslFlag,
		"-kafka-header", "Authorization="+secret("kafka-rec-hdr-U7iO9"))

	h2c, h1 := newH2CClient(), newHTTP1Client()
	otlp := "http://" + p.grpcAddr
	grpcHdr := func(kv ...string) http.Header {
		h := http.Header{"Content-Type": {"application/grpc"}, "Te": {"trailers"}}
		for i := 0; i+1 < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	for i, r := range []struct {
		c      *http.Client
		path   string
		hdr    http.Header
		body   []byte
		status string
	}{
		{h2c, methodTraces, grpcHdr("Authorization", "Bearer "+tokenA), grpcBody(false, tracesRequest(nil, "stored-1")), ""},
		{h2c, methodTraces, grpcHdr("Authorization", "Bearer "+tokenB), grpcBody(false, tracesRequest(nil, "stored-2")), ""},
		{h2c, methodTraces, grpcHdr("Authorization", "Bearer "+wrongToken), grpcBody(false, tracesRequest(nil, "refused")), ""},
		{h2c, methodTraces, grpcHdr("Authorization", "Bearer "+tokenA), grpcBody(false, []byte("\x0a\xff\xff\xff\x0fgarbage")), ""},
		{h1, "/v1/traces", http.Header{"Content-Type": {"application/x-protobuf"}, "Authorization": {"Bearer " + tokenA}}, []byte("\x0a\xff\xff\xff\x0fgarbage"), "400"},
		{h1, "/v1/traces", http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer " + tokenA}}, []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"kind":"not-a-kind"}]}]}]}`), "400"},
		{h1, "/v1/traces", http.Header{"Content-Type": {"application/x-protobuf"}, "Authorization": {"Bearer " + wrongToken}}, tracesRequest(nil, "refused"), "401"},
		{h1, "/v1/traces", http.Header{"Content-Type": {"application/x-protobuf"}, "Authorization": {"Basic " + wrongToken}}, tracesRequest(nil, "refused"), "401"},
		{h1, "/v1/nope", http.Header{"Authorization": {"Bearer " + wrongToken}}, nil, ""},
	} {
		got := fetch(t, r.c, http.MethodPost, otlp+r.path, r.hdr, r.body)
		o.add(fmt.Sprintf("OTLP response %d", i), got)
		if r.status != "" && !bytes.Contains(got, []byte(" "+r.status+" ")) {
			t.Errorf("request %d: want HTTP %s, got:\n%s", i, r.status, got)
		}
	}
	// Forwarding tried the echoing destination, and logged its refusal.
	if !p.waitLog("record dead-lettered", 20*time.Second) {
		t.Errorf("the forwarder never dead-lettered the destination's refusal:\n%s", p.stderr())
	}

	admin := "http://" + p.adminAddr
	for _, path := range []string{"/config", "/config?format=json", "/", "/status.json", "/metrics", "/debug/pprof/cmdline", "/debug/pprof/", "/debug/pprof/goroutine?debug=2", "/healthz", "/readyz", "/nope"} {
		o.add("admin "+path, fetch(t, h1, http.MethodGet, admin+path, http.Header{}, nil))
	}
	p.stop(t, o, "serve")

	var version bytes.Buffer
	cmd := exec.Command(bin, "version")
	cmd.Stdout, cmd.Stderr = &version, &version
	cmd.Run()
	o.add("version", version.Bytes())

	// The data directory: cursors, dead letters and what was stored.
	filepath.WalkDir(filepath.Join(dir, "data"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(path)
			o.add("file "+path, b)
		}
		return nil
	})

	// 3. The same with the SASL password in the environment, logging JSON.
	saslEnv := secret("sasl-env-pw-P3qR7")
	p2 := startSecretServe(t, []string{"OTLP_LITE_KAFKA_SASL_PASSWORD=" + saslEnv, "OTLP_LITE_FORWARD=e2=" + echo.URL + "?header=Authorization:Bearer%20" + fwdAuth},
		"-data-dir", filepath.Join(dir, "data2"), "-log-level", "debug", "-log-format", "json", "-admin-pprof",
		"-kafka-sasl-mechanism", "SCRAM-SHA-256", "-kafka-sasl-username", "otlp")
	admin2 := "http://" + p2.adminAddr
	for _, path := range []string{"/config", "/config?format=json", "/", "/status.json", "/metrics", "/debug/pprof/cmdline"} {
		o.add("admin(env) "+path, fetch(t, h1, http.MethodGet, admin2+path, http.Header{}, nil))
	}
	p2.stop(t, o, "serve(env)")

	// What the outputs must show: the redaction happened (not an output
	// that went missing), and the destination's echo reached the log.
	for name, want := range map[string]string{
		"admin /config":              `kafka-sasl-password="<redacted>"`,
		"admin /debug/pprof/cmdline": "-kafka-sasl-password\x00<redacted>",
		"admin(env) /config":         `kafka-sasl-password="<redacted>"`,
		"serve stderr":               "you sent authorization: <redacted>, x-api-key: <redacted>",
	} {
		if !bytes.Contains(o[name], []byte(want)) {
			t.Errorf("%s lacks %q:\n%s", name, want, o[name])
		}
	}
	if !bytes.Contains(o["serve stderr"], []byte("msg=request ")) {
		t.Errorf("no request log at debug level:\n%s", o["serve stderr"])
	}
	o.leaks(t, secrets)
}
