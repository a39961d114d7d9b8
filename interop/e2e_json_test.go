package interop

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/otlp-lite/otlp-lite/storage"
)

// curlPost posts the file at path to url with curl, as application/json
// (and Content-Encoding: gzip when gzipped), and returns the status code,
// the response's Content-Type and body.
func curlPost(t *testing.T, curl, url, path string, gzipped bool) (int, string, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	args := []string{"-sS", "--max-time", "15", "-X", "POST",
		"-H", "Content-Type: application/json",
		"--data-binary", "@" + path,
		"-D", "-", // response headers first, then the body
		url}
	if gzipped {
		args = append(args[:len(args)-1], "-H", "Content-Encoding: gzip", url)
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, curl, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("curl %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	head, body, ok := bytes.Cut(out, []byte("\r\n\r\n"))
	if !ok {
		t.Fatalf("curl %s: no header/body separator in %q", url, out)
	}
	lines := strings.Split(string(head), "\r\n")
	var code int
	if _, err := fmt.Sscanf(lines[0], "HTTP/1.1 %d", &code); err != nil {
		t.Fatalf("curl %s: status line %q: %v", url, lines[0], err)
	}
	var ctype string
	for _, l := range lines[1:] {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.EqualFold(k, "Content-Type") {
			ctype = strings.TrimSpace(v)
		}
	}
	return code, ctype, body
}

// TestCurlJSON posts the OTLP/JSON payload files (../testdata/otlp/*.json,
// every field of the v1.11 data model) with curl: plain to the -http-addr
// port and gzipped to the gRPC port. Each full success must be answered 200,
// application/json, with the body {} (partial_success unset, OTLP v1.11
// "Full Success"); the file with one invalid span must be answered 200 with
// partialSuccess rejecting one span and saying why. The store must then hold
// exactly the files' messages, decoded independently with protojson (the
// invalid span removed).
func TestCurlJSON(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed; TestCurlJSON posts the payload files with it")
	}
	dataDir := t.TempDir()
	srv := startServerHTTP(t, dataDir)
	gzDir := t.TempDir()

	want := map[storage.Signal][]proto.Message{}
	for _, p := range jsonPayloads {
		msg := readJSONPayload(t, p)
		plain := payloadPath(p.file)
		gz := filepath.Join(gzDir, p.file+".gz")
		b, err := os.ReadFile(plain)
		if err != nil {
			t.Fatal(err)
		}
		var zb bytes.Buffer
		zw := gzip.NewWriter(&zb)
		zw.Write(b)
		zw.Close()
		if err := os.WriteFile(gz, zb.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			addr    string
			path    string
			gzipped bool
		}{
			{srv.httpAddr, plain, false},
			{srv.addr, gz, true},
		} {
			url := fmt.Sprintf("http://%s/v1/%s", c.addr, p.signal)
			code, ctype, body := curlPost(t, curl, url, c.path, c.gzipped)
			what := fmt.Sprintf("curl %s to %s (gzip %v)", p.file, url, c.gzipped)
			if code != http.StatusOK || !strings.HasPrefix(ctype, "application/json") {
				t.Errorf("%s: HTTP %d, Content-Type %q, body %s; want 200 application/json", what, code, ctype, body)
				continue
			}
			if p.pbFile != "" {
				if string(body) != "{}" {
					t.Errorf("%s: body %s, want {} (full success leaves partialSuccess unset)", what, body)
				}
				want[p.signal] = append(want[p.signal], msg)
				continue
			}
			checkJSONPartialSuccess(t, what, body)
			valid := proto.Clone(msg).(*coltracepb.ExportTraceServiceRequest)
			spans := valid.ResourceSpans[0].ScopeSpans[0]
			spans.Spans = []*tracepb.Span{spans.Spans[0], spans.Spans[2]}
			want[p.signal] = append(want[p.signal], valid)
		}
	}
	srv.stop()
	for _, sig := range storage.Signals {
		stored := scanStore(t, dataDir, sig, func() proto.Message { return newRequest(sig) })
		matchMessages(t, sig.String()+" JSON files", want[sig], stored)
	}
}

// checkJSONPartialSuccess checks an ExportTraceServiceResponse in OTLP/JSON
// that rejects one span with a message. rejectedSpans is an int64, a string
// in the proto3 JSON mapping; a number is accepted too.
func checkJSONPartialSuccess(t *testing.T, what string, body []byte) {
	t.Helper()
	var resp map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&resp); err != nil {
		t.Errorf("%s: response %s: %v", what, body, err)
		return
	}
	ps, _ := resp["partialSuccess"].(map[string]any)
	msg, _ := ps["errorMessage"].(string)
	if ps == nil || fmt.Sprint(ps["rejectedSpans"]) != "1" || msg == "" || len(resp) != 1 {
		t.Errorf("%s: response %s, want only partialSuccess with rejectedSpans 1 and an errorMessage", what, body)
		return
	}
	t.Logf("%s: %s", what, body)
}

