//go:build !race

package handler

import (
	"bytes"
	"io"
	"net/http"
	"testing"
)

// TestClientMetadataAllocs: passing client metadata costs nothing when
// no key is configured (the allocations of a whole OTLP/HTTP export are
// those of a handler without the option) nor when a request carries none
// of the keys, and a few allocations per request when it does (the
// entries, the context, the request copy), not per value or per byte.
// Not under the race detector, which drops sync.Pool items at random.
func TestClientMetadataAllocs(t *testing.T) {
	body := traceRequest(goodID)
	allocs := func(keys []string, hdr http.Header) float64 {
		h := New(Config{Sink: nopSink{}, Logger: quietLogger(), MetadataKeys: keys})
		rd := bytes.NewReader(body)
		r, _ := http.NewRequest("POST", "http://x/v1/traces", io.NopCloser(rd))
		r.Header = hdr.Clone()
		r.Header.Set("Content-Type", "application/x-protobuf")
		w := &nopResponseWriter{h: http.Header{}}
		return testing.AllocsPerRun(200, func() {
			rd.Reset(body)
			clear(w.h)
			h.ServeHTTP(w, r)
			if w.status != 0 && w.status != 200 {
				t.Fatalf("status %d", w.status)
			}
		})
	}
	sent := http.Header{"X-Team": {"checkout"}, "X-Route": {"eu-1", "eu-2"}}
	off := allocs(nil, sent)
	absent := allocs([]string{"x-other"}, sent)
	on := allocs([]string{"x-team", "x-route"}, sent)
	t.Logf("allocations per OTLP/HTTP export: option off %v, keys absent %v, keys present %v", off, absent, on)
	if absent != off {
		t.Errorf("keys configured but not sent cost %v allocations, off %v: want the same", absent, off)
	}
	if on > off+4 {
		t.Errorf("keys present cost %v allocations, off %v: want at most 4 more", on, off)
	}
	// The lookup itself, off and absent: nothing.
	h := New(Config{Sink: nopSink{}, Logger: quietLogger(), MetadataKeys: []string{"x-other"}})
	r, _ := http.NewRequest("POST", "http://x/v1/traces", nil)
	r.Header = sent
	if n := testing.AllocsPerRun(100, func() { h.withClientMetadata(r) }); n != 0 {
		t.Errorf("withClientMetadata without the keys allocates %v times", n)
	}
}
