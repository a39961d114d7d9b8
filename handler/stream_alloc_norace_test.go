//go:build !race

package handler

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// TestStreamSteadyStateAllocs: a long export stream of ~2 MB trace requests
// with stateful zstd decodes each request, once warm,
// into buffers its pooled tickets already have: what the whole process
// allocates per request (the HTTP/2 stack's frames and acks included) stays
// far under one request (under 64 KiB, against about 2 MB a request whose
// buffer is allocated again: on main, one request in six, the largest,
// reallocated every time it came round, as its buffer lost the envelope's
// header at every request it carried). The collector is off for the
// measure, so that sync.Pool keeps the tickets; not under the race
// detector, which drops pooled items at random.
//
// With columns the same holds: otlpcolumns' Decoder, like
// compression.StreamDecoder, grows its output to the declared length and
// an eighth more (growthRoom), so a stream's slightly larger next request
// fits the buffer its ticket has (73-87 KiB a request before it).
func TestStreamSteadyStateAllocs(t *testing.T) {
	for _, columns := range []bool{false, true} {
		name := "zstd"
		if columns {
			name = "columns"
		}
		t.Run(name, func(t *testing.T) {
			defer debug.SetGCPercent(debug.SetGCPercent(-1))
			a := newAllocStream(t, columns)
			for range 24 { // warm: every pooled ticket has met the largest request
				a.encode()
				a.roundTrip()
			}
			const n = 30
			var before, after runtime.MemStats
			var client uint64 // what the client's encoding allocates, not measured
			runtime.ReadMemStats(&before)
			for range n {
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				a.encode()
				runtime.ReadMemStats(&m1)
				client += m1.TotalAlloc - m0.TotalAlloc
				a.roundTrip()
			}
			runtime.ReadMemStats(&after)
			perMsg := (after.TotalAlloc - before.TotalAlloc - client) / n
			t.Logf("%d bytes allocated per request", perMsg)
			if perMsg > 64<<10 {
				t.Fatalf("%d bytes allocated per ~2 MB request in steady state, want under 64 KiB", perMsg)
			}
		})
	}
}
