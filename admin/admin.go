package admin

import (
	"bytes"
	"net/http"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/internal/redact"
)

// Config is what the admin listener serves.
type Config struct {
	// Metrics is the set /metrics and the status page read.
	Metrics *metrics.Set
	// Pprof serves /debug/pprof/ (flag -admin-pprof, default false); a
	// build with -tags nopprof has no profiler (PprofBuiltIn).
	Pprof bool
	// Settings is what the status page and /config show of the
	// configuration.
	Settings Settings
	// HistoryInterval is how often the status page samples the set, for
	// its rates and its charts (which keep HistoryLen samples); zero
	// means DefaultHistoryInterval, 5 s (15 minutes of charts).
	HistoryInterval time.Duration
}

// Server is the admin listener's handler and the status page's ring of
// snapshots. It reports not ready until SetReady(true).
type Server struct {
	set     *metrics.Set
	ready   atomic.Bool
	page    *statusPage
	handler http.Handler
}

// New returns the admin handler of cfg, serving cfg.Metrics at /metrics
// followed by the process and Go runtime metrics of VictoriaMetrics/metrics
// (process_*, go_*). It turns on the library's # HELP/# TYPE lines (a
// process-wide switch), so that scrapers know the counters and histograms
// for what they are.
func New(cfg Config) *Server {
	metrics.ExposeMetadata(true)
	set := cfg.Metrics
	a := &Server{set: set}
	start := time.Now()
	// Kept under their own names for existing dashboards; go_goroutines
	// and the go_memstats_* series below carry the same and more.
	set.GetOrCreateGauge("otlplite_uptime_seconds", func() float64 { return time.Since(start).Seconds() })
	set.GetOrCreateGauge("otlplite_go_goroutines", func() float64 { return float64(runtime.NumGoroutine()) })
	set.GetOrCreateGauge("otlplite_go_heap_inuse_bytes", func() float64 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapInuse)
	})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		if !redact.Active() {
			// Nothing to hide: no copy (scrapers poll this often).
			a.set.WritePrometheus(w)
			metrics.WriteProcessMetrics(w)
			return
		}
		var b bytes.Buffer
		a.set.WritePrometheus(&b)
		metrics.WriteProcessMetrics(&b)
		w.Write(redactLabels(b.Bytes()))
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if !a.ready.Load() {
			http.Error(w, "not ready: starting or shutting down", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ready\n"))
	})
	if cfg.Pprof {
		mountPprof(mux)
	}
	withConfig := http.NewServeMux()
	withConfig.Handle("GET /config", configHandler(cfg.Settings.Effective))
	a.page = newStatusPage(set, cfg.Settings, a.ready.Load, cfg.HistoryInterval)
	a.page.register(withConfig)
	withConfig.Handle("/", mux)
	a.handler = withConfig
	return a
}

// Handler is the admin listener's handler.
func (a *Server) Handler() http.Handler { return a.handler }

// SetReady sets what /readyz and the status page report.
func (a *Server) SetReady(ready bool) { a.ready.Store(ready) }

// Run takes the status page's snapshots (for its rates over a minute and
// its charts over HistoryLen samples) until stop is closed.
func (a *Server) Run(stop <-chan struct{}) { a.page.run(stop) }

// redactLabels hides the registered secrets (package redact) in the label
// values of a Prometheus exposition: label values come from names clients
// and operators chose (destinations, tenants). Only what is between a
// series' braces is searched, so that a short secret cannot corrupt a
// metric's name or value.
func redactLabels(b []byte) []byte {
	if !redact.Active() {
		return b
	}
	out := make([]byte, 0, len(b))
	for line := range bytes.Lines(b) {
		open := bytes.IndexByte(line, '{')
		end := bytes.LastIndexByte(line, '}')
		if line[0] == '#' || open < 0 || end < open {
			out = append(out, line...)
			continue
		}
		labels := string(line[open:end])
		out = append(out, line[:open]...)
		out = append(out, redact.String(labels)...)
		out = append(out, line[end:]...)
	}
	return out
}
