package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	srv := startAbuseServer(t, "-storage-max-bytes", "1GiB", "-storage-max-age", "168h")

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
	// 6 s of virtual time: the page's script refreshes it once (every
	// 5 s), so the DOM checked is the refreshed one.
	dom := string(chromium(t, browser, pageURL, "--virtual-time-budget=6000", "--dump-dom"))
	after := srv.scrape(t)

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
