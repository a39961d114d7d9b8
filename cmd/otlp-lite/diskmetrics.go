package main

import (
	"github.com/otlp-lite/otlp-lite/metrics"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// registerDiskMetrics exposes the disk store's per-signal sizes, read from
// Store.Stats (in memory) at each scrape.
func registerDiskMetrics(reg *metrics.Registry, st *disk.Store) {
	gauge := func(name, help string, get func(disk.SignalStats) float64) {
		reg.GaugeVecFunc(name, help, []string{"signal"}, func(emit func(float64, ...string)) {
			for _, s := range st.Stats().Signals {
				emit(get(s), s.Signal.String())
			}
		})
	}
	counter := func(name, help string, get func(disk.SignalStats) float64) {
		reg.CounterVecFunc(name, help, []string{"signal"}, func(emit func(float64, ...string)) {
			for _, s := range st.Stats().Signals {
				emit(get(s), s.Signal.String())
			}
		})
	}
	gauge("otlplite_storage_bytes", "Bytes of segment files on disk, per signal.", func(s disk.SignalStats) float64 { return float64(s.Bytes) })
	gauge("otlplite_storage_segments", "Segment files, per signal.", func(s disk.SignalStats) float64 { return float64(s.Segments) })
	gauge("otlplite_storage_records", "Stored requests, per signal.", func(s disk.SignalStats) float64 { return float64(s.Records) })
	gauge("otlplite_storage_items", "Stored spans, data points or log records, per signal.", func(s disk.SignalStats) float64 { return float64(s.Items) })
	counter("otlplite_storage_write_errors_total", "Failed disk writes and fsyncs (disk full, I/O errors), per signal.", func(s disk.SignalStats) float64 { return float64(s.WriteErrors) })
	counter("otlplite_storage_deleted_segments_total", "Segments deleted by retention, per signal.", func(s disk.SignalStats) float64 { return float64(s.DeletedSegments) })
	reg.GaugeFunc("otlplite_storage_total_bytes", "Bytes of segment files on disk, all signals.", func() float64 { return float64(st.Stats().Bytes) })
}
