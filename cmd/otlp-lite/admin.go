package main

import (
	"net/http"
	"net/http/pprof"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/otlp-lite/otlp-lite/metrics"
)

// adminServer is the operator's listener: /metrics (Prometheus text),
// /healthz (the process is alive), /readyz (storage open and not shutting
// down: safe to send traffic) and, with -admin-pprof, /debug/pprof/. It is
// separate from the OTLP ports so that it can stay on localhost or a
// private network while the OTLP ports face clients.
type adminServer struct {
	reg   *metrics.Registry
	ready atomic.Bool
}

func newAdminServer(reg *metrics.Registry, withPprof bool) (*adminServer, http.Handler) {
	a := &adminServer{reg: reg}
	start := time.Now()
	reg.GaugeFunc("otlplite_uptime_seconds", "Seconds since the process started.", func() float64 { return time.Since(start).Seconds() })
	reg.GaugeFunc("otlplite_go_goroutines", "Goroutines.", func() float64 { return float64(runtime.NumGoroutine()) })
	reg.GaugeFunc("otlplite_go_heap_inuse_bytes", "Go heap in use.", func() float64 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapInuse)
	})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		a.reg.WritePrometheus(w)
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
