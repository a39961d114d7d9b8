package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/admin"
	"github.com/otlp-lite/otlp-lite/grpcwire"
)

// findBrowser returns a Chromium binary: OTLP_LITE_CHROMIUM, Debian's
// /usr/bin/chromium (what `make browser` installs), or one on PATH.
func findBrowser() (string, bool) {
	if p := os.Getenv("OTLP_LITE_CHROMIUM"); p != "" {
		return p, true
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium", true
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome", "headless_shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, true
		}
	}
	return "", false
}

// artifactDir is where test artefacts (the screenshot) go:
// OTLP_LITE_ARTIFACTS (the Makefile sets bin/artifacts), else the test's
// temporary directory.
func artifactDir(t *testing.T) string {
	if d := os.Getenv("OTLP_LITE_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// chromium runs headless Chromium with args then url and returns its
// standard output. Each run has its own profile directory, so runs in
// parallel do not share one.
func chromium(t *testing.T, browser, url string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	all := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--no-default-browser-check", "--disable-extensions", "--hide-scrollbars",
		"--force-device-scale-factor=1", "--user-data-dir=" + t.TempDir()}, args...)
	cmd := exec.CommandContext(ctx, browser, append(all, url)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", browser, err, stderr.Bytes())
	}
	return stdout.Bytes()
}

