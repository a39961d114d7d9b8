package main

import (
	"net/http"
	"net/http/pprof"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// adminServer is the operator's listener: /metrics (Prometheus text),
// /healthz (the process is alive), /readyz (storage open and not shutting
// down: safe to send traffic) and, with -admin-pprof, /debug/pprof/. It is
// separate from the OTLP ports so that it can stay on localhost or a
// private network while the OTLP ports face clients.
type adminServer struct {
	set   *metrics.Set
	ready atomic.Bool
}

// newAdminServer serves set at /metrics, followed by the process and Go
// runtime metrics of VictoriaMetrics/metrics (process_*, go_*). It turns
// on the library's # HELP/# TYPE lines (a process-wide switch), so that
// scrapers know the counters and histograms for what they are.
func newAdminServer(set *metrics.Set, withPprof bool) (*adminServer, http.Handler) {
	metrics.ExposeMetadata(true)
	a := &adminServer{set: set}
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
		a.set.WritePrometheus(w)
		metrics.WriteProcessMetrics(w)
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
	if withPprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return a, mux
}
