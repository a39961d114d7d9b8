package kafka

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzSplit feeds arbitrary bytes and limits to both splitters. They must
// not panic, and whatever they accept must come out as pieces within the
// limit that hold every resource (appendResources) or every span, under
// its own trace id (appendByTrace), exactly once.
//
// Seeds: testdata/fuzz/FuzzSplit and the real payloads in ../../testdata/otlp.
func FuzzSplit(f *testing.F) {
	for _, name := range []string{"traces_all_fields.pb", "traces_invalid_ids.pb", "metrics_all_kinds.pb", "logs_all_fields.pb"} {
		msg, err := os.ReadFile(filepath.Join("..", "..", "testdata", "otlp", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(msg, uint16(len(msg)/3))
	}
	f.Fuzz(func(t *testing.T, msg []byte, limit16 uint16) {
		limit := int(limit16)
		dst, pieces, err := appendResources(nil, nil, msg, limit, -1, -1, "resource_spans")
		if err == nil && len(msg) <= limit {
			// Fits: copied as it is, unparsed (the receiver validated it).
			if len(pieces) != 1 || !bytes.Equal(dst, msg) {
				t.Fatalf("a request within the limit was changed")
			}
		} else if err == nil {
			var got [][]byte
			for _, p := range pieces {
				v := dst[p.start:p.end]
				if len(v) > limit && len(pieces) > 1 {
					t.Fatalf("piece of %d bytes over the limit %d", len(v), limit)
				}
				for _, raw := range fields(t, v) {
					if raw[0] == 1<<3|wireLen {
						got = append(got, raw)
					}
				}
			}
			var want [][]byte
			for _, raw := range fields(t, msg) {
				if raw[0] == 1<<3|wireLen {
					want = append(want, raw)
				}
			}
			if !bytes.Equal(bytes.Join(got, nil), bytes.Join(want, nil)) {
				t.Fatalf("resources changed by the split")
			}
		}

		var ts traceSplitter
		dst, pieces, err = ts.appendByTrace(nil, nil, msg, limit, 1, false, "resource_spans", nil)
		if err != nil {
			return
		}
		spans := 0
		for _, p := range pieces {
			v := dst[p.start:p.end]
			if len(v) > limit {
				t.Fatalf("piece of %d bytes over the limit %d", len(v), limit)
			}
			var key string
			if p.keyStart >= 0 {
				key = string(dst[p.keyStart:p.keyEnd])
			}
			for _, s := range decodeSpans(t, v) {
				if s.traceID != key {
					t.Fatalf("span of trace %x in piece keyed %x", s.traceID, key)
				}
				spans++
			}
		}
		if want := len(decodeSpans(t, msg)); spans != want {
			t.Fatalf("pieces hold %d spans, request %d", spans, want)
		}
	})
}

// FuzzPerResource feeds arbitrary bytes to the per-resource split with
// attribute keys and topics (partition_*_by_resource_attributes,
// topic_from_attribute): no panic; what it accepts comes out as one piece
// per resource, each keyed by 16 bytes that depend only on the resource.
//
// Seeds: the real payloads in ../../testdata/otlp.
func FuzzPerResource(f *testing.F) {
	for _, name := range []string{"traces_all_fields.pb", "metrics_all_kinds.pb", "logs_all_fields.pb"} {
		msg, err := os.ReadFile(filepath.Join("..", "..", "testdata", "otlp", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(msg, uint16(len(msg)))
	}
	f.Fuzz(func(t *testing.T, msg []byte, limit16 uint16) {
		var h attrHasher
		topic := func(v []byte) string {
			s, _ := stringAttr(v, "service.name")
			return string(s)
		}
		dst, pieces, err := appendPerResource(nil, nil, msg, int(limit16), &h, true, topic, "resource_metrics")
		if err != nil {
			return
		}
		var resources [][]byte
		for _, raw := range fields(t, msg) {
			if raw[0] == 1<<3|wireLen {
				resources = append(resources, raw)
			}
		}
		if len(pieces) != len(resources) {
			t.Fatalf("%d pieces for %d resources", len(pieces), len(resources))
		}
		for i, p := range pieces {
			if p.keyEnd-p.keyStart != 16 {
				t.Fatalf("piece %d keyed by %d bytes", i, p.keyEnd-p.keyStart)
			}
			_, _, rs, _, _ := nextField(resources[i])
			again, err := h.resourceKey(nil, rs)
			if err != nil || !bytes.Equal(again, dst[p.keyStart:p.keyEnd]) {
				t.Fatalf("resource %d: key %x, hashed alone %x (%v)", i, dst[p.keyStart:p.keyEnd], again, err)
			}
		}
	})
}
