package service

import (
	"fmt"
	"io"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// observeSync returns the disk store's ObserveSync for set:
// otlplite_storage_sync_seconds, the duration of each fsync of a batch of
// records (group commit), per signal.
func observeSync(set *metrics.Set) func(storage.Signal, time.Duration) {
	var bySignal [otlp.MaxSignal + 1]*metrics.PrometheusHistogram
	for _, sig := range storage.Signals {
		bySignal[sig] = set.GetOrCreatePrometheusHistogramExt(`otlplite_storage_sync_seconds{signal="`+sig.String()+`"}`, handler.LatencyBuckets)
	}
	return func(sig storage.Signal, d time.Duration) { bySignal[sig].Update(d.Seconds()) }
}

// registerDiskMetrics exposes the disk store's per-signal sizes, read from
// Store.Stats (in memory) once per scrape, so that every series of a
// scrape comes from the same snapshot. They are written by a metrics
// writer rather than func-backed gauges because half of them are
// counters and all of them share that one Stats call.
func registerDiskMetrics(set *metrics.Set, st *disk.Store) {
	type family struct {
		name, typ string // typ: "gauge" or "counter"
		get       func(disk.SignalStats) uint64
	}
	families := []family{
		{"otlplite_storage_bytes", "gauge", func(s disk.SignalStats) uint64 { return uint64(s.Bytes) }},                              // bytes of segment files on disk
		{"otlplite_storage_segments", "gauge", func(s disk.SignalStats) uint64 { return uint64(s.Segments) }},                        // segment files
		{"otlplite_storage_records", "gauge", func(s disk.SignalStats) uint64 { return uint64(s.Records) }},                          // stored requests
		{"otlplite_storage_items", "gauge", func(s disk.SignalStats) uint64 { return uint64(s.Items) }},                              // stored spans, data points or log records
		{"otlplite_storage_write_errors_total", "counter", func(s disk.SignalStats) uint64 { return uint64(s.WriteErrors) }},         // failed disk writes and fsyncs (disk full, I/O errors)
		{"otlplite_storage_deleted_segments_total", "counter", func(s disk.SignalStats) uint64 { return uint64(s.DeletedSegments) }}, // segments deleted by retention
		{"otlplite_storage_deleted_records_total", "counter", func(s disk.SignalStats) uint64 { return uint64(s.DeletedRecords) }},   // records in them: what a reader behind retention lost (its GapError)
		{"otlplite_storage_batch_buffer_bytes", "gauge", func(s disk.SignalStats) uint64 { return uint64(s.BatchBufferBytes) }},      // memory of the disk log's batch buffers
	}
	set.RegisterMetricsWriter(func(w io.Writer) {
		stats := st.Stats()
		for _, f := range families {
			metrics.WriteMetadataIfNeeded(w, f.name, f.typ)
			for _, s := range stats.Signals {
				fmt.Fprintf(w, "%s{signal=%q} %d\n", f.name, s.Signal.String(), f.get(s))
			}
		}
		// Bytes of segment files on disk, all signals.
		metrics.WriteGaugeUint64(w, "otlplite_storage_total_bytes", uint64(stats.Bytes))
	})
}
