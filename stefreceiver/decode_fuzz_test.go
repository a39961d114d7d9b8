package stefreceiver

import (
	"bytes"
	"testing"

	"github.com/splunk/stef/go/otel/otelstef"
	"github.com/splunk/stef/go/pkg"

	"github.com/otlp-lite/otlp-lite/otlpdecode"
)

// FuzzDecodeMetrics feeds arbitrary bytes to the STEF decoder: it must
// not panic, must stop within its bound, and what it writes must be
// well-formed OTLP whatever the input (testdata/fuzz holds a real stream,
// compressed and not, as seeds), the same with the decoder's shortcuts
// (fastPaths) and without, and, as the stream builds its requests, with
// nothing in them that the pipeline's validation rejects (the promise the
// stream makes to ingest.ExportValidated).
func FuzzDecodeMetrics(f *testing.F) {
	f.Add([]byte("STEF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const limit = 1 << 20
		out, _, _ := DecodeMetrics(nil, bytes.NewReader(data), limit)
		fastPaths = false
		slow, _, _ := DecodeMetrics(nil, bytes.NewReader(data), limit)
		fastPaths = true
		if !bytes.Equal(out, slow) {
			t.Fatalf("the fast paths wrote other bytes than the general path")
		}
		if len(out) > limit+64<<10 {
			t.Fatalf("wrote %d bytes past the %d bound", len(out), limit)
		}
		if _, err := otlpdecode.CheckMetrics(out, &otlpdecode.Options{}); err != nil {
			t.Fatalf("wrote malformed OTLP: %v", err)
		}
		// As the stream builds requests (a bad record left out), it
		// writes what needs no validation (ingest.ExportValidated):
		// nothing the pipeline rejects, and the items it counts.
		req, items := decodeLikeStream(false, data, limit)
		fastPaths = false
		slowReq, _ := decodeLikeStream(false, data, limit)
		fastPaths = true
		if !bytes.Equal(req, slowReq) {
			t.Fatalf("with bad records left out, the fast paths wrote other bytes than the general path")
		}
		res, err := otlpdecode.CheckMetrics(req, &otlpdecode.Options{})
		if err != nil || res.Rejected != 0 || res.Items != items {
			t.Fatalf("validation of what the stream would store: %d items, %d rejected (%s), %v; the builder counted %d", res.Items, res.Rejected, res.FirstRejection, err, items)
		}
	})
}

// FuzzDecodeSpans is FuzzDecodeMetrics for spans.
func FuzzDecodeSpans(f *testing.F) {
	f.Add([]byte("STEF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const limit = 1 << 20
		out, _, _ := DecodeSpans(nil, bytes.NewReader(data), limit)
		fastPaths = false
		slow, _, _ := DecodeSpans(nil, bytes.NewReader(data), limit)
		fastPaths = true
		if !bytes.Equal(out, slow) {
			t.Fatalf("the fast paths wrote other bytes than the general path")
		}
		if len(out) > limit+64<<10 {
			t.Fatalf("wrote %d bytes past the %d bound", len(out), limit)
		}
		if _, err := otlpdecode.CheckTraces(out, &otlpdecode.Options{}); err != nil {
			t.Fatalf("wrote malformed OTLP: %v", err)
		}
		// As the stream builds requests (a bad record left out), it
		// writes what needs no validation (ingest.ExportValidated):
		// nothing the pipeline rejects, and the items it counts.
		req, items := decodeLikeStream(true, data, limit)
		fastPaths = false
		slowReq, _ := decodeLikeStream(true, data, limit)
		fastPaths = true
		if !bytes.Equal(req, slowReq) {
			t.Fatalf("with bad records left out, the fast paths wrote other bytes than the general path")
		}
		res, err := otlpdecode.CheckTraces(req, &otlpdecode.Options{})
		if err != nil || res.Rejected != 0 || res.Items != items {
			t.Fatalf("validation of what the stream would store: %d items, %d rejected (%s), %v; the builder counted %d", res.Items, res.Rejected, res.FirstRejection, err, items)
		}
	})
}

// decodeLikeStream builds one request from a STEF stream as the stream
// does (records that cannot be OTLP are left out and read on from), and
// returns it with the items its builder counted.
func decodeLikeStream(spans bool, data []byte, limit int) ([]byte, int) {
	u := newUnzstd(bytes.NewReader(data))
	var rd recordReader
	var b builder
	if spans {
		r, err := otelstef.NewSpansReader(u)
		if err != nil {
			return nil, 0
		}
		rd, b = r, &spansBuilder{rec: &r.Record, maxRecord: limit}
	} else {
		r, err := otelstef.NewMetricsReader(u)
		if err != nil {
			return nil, 0
		}
		rd, b = r, &metricsBuilder{rec: &r.Record, maxRecord: limit}
	}
	b.reset(nil)
	for b.size() < limit {
		if err := rd.Read(pkg.ReadOptions{}); err != nil {
			break
		}
		_ = b.add() // a bad record leaves nothing
	}
	return b.finish(), b.items()
}
