package otlpclient

import (
	"bytes"
	"testing"

	"github.com/VictoriaMetrics/easyproto"

	"github.com/otlp-lite/otlp-lite/otlpdecode"
)

func TestSpanGenerator(t *testing.T) {
	for _, tc := range []struct{ spans, attrs int }{{500, 10}, {1, 0}, {3, 1}, {100, 4}} {
		a := NewSpanGenerator(tc.spans, tc.attrs, 42)
		b := NewSpanGenerator(tc.spans, tc.attrs, 42)
		batch1, batch2 := a.AppendBatch(nil), a.AppendBatch(nil)
		if !bytes.Equal(batch1, b.AppendBatch(nil)) {
			t.Fatalf("%+v: same seed, different batches", tc)
		}
		if bytes.Equal(batch1, batch2) {
			t.Fatalf("%+v: consecutive batches are identical", tc)
		}
		// The second batch continues the first one's last trace unless
		// the batch size is a multiple of ten: both must be valid.
		for _, batch := range [][]byte{batch1, batch2} {
			res, err := otlpdecode.CheckTraces(batch, &otlpdecode.Options{ValidateUTF8: true})
			if err != nil {
				t.Fatalf("%+v: %v", tc, err)
			}
			if res.Items != tc.spans || res.Rejected != 0 {
				t.Fatalf("%+v: %+v", tc, res)
			}
		}
		checkSpanShape(t, batch1, tc.spans, tc.attrs)
	}
}

// checkSpanShape walks the batch: every span has attrs attributes, two
// integers first, then strings with keys of 1-50 and values of 1-20
// characters.
func checkSpanShape(t *testing.T, batch []byte, spans, attrs int) {
	t.Helper()
	fields := func(src []byte, num uint32) [][]byte {
		var out [][]byte
		var fc easyproto.FieldContext
		for len(src) > 0 {
			var err error
			if src, err = fc.NextField(src); err != nil {
				t.Fatal(err)
			}
			if fc.FieldNum == num {
				d, _ := fc.MessageData()
				out = append(out, d)
			}
		}
		return out
	}
	n := 0
	for _, rs := range fields(batch, 1) {
		for _, ss := range fields(rs, 2) {
			for _, sp := range fields(ss, 2) {
				n++
				kvs := fields(sp, 9)
				if len(kvs) != attrs {
					t.Fatalf("span has %d attributes, want %d", len(kvs), attrs)
				}
				for i, kv := range kvs {
					key, _, _ := easyproto.GetString(kv, 1)
					val, _, _ := easyproto.GetMessageData(kv, 2)
					if i < 2 {
						if _, ok, _ := easyproto.GetInt64(val, 3); !ok {
							t.Fatalf("attribute %d (%s) is not an int", i, key)
						}
						continue
					}
					str, ok, _ := easyproto.GetString(val, 1)
					if !ok || len(key) < 1 || len(key) > 50 || len(str) < 1 || len(str) > 20 {
						t.Fatalf("attribute %d: key %q value %q", i, key, str)
					}
				}
			}
		}
	}
	if n != spans {
		t.Fatalf("%d spans, want %d", n, spans)
	}
}