// TestJSONRoundTrip: data received over gRPC (the Go SDK, the Collector's
// OTLP exporter for profiles, plus the binary payload files that set every
// field) is exported with
// `otlp-lite export -format json`, each line is posted back over OTLP/HTTP
// JSON to a second instance, and that instance's export must be byte for
// byte the first one: the JSON encoder and decoder are inverse on everything
// the receiver stores, and the fileexporter-style output is replayable.
func TestJSONRoundTrip(t *testing.T) {
	dirA, dirB := t.TempDir(), t.TempDir()
	a := startServer(t, dirA)
	res := resource.NewSchemaless(
		attribute.String("service.name", "otlp-lite-interop-go"),
		attribute.String("interop.run", fmt.Sprintf("roundtrip-%d", time.Now().UnixNano())),
	)
	capt := newCapture()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tw := sendGoTraces(ctx, t, a.addr, "gzip", res, capt)
	sendGoMetrics(ctx, t, a.addr, "none", res, capt)
	sendGoLogs(ctx, t, a.addr, "none", res, capt, tw)
	// Profiles from the Collector's OTLP exporter (pdata/pprofile).
	if err := collectorProfilesExporter(t, "otlp", a.addr, "gzip").ConsumeProfiles(ctx, collectorProfiles(300)); err != nil {
		t.Fatalf("profiles: %v", err)
	}
	conn := a.dial(t)
	for _, p := range []struct {
		file, method string
	}{
		{"traces_all_fields.pb", "/opentelemetry.proto.collector.trace.v1.TraceService/Export"},
		{"metrics_all_kinds.pb", "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"},
		{"logs_all_fields.pb", "/opentelemetry.proto.collector.logs.v1.LogsService/Export"},
	} {
		body, err := os.ReadFile(payloadPath(p.file))
		if err != nil {
			t.Fatal(err)
		}
		var resp coltracepb.ExportTraceServiceResponse // the three responses share a wire form
		if err := conn.Invoke(callCtx(t), p.method, body, &resp, grpc.ForceCodec(rawCodec{})); err != nil {
			t.Fatalf("%s: %v", p.file, err)
		}
	}
	a.stop()
	if s := capt.summary(); len(capt.failures) > 0 || len(capt.partial) > 0 {
		t.Fatalf("exports to the first instance were not all fully successful: %s", s)
	}

	b := startServerHTTP(t, dirB)
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	exportA := map[storage.Signal][]byte{}
	for _, sig := range storage.Signals {
		out := exportJSON(t, dirA, sig)
		exportA[sig] = out
		lines := bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n"))
		if len(out) == 0 {
			t.Fatalf("export of %s from the first instance is empty", sig)
		}
		for i, l := range lines {
			req, err := http.NewRequest(http.MethodPost, "http://"+b.httpAddr+sig.Info().HTTPPath, bytes.NewReader(l))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("POST %s line %d: %v", sig, i+1, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || string(body) != "{}" {
				t.Errorf("POST %s line %d: HTTP %d %s, want 200 {}", sig, i+1, resp.StatusCode, body)
			}
		}
		t.Logf("%s: %d records, %d bytes of JSON", sig, len(lines), len(out))
	}
	b.stop()
	for _, sig := range storage.Signals {
		if out := exportJSON(t, dirB, sig); !bytes.Equal(out, exportA[sig]) {
			t.Errorf("%s: the second export differs from the first:\nfirst:  %.1000s\nsecond: %.1000s", sig, exportA[sig], out)
		}
	}
}

// exportJSON runs `otlp-lite export -format json` on a stopped server's data
// directory.
func exportJSON(t *testing.T, dataDir string, sig storage.Signal) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, serverBin, "export", "-data-dir", dataDir, "-signal", sig.String(), "-format", "json")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("otlp-lite export -signal %s: %v\n%s", sig, err, stderr.String())
	}
	return out
}