// scrape returns the admin listener's /metrics, parsed.
func (s *abuseServer) scrape(t *testing.T) *admin.Exposition {
	t.Helper()
	resp, err := http.Get("http://" + s.adminAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	e, err := admin.ParseExposition(b)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestStatusPageInBrowser loads the status page in a real headless Chromium
// while clients send gRPC and OTLP/HTTP exports (and some bad requests) to
// a real `otlp-lite serve`, and checks what the browser rendered against
// /metrics scraped just before and just after: every cumulative figure
// (and every gauge that did not move) lies between the two scrapes, rates
// are consistent with their totals, and the page's script refreshed it. A
// screenshot is saved as an artefact.
func TestStatusPageInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server and a browser")
	}
	browser, ok := findBrowser()
	if !ok {
		t.Skip("no Chromium found: install Debian's chromium (`make browser` does, as root) or set OTLP_LITE_CHROMIUM")
	}
	// Samples every 200 ms: the charts have points within a second.
	srv := startAbuseServer(t, "-storage-max-bytes", "1GiB", "-storage-max-age", "168h", "-status-sample-interval", "200ms")

	// Load: gRPC and OTLP/HTTP exporters, and a trickle of refusals,
	// until the page has been read.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var sent atomic.Int64
	worker := func(send func(i int) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := send(i); err == nil {
					sent.Add(1)
				}
			}
		}()
	}
	for w := range 2 {
		c := grpcwire.NewClient(srv.addr, nil)
		worker(func(i int) error {
			_, err := c.Invoke(context.Background(), methodTraces, tracesRequest(nil, fmt.Sprintf("g%d-%d-a", w, i), fmt.Sprintf("g%d-%d-b", w, i)))
			return err
		})
	}
	hc := newH2CClient()
	worker(func(i int) error {
		resp, err := hc.Post("http://"+srv.addr+"/v1/traces", "application/x-protobuf", bytes.NewReader(tracesRequest(nil, fmt.Sprintf("h-%d", i))))
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	})
	worker(func(i int) error {
		// Undecodable: INVALID_ARGUMENT, a refusal by reason. Paced, so
		// the refusal log's rate limit is not what this measures.
		resp, err := hc.Post("http://"+srv.addr+"/v1/logs", "application/x-protobuf", bytes.NewReader([]byte{0xff, 0xff}))
		if err == nil {
			resp.Body.Close()
		}
		select {
		case <-stop:
		case <-time.After(100 * time.Millisecond):
		}
		return err
	})
	stopLoad := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer stopLoad()

	// Wait for traffic, and for the ring to span more than a second.
	if _, ok := srv.waitMetric(t, 30*time.Second, "otlplite_requests_total", func(v float64) bool { return v >= 200 }); !ok {
		t.Fatalf("no load reached the server:\n%s", srv.logs())
	}
	pageURL := "http://" + srv.adminAddr + "/"
	before := srv.scrape(t)
	beforeAt := time.Now()
	// 6 s of virtual time: the page's script refreshes it once (every
	// 5 s), so the DOM checked is the refreshed one.
	dom := string(chromium(t, browser, pageURL, "--virtual-time-budget=6000", "--dump-dom"))
	after := srv.scrape(t)
	hist := srv.history(t)

	if !strings.Contains(dom, `data-refreshes="`) {
		t.Errorf("the page's script did not refresh it in the browser")
	}
	figs, err := admin.PageFigures(dom)
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) < 80 {
		t.Fatalf("only %d figures in the rendered page:\n%.2000s", len(figs), dom)
	}
	window := 0.0
	if m := regexp.MustCompile(`data-window-seconds="([^"]+)"`).FindStringSubmatch(dom); m != nil {
		window, _ = strconv.ParseFloat(m[1], 64)
	}
	if window < 1 {
		t.Fatalf("rate window %v s in the page", window)
	}
	strict, moving := 0, 0
	for _, f := range figs {
		lo, hi := sumSelectors(t, before, f.Sel), sumSelectors(t, after, f.Sel)
		if f.Rate {
			// A rate is a change over the window: never negative, never
			// more than the whole total over the window.
			if f.Value < 0 || f.Value*window > hi*(1+1e-9)+1e-9 {
				t.Errorf("rate of %s = %v/s over %v s, but the total is %v", f.Sel, f.Value, window, hi)
			}
			continue
		}
		if lo > hi {
			lo, hi = hi, lo
		}
		first := strings.SplitN(f.Sel, "{", 2)[0]
		if !after.Cumulative(first) && !monotonicGauge(first) {
			// An instantaneous gauge (bytes in flight, goroutines, open
			// connections: the browser's own is one) may be anything
			// between two scrapes.
			moving++
			continue
		}
		strict++
		if f.Value < lo-1e-9 || f.Value > hi+1e-9 {
			t.Errorf("%s = %v on the page, outside /metrics' %v..%v", f.Sel, f.Value, lo, hi)
		}
	}
	t.Logf("%d figures rendered; %d checked against /metrics, %d instantaneous gauges not; rate window %.1f s", len(figs), strict, moving, window)

	// What the load must show: traces arriving on both transports, and
	// the refusals by reason.
	for _, want := range []string{
		`data-rate="otelcol_receiver_accepted_spans_total{transport=&quot;grpc&quot;}"`,
		`data-rate="otelcol_receiver_accepted_spans_total{transport=&quot;http&quot;}"`,
	} {
		i := strings.Index(dom, want)
		if i < 0 {
			t.Fatalf("no %s in the page", want)
		}
		m := regexp.MustCompile(`data-value="([^"]+)"`).FindStringSubmatch(dom[i:])
		if v, _ := strconv.ParseFloat(m[1], 64); !(v > 0) {
			t.Errorf("%s = %v under load", want, v)
		}
	}
	for _, want := range []string{">invalid_argument<", ">ready<", "always", "1.0 GiB", "at most 168h old", srv.addr, srv.adminAddr,
		"No series with a tenant label", ">-storage-max-bytes<"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered page lacks %q", want)
		}
	}

	checkCharts(t, dom, hist, before, after, beforeAt)
	// The latency percentiles of the ingest table: traces over gRPC had
	// requests in the window.
	if m := regexp.MustCompile(`data-quantile="0.99" data-value="([^"]+)"`).FindStringSubmatch(dom); m == nil {
		t.Errorf("no latency p99 with a value in the ingest table")
	} else if v, _ := strconv.ParseFloat(m[1], 64); !(v > 0 && v <= 10) {
		t.Errorf("latency p99 %v s", v)
	}

	// The screenshot, under load too.
	shot := filepath.Join(artifactDir(t), "status-page.png")
	chromium(t, browser, pageURL, "--virtual-time-budget=2000", "--window-size=1400,1400", "--screenshot="+shot)
	stopLoad()
	fi, err := os.Stat(shot)
	if err != nil || fi.Size() < 10_000 {
		t.Fatalf("screenshot %s: %v (%v bytes)", shot, err, fi)
	}
	png, _ := os.ReadFile(shot)
	if !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("%s is not a PNG", shot)
	}
	t.Logf("screenshot: %s (%d KiB)", shot, fi.Size()>>10)
}

// monotonicGauge: gauges that only grow while data arrives (retention has
// nothing to delete in this test) or never change, so the page's value lies
// between two scrapes.
func monotonicGauge(name string) bool {
	switch name {
	case "otlplite_uptime_seconds", "otlplite_storage_bytes", "otlplite_storage_total_bytes",
		"otlplite_storage_records", "otlplite_storage_items", "otlplite_storage_segments",
		"otlplite_admission_bytes_limit", "otlplite_admission_bytes_waiting_limit":
		return true
	}
	return false
}

