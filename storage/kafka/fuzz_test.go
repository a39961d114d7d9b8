package kafka

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/otlp-lite/otlp-lite/otlppb"
	"github.com/otlp-lite/otlp-lite/storage"
)

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
		dst, pieces, err := appendPerResource(nil, nil, msg, storage.Metrics, int(limit16), &h, true, topic)
		if err != nil {
			return
		}
		var resources [][]byte
		for _, raw := range fields(t, msg) {
			if raw[0] == requestResources<<3|otlppb.WireLen {
				resources = append(resources, raw)
			}
		}
		if len(pieces) != len(resources) {
			t.Fatalf("%d pieces for %d resources", len(pieces), len(resources))
		}
		for i, p := range pieces {
			if p.KeyEnd-p.KeyStart != 16 {
				t.Fatalf("piece %d keyed by %d bytes", i, p.KeyEnd-p.KeyStart)
			}
			var fl otlppb.Field
			fl.Read(resources[i])
			rs, _ := fl.MessageData()
			again, err := h.resourceKey(nil, rs)
			if err != nil || !bytes.Equal(again, dst[p.KeyStart:p.KeyEnd]) {
				t.Fatalf("resource %d: key %x, hashed alone %x (%v)", i, dst[p.KeyStart:p.KeyEnd], again, err)
			}
		}
	})
}

// fields returns the top-level fields of msg, raw.
func fields(t testing.TB, msg []byte) (out [][]byte) {
	t.Helper()
	var f otlppb.Field
	for b := msg; len(b) > 0; {
		rest, err := f.Read(b)
		if err != nil {
			t.Fatalf("cannot parse piece: %v", err)
		}
		out = append(out, b[:len(b)-len(rest)])
		b = rest
	}
	return out
}
