package otlpdecode

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlppb"
)

// FuzzSplit feeds arbitrary bytes and limits to both splitters. They must
// not panic, and whatever they accept must come out as pieces within the
// limit that hold every resource (AppendResources) or every span, under
// its own trace id (AppendByTrace), exactly once.
//
// Seeds: testdata/fuzz/FuzzSplit and the real payloads in ../testdata/otlp.
func FuzzSplit(f *testing.F) {
	for _, name := range []string{"traces_all_fields.pb", "traces_invalid_ids.pb", "metrics_all_kinds.pb", "logs_all_fields.pb"} {
		msg, err := os.ReadFile(filepath.Join("..", "testdata", "otlp", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(msg, uint16(len(msg)/3))
	}
	f.Fuzz(func(t *testing.T, msg []byte, limit16 uint16) {
		limit := int(limit16)
		dst, pieces, err := AppendResources(nil, nil, msg, otlp.Traces, limit, -1, -1)
		if err == nil && len(msg) <= limit {
			// Fits: copied as it is, unparsed (the receiver validated it).
			if len(pieces) != 1 || !bytes.Equal(dst, msg) {
				t.Fatalf("a request within the limit was changed")
			}
		} else if err == nil {
			var got [][]byte
			for _, p := range pieces {
				v := dst[p.Start:p.End]
				if len(v) > limit && len(pieces) > 1 {
					t.Fatalf("piece of %d bytes over the limit %d", len(v), limit)
				}
				for _, raw := range rwFields(t, v) {
					if raw[0] == otlppb.ExportTraceServiceRequestResourceSpans<<3|otlppb.WireLen {
						got = append(got, raw)
					}
				}
			}
			var want [][]byte
			for _, raw := range rwFields(t, msg) {
				if raw[0] == otlppb.ExportTraceServiceRequestResourceSpans<<3|otlppb.WireLen {
					want = append(want, raw)
				}
			}
			if !bytes.Equal(bytes.Join(got, nil), bytes.Join(want, nil)) {
				t.Fatalf("resources changed by the split")
			}
		}

		var ts TraceSplitter
		dst, pieces, err = ts.AppendByTrace(nil, nil, msg, otlp.Traces, limit, rwSpanKey, nil)
		if err != nil {
			return
		}
		spans := 0
		for _, p := range pieces {
			v := dst[p.Start:p.End]
			if len(v) > limit {
				t.Fatalf("piece of %d bytes over the limit %d", len(v), limit)
			}
			var key string
			if p.KeyStart >= 0 {
				key = string(dst[p.KeyStart:p.KeyEnd])
			}
			for _, s := range rwDecodeSpans(t, v) {
				if s.traceID != key {
					t.Fatalf("span of trace %x in piece keyed %x", s.traceID, key)
				}
				spans++
			}
		}
		if want := len(rwDecodeSpans(t, msg)); spans != want {
			t.Fatalf("pieces hold %d spans, request %d", spans, want)
		}
	})
}