// sumSelectors sums the series of e that a figure's selector list picks.
func sumSelectors(t *testing.T, e *admin.Exposition, list string) float64 {
	t.Helper()
	v, err := e.Sum(list)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// history returns the admin listener's /status/history.
func (s *abuseServer) history(t *testing.T) admin.HistoryView {
	t.Helper()
	resp, err := http.Get("http://" + s.adminAddr + "/status/history")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v admin.HistoryView
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// chartPathRE finds a chart's line: its series name, last value and the
// time of its last point, as the page's script writes them.
var chartPathRE = regexp.MustCompile(`<path d="[^"]*" stroke="[^"]*" data-name="([^"]+)" data-last="([^"]*)" data-last-t="([0-9]+)"`)

// checkCharts checks the charts the browser drew against /status/history
// and /metrics: each chart is an SVG with its axis labels and a line per
// series; the last point of items/s for traces is the history's point at
// the same time, which is the change of the traces counter between its
// two samples over their interval, and that counter's value lies between
// the scrapes before and after (after only, if sampled before the first).
func checkCharts(t *testing.T, dom string, hist admin.HistoryView, before, after *admin.Exposition, beforeAt time.Time) {
	t.Helper()
	charts := map[string]map[string][2]string{} // chart → series → last, last-t
	for _, part := range strings.Split(dom, `<figure class="chart" data-chart="`)[1:] {
		name, _, _ := strings.Cut(part, `"`)
		body, _, _ := strings.Cut(part, "</figure>")
		if !strings.Contains(body, "<svg") {
			if !strings.Contains(body, `class="empty"`) {
				t.Errorf("chart %s: no SVG and no note:\n%s", name, body)
			}
			continue
		}
		for _, want := range []string{`class="axis y"`, `class="axis x"`, ">now<", "<title>"} {
			if !strings.Contains(body, want) {
				t.Errorf("chart %s lacks %s", name, want)
			}
		}
		charts[name] = map[string][2]string{}
		for _, m := range chartPathRE.FindAllStringSubmatch(body, -1) {
			charts[name][m[1]] = [2]string{m[2], m[3]}
		}
	}
	for chart, series := range map[string][]string{
		"items_per_second":       {"traces", "metrics", "logs", "profiles"},
		"refusals_per_second":    {"invalid_argument"},
		"admission_in_use_bytes": {"in use"},
		"latency":                {"p50", "p99"},
	} {
		for _, s := range series {
			if _, ok := charts[chart][s]; !ok {
				t.Errorf("chart %s has no line %s (lines: %v)", chart, s, charts[chart])
			}
		}
	}
	if !strings.Contains(dom, `data-chart="forward_lag_seconds"`) || !strings.Contains(dom, "No forwarding destinations.") {
		t.Errorf("the forwarding lag chart does not say there is no destination")
	}
	if p99 := charts["latency"]["p99"][0]; p99 == "" {
		t.Errorf("no latency p99 under load")
	}
	last, lastT := charts["items_per_second"]["traces"][0], charts["items_per_second"]["traces"][1]
	drawn, err := strconv.ParseFloat(last, 64)
	if err != nil || !(drawn > 0) {
		t.Fatalf("last traces point drawn: %q (%v), want a rate above 0 under load", last, err)
	}
	ts, _ := strconv.ParseInt(lastT, 10, 64)
	i := slices.Index(hist.T, ts)
	if i < 1 {
		t.Fatalf("the drawn point at %d is not in /status/history (points %d..%d)", ts, hist.T[0], hist.T[len(hist.T)-1])
	}
	rates, totals := hist.ItemsPerSecond["traces"], hist.Items["traces"]
	if rates[i] != drawn {
		t.Errorf("drawn %v/s, /status/history has %v/s", drawn, rates[i])
	}
	// Times are in whole milliseconds in the JSON: the interval is known
	// to 1 ms of 200.
	dt := float64(hist.T[i]-hist.T[i-1]) / 1000
	if want := (totals[i] - totals[i-1]) / dt; math.Abs(want-drawn) > 0.02*want {
		t.Errorf("drawn %v/s, but the counter went %v → %v in %v s: %v/s", drawn, totals[i-1], totals[i], dt, want)
	}
	sel := "otelcol_receiver_accepted_spans_total"
	lo, hi := sumSelectors(t, before, sel), sumSelectors(t, after, sel)
	if totals[i] > hi || time.UnixMilli(ts).After(beforeAt) && totals[i] < lo {
		t.Errorf("%s sampled %v at %v, /metrics had %v before (%v) and %v after", sel, totals[i], time.UnixMilli(ts), lo, beforeAt, hi)
	}
	t.Logf("charts: %d drawn; traces %v/s at %v (sample %d of %d)", len(charts), drawn, time.UnixMilli(ts).Format("15:04:05.000"), i, len(hist.T))
}
