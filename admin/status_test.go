package admin

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/otlpclient"
	"github.com/otlp-lite/otlp-lite/storage/discard"
)

func TestParseExposition(t *testing.T) {
	set := metrics.NewSet()
	set.GetOrCreateCounter(`a_total{x="1",y="q\"uo\\te"}`).Add(3)
	set.GetOrCreateCounter(`a_total{x="2"}`).Add(4)
	set.GetOrCreateGauge(`g{x="1"}`, nil).Set(-1.5)
	set.GetOrCreatePrometheusHistogramExt(`h_seconds{s="t"}`, []float64{1, 2}).Update(1.5)
	metrics.ExposeMetadata(true)
	var buf bytes.Buffer
	set.WritePrometheus(&buf)
	e, err := parseExposition(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		s    selector
		want float64
	}{
		{sel("a_total"), 7},
		{sel("a_total", "x", "2"), 4},
		{sel("a_total", "y", `q"uo\te`), 3},
		{sel("g"), -1.5},
		{sel("h_seconds_count", "s", "t"), 1},
		{sel("h_seconds_sum"), 1.5},
	} {
		if got, ok := e.sum(tc.s); !ok || got != tc.want {
			t.Errorf("%s = %v (found %v), want %v", tc.s, got, ok, tc.want)
		}
	}
	if !e.cumulative("a_total") || e.cumulative("g") || !e.cumulative("h_seconds_count") {
		t.Errorf("types: %v", e.types)
	}
	// A selector's string form picks the same series again.
	s := sel("a_total", "y", `q"uo\te`)
	back, err := parseSeries(s.String() + " 0")
	if err != nil || back.label("y") != `q"uo\te` {
		t.Fatalf("round trip of %s: %+v %v", s, back, err)
	}
	for _, bad := range []string{"novalue", `x{a="1} 2`, `x{a=1} 2`, "x abc"} {
		if _, err := parseSeries(bad); err == nil {
			t.Errorf("parsed %q", bad)
		}
	}
}

// statusHandler builds a status page over a real handler's metrics, with
// the handler to send requests to.
func statusHandler(t *testing.T) (*statusPage, *handler.Handler, *metrics.Set) {
	t.Helper()
	set := metrics.NewSet()
	h := handler.New(handler.Config{Sink: &discard.Sink{}, Metrics: set, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Admission: handler.AdmissionConfig{RequestLimit: 64 << 20}})
	set.GetOrCreateGauge("otlplite_uptime_seconds", func() float64 { return 125 })
	metrics.ExposeMetadata(true)
	p := newStatusPage(set, Settings{
		Listeners: []Setting{{"otlp-grpc", "127.0.0.1:4317"}},
		Storage:   "discard",
		Version:   "test-version",
		Effective: []ConfigEntry{{Section: "Listeners", Flag: "grpc-addr", Env: "OTLP_LITE_GRPC_ADDR", Value: "127.0.0.1:4317", Source: "flag"},
			{Section: "Kafka", Flag: "kafka-sasl-password", Value: "<redacted>", Source: "env"}},
	}, func() bool { return true }, 0)
	return p, h, set
}

func postTraces(t *testing.T, h http.Handler, body []byte) int {
	t.Helper()
	req := httptest.NewRequest("POST", "/v1/traces", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-protobuf")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Code
}

// pageFigures reads the figures of a rendered page (PageFigures).
func pageFigures(t *testing.T, html string) []PageFigure {
	t.Helper()
	figs, err := PageFigures(html)
	if err != nil {
		t.Fatal(err)
	}
	return figs
}

// sumSelectors sums the series of e that a figure's selector list picks
// (Exposition.Sum).
func sumSelectors(t *testing.T, e *exposition, list string) float64 {
	t.Helper()
	v, err := (&Exposition{e}).Sum(list)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestStatusPageFigures: every figure on the page is the sum of the series
// its data-series names, as /metrics has them (nothing moves here, so
// exactly); rates are the change over the ring's window.
func TestStatusPageFigures(t *testing.T) {
	p, h, set := statusHandler(t)
	t0 := time.Now()
	p.snapshot(t0)
	req := otlpclient.NewSpanGenerator(3, 1, 1).AppendBatch(nil) // three spans
	for range 30 {
		if code := postTraces(t, h, req); code != 200 {
			t.Fatalf("HTTP %d", code)
		}
	}
	postTraces(t, h, []byte{0xff}) // one refusal: invalid_argument
	v := p.view(t0.Add(time.Minute))
	if v.Window != 60 {
		t.Fatalf("window %v", v.Window)
	}
	var row *ingestRow
	for i := range v.Ingest {
		if v.Ingest[i].Signal == "traces" && v.Ingest[i].Transport == "http" {
			row = &v.Ingest[i]
		}
	}
	if row == nil || row.Accepted.Value != 90 || row.Accepted.Rate != 1.5 || row.Requests.Value != 31 || math.Abs(row.Requests.Rate-31.0/60) > 1e-9 {
		t.Fatalf("traces over http: %+v", row)
	}
	if len(v.Refusals) != 1 || v.Refusals[0].Reason != "invalid_argument" {
		t.Fatalf("refusals %+v", v.Refusals)
	}
	if v.UptimeTxt != "2m 5s" || !v.Ready {
		t.Fatalf("uptime %q ready %v", v.UptimeTxt, v.Ready)
	}

	var page bytes.Buffer
	if err := statusTemplate.ExecuteTemplate(&page, "page", v); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	set.WritePrometheus(&buf)
	e, err := parseExposition(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	figs := pageFigures(t, page.String())
	if len(figs) < 50 {
		t.Fatalf("only %d figures on the page", len(figs))
	}
	for _, f := range figs {
		want := sumSelectors(t, e, f.Sel)
		if f.Rate {
			want /= 60 // everything started at zero before t0
		}
		if math.Abs(f.Value-want) > 1e-9*math.Max(1, want) {
			t.Errorf("%s (rate %v) on the page = %v, /metrics gives %v", f.Sel, f.Rate, f.Value, want)
		}
	}
	for _, want := range []string{">invalid_argument<", "No series with a destination label", "No series with a tenant label",
		"otlp-grpc", "-grpc-addr", "kafka-sasl-password", "&lt;redacted&gt;", "1.5/s", "90"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// TestStatusPageGenericFamilies: a family with a destination or tenant label
// gets its table without any code for it.
func TestStatusPageGenericFamilies(t *testing.T) {
	p, _, set := statusHandler(t)
	set.GetOrCreateCounter(`otlplite_forward_items_total{destination="backup"}`).Add(42)
	set.GetOrCreateGauge(`otlplite_forward_queue_bytes{destination="backup"}`, nil).Set(2048)
	set.GetOrCreateGauge(`otlplite_forward_state{destination="backup",state="sending"}`, nil).Set(0)
	set.GetOrCreateGauge(`otlplite_forward_state{destination="backup",state="backing_off"}`, nil).Set(1)
	set.GetOrCreateCounter(`otlplite_tenant_requests_total{tenant="acme",signal="logs"}`).Add(7)
	set.GetOrCreateCounter(`otlplite_tenant_requests_total{tenant="acme",signal="traces"}`).Add(1)
	v := p.view(time.Now())
	dest, ten := v.Pivots[0], v.Pivots[1]
	if len(dest.Rows) != 1 || dest.Rows[0].Key != "backup" || !slices.Equal(dest.Columns, []string{"items total", "queue bytes", "state"}) ||
		dest.Rows[0].Cells[0].Value != 42 || dest.Rows[0].Cells[1].Text != "2.0 KiB" ||
		dest.Rows[0].Cells[2].Text != "backing off" || dest.Rows[0].Cells[2].Sel != `otlplite_forward_state{destination="backup",state="backing_off"}` {
		t.Fatalf("destinations %+v", dest)
	}
	if len(ten.Rows) != 1 || ten.Rows[0].Key != "acme" || ten.Rows[0].Cells[0].Value != 8 {
		t.Fatalf("tenants %+v", ten)
	}
	// The cells carry their series, as every figure does.
	var page, metricsText bytes.Buffer
	if err := statusTemplate.ExecuteTemplate(&page, "main", v); err != nil {
		t.Fatal(err)
	}
	set.WritePrometheus(&metricsText)
	e, err := parseExposition(metricsText.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range pageFigures(t, page.String()) {
		if want := sumSelectors(t, e, f.Sel); !f.Rate && f.Value != want {
			t.Errorf("%s = %v on the page, %v in /metrics", f.Sel, f.Value, want)
		}
	}
	if !strings.Contains(page.String(), ">backing off<") {
		t.Error("the destination's state is not on the page")
	}
	found := false
	for _, f := range v.All {
		found = found || f.Sel == `otlplite_forward_items_total{destination="backup"}`
	}
	if !found {
		t.Fatal("the new family is not among all series")
	}
}

// TestStatusPageHTTP: the page, its refresh fragment and /status.json.
func TestStatusPageHTTP(t *testing.T) {
	p, _, _ := statusHandler(t)
	p.snapshot(time.Now())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/status.json" {
			p.serveJSON(w, r)
			return
		}
		p.ServeHTTP(w, r)
	}))
	defer srv.Close()
	get := func(path string) (string, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: HTTP %d %s", path, resp.StatusCode, b)
		}
		return string(b), resp.Header.Get("Content-Type")
	}
	page, ct := get("/")
	if !strings.HasPrefix(ct, "text/html") || !strings.Contains(page, "<script>") || !strings.Contains(page, `id="main"`) {
		t.Fatalf("page (%s): %.300s", ct, page)
	}
	// Self-contained: nothing loaded from elsewhere.
	for _, ext := range []string{"src=", "<link", "@import", "url("} {
		if strings.Contains(page, ext) {
			t.Errorf("page loads an external asset (%s)", ext)
		}
	}
	frag, _ := get("/?fragment=1")
	if strings.Contains(frag, "<html") || !strings.Contains(frag, `id="ingest"`) {
		t.Fatalf("fragment: %.300s", frag)
	}
	js, ct := get("/status.json")
	var v map[string]any
	if err := json.Unmarshal([]byte(js), &v); err != nil || ct != "application/json" {
		t.Fatalf("status.json (%s): %v\n%.300s", ct, err, js)
	}
	if v["version"] != "test-version" || v["ready"] != true {
		t.Fatalf("status.json: %v", v)
	}
}

func TestStatusRingKeepsOneWindow(t *testing.T) {
	p, _, _ := statusHandler(t)
	t0 := time.Now()
	statusInterval, statusWindow := DefaultHistoryInterval, time.Minute
	for i := range 40 {
		p.snapshot(t0.Add(time.Duration(i) * statusInterval))
	}
	old, _ := p.oldest()
	last := t0.Add(39 * statusInterval)
	if age := last.Sub(old.at); age < statusWindow || age > statusWindow+statusInterval {
		t.Fatalf("oldest snapshot %v old, want one window", age)
	}
	if n := len(p.snaps); n > int(statusWindow/statusInterval)+2 {
		t.Fatalf("%d snapshots kept", n)
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{formatCount(0), "0"}, {formatCount(999), "999"}, {formatCount(1234), "1,234"}, {formatCount(12345), "12.3 k"},
		{formatCount(2.5e6), "2.50 M"}, {formatCount(0.25), "0.2"}, {formatCount(12.7), "13"},
		{FormatBytes(512), "512 B"}, {FormatBytes(1536), "1.5 KiB"}, {FormatBytes(3 << 30), "3.0 GiB"},
		{formatDuration(5 * time.Second), "5s"}, {formatDuration(125 * time.Second), "2m 5s"},
		{formatDuration(26 * time.Hour), "1d 2h"}, {formatSeconds(0.0021), "2.1 ms"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestStatusRingStops: the snapshot goroutine takes a first snapshot at
// once and returns when serve closes its stop channel.
func TestStatusRingStops(t *testing.T) {
	p, _, _ := statusHandler(t)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { p.run(stop); close(done) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, ok := p.oldest(); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no first snapshot")
		}
		time.Sleep(5 * time.Millisecond) // polling interval
	}
	close(stop)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the snapshot goroutine did not stop")
	}
}
