package kafka

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otlp-lite/otlp-lite/otlpdecode"
)

// Test message builders: just enough protobuf to lay out OTLP requests.

func lenf(num int, parts ...[]byte) []byte {
	body := bytes.Join(parts, nil)
	return append(appendLenField(nil, num, len(body)), body...)
}

func varintf(num int, v uint64) []byte {
	b := binary.AppendUvarint(nil, uint64(num)<<3|wireVarint)
	return binary.AppendUvarint(b, v)
}

func tid(b byte) []byte { return bytes.Repeat([]byte{b}, 16) }

// hexID is the Collector's key for the trace id id.
func hexID(id []byte) string { return string(appendHexID(nil, [16]byte(id))) }

// span is a Span with a trace_id (1) and a name (5).
func span(traceID []byte, name string) []byte {
	return lenf(2, lenf(1, traceID), lenf(5, []byte(name)))
}

// resource is a ResourceSpans with a resource (1) holding one attribute-ish
// payload, the given ScopeSpans (2) and a schema_url (3).
func resource(name string, scopes ...[]byte) []byte {
	parts := [][]byte{lenf(1, lenf(1, []byte(name)))}
	parts = append(parts, scopes...)
	parts = append(parts, lenf(3, []byte("https://opentelemetry.io/schemas/1.26.0")))
	return lenf(1, parts...)
}

// scope is a ScopeSpans with a scope (1) named name and the given spans.
func scope(name string, spans ...[]byte) []byte {
	return lenf(2, append([][]byte{lenf(1, lenf(1, []byte(name)))}, spans...)...)
}

// fields returns the top-level fields of msg, raw.
func fields(t testing.TB, msg []byte) (out [][]byte) {
	t.Helper()
	for b := msg; len(b) > 0; {
		_, raw, _, rest, err := nextField(b)
		if err != nil {
			t.Fatalf("cannot parse piece: %v", err)
		}
		out = append(out, raw)
		b = rest
	}
	return out
}

func TestAppendResources(t *testing.T) {
	r := func(n int) []byte { return resource(string(bytes.Repeat([]byte{'r'}, n))) }
	r1, r2, r3 := r(100), r(200), r(300)
	unknown := varintf(9, 7)
	tests := []struct {
		name    string
		msg     []byte
		limit   int
		want    [][]byte // expected pieces
		wantErr error
	}{
		{name: "fits", msg: cat(r1, r2, r3), limit: 1 << 20, want: [][]byte{cat(r1, r2, r3)}},
		{name: "empty request", msg: nil, limit: 100, want: [][]byte{nil}},
		{name: "exactly the limit", msg: cat(r1, r2), limit: len(r1) + len(r2), want: [][]byte{cat(r1, r2)}},
		{name: "one per piece", msg: cat(r1, r2, r3), limit: len(r3), want: [][]byte{r1, r2, r3}},
		{name: "greedy packing", msg: cat(r1, r2, r1, r1), limit: len(r1) + len(r2), want: [][]byte{cat(r1, r2), cat(r1, r1)}},
		{name: "unknown fields repeated in every piece", msg: cat(r1, unknown, r2), limit: len(r2) + len(unknown),
			want: [][]byte{cat(unknown, r1), cat(unknown, r2)}},
		{name: "one resource too large", msg: cat(r1, r3), limit: len(r3) - 1, wantErr: ErrTooLarge},
		{name: "only unknown fields, too large", msg: bytes.Repeat(unknown, 10), limit: 5, wantErr: ErrTooLarge},
		{name: "truncated", msg: cat(r1, r2)[:len(r1)+10], limit: len(r1), wantErr: errTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := []byte("kept")
			dst, pieces, err := appendResources(prefix, nil, tt.msg, tt.limit, -1, -1, "resource_spans")
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(dst, prefix) {
				t.Fatal("dst prefix overwritten")
			}
			if len(pieces) != len(tt.want) {
				t.Fatalf("got %d pieces, want %d", len(pieces), len(tt.want))
			}
			for i, p := range pieces {
				got := dst[p.start:p.end]
				if !bytes.Equal(got, tt.want[i]) {
					t.Errorf("piece %d: %d bytes, want %d", i, len(got), len(tt.want[i]))
				}
				if len(got) > tt.limit {
					t.Errorf("piece %d: %d bytes over the limit %d", i, len(got), tt.limit)
				}
				if p.keyStart >= 0 {
					t.Errorf("piece %d has a key", i)
				}
			}
		})
	}
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// decodedSpan is what a test needs of a span in a piece: its resource and
// scope (raw fields other than the children) and itself.
type decodedSpan struct {
	resource, scope, span string
	traceID               string
}

// decodeSpans walks a traces request and lists its spans with their
// resource and scope.
func decodeSpans(t testing.TB, msg []byte) (out []decodedSpan) {
	t.Helper()
	for b := msg; len(b) > 0; {
		num, _, rs, rest, err := nextField(b)
		if err != nil {
			t.Fatal(err)
		}
		b = rest
		if num != 1 {
			continue
		}
		rsHdr := string(appendExcept(nil, rs, 2))
		for rb := rs; len(rb) > 0; {
			num, _, ss, rest, err := nextField(rb)
			if err != nil {
				t.Fatal(err)
			}
			rb = rest
			if num != 2 {
				continue
			}
			ssHdr := string(appendExcept(nil, ss, 2))
			for sb := ss; len(sb) > 0; {
				num, raw, sp, rest, err := nextField(sb)
				if err != nil {
					t.Fatal(err)
				}
				sb = rest
				if num != 2 {
					continue
				}
				id, _ := traceID(sp, 1)
				d := decodedSpan{resource: rsHdr, scope: ssHdr, span: string(raw)}
				d.traceID = string(appendHexID(nil, id))
				out = append(out, d)
			}
		}
	}
	return out
}

func TestAppendByTrace(t *testing.T) {
	a, b, c := tid('a'), tid('b'), tid('c')
	bad := []byte{1, 2, 3}
	msg := cat(
		resource("svc-1",
			scope("lib-1", span(a, "a1"), span(b, "b1"), span(a, "a2")),
			scope("lib-2", span(c, "c1"), span(bad, "bad1"))),
		varintf(9, 1), // an unknown top-level field: copied into every piece
		resource("svc-2",
			scope("lib-3", span(b, "b2"), span(a, "a3"))),
		resource("svc-3"), // no spans: nothing to carry
	)
	var ts traceSplitter
	dst, pieces, err := ts.appendByTrace(nil, nil, msg, 1<<20, 1, false, "resource_spans", nil)
	if err != nil {
		t.Fatal(err)
	}
	all := decodeSpans(t, msg)
	wantKeys := []string{hexID(a), hexID(b), hexID(c), ""} // first-appearance order, the invalid id's group last here
	if len(pieces) != len(wantKeys) {
		t.Fatalf("got %d pieces, want %d", len(pieces), len(wantKeys))
	}
	seen := 0
	for i, p := range pieces {
		var key string
		if p.keyStart >= 0 {
			key = string(dst[p.keyStart:p.keyEnd])
		}
		if key != wantKeys[i] {
			t.Errorf("piece %d: key %x, want %x", i, key, wantKeys[i])
		}
		value := dst[p.start:p.end]
		if !bytes.HasPrefix(value, varintf(9, 1)) {
			t.Errorf("piece %d lost the unknown top-level field", i)
		}
		// The piece holds exactly this trace's spans, in request order,
		// each under its original resource and scope.
		var want []decodedSpan
		for _, s := range all {
			if s.traceID == key {
				want = append(want, s)
			}
		}
		got := decodeSpans(t, value)
		if len(got) != len(want) {
			t.Fatalf("piece %d: %d spans, want %d", i, len(got), len(want))
		}
		for j := range got {
			if got[j] != want[j] {
				t.Errorf("piece %d span %d: got %+v, want %+v", i, j, got[j], want[j])
			}
		}
		seen += len(got)
	}
	if seen != len(all) {
		t.Errorf("pieces hold %d spans, request %d", seen, len(all))
	}
}

func TestAppendByTraceErrors(t *testing.T) {
	a := tid('a')
	big := span(a, string(bytes.Repeat([]byte{'x'}, 500)))
	tests := []struct {
		name    string
		msg     []byte
		limit   int
		wantErr error
	}{
		{name: "one trace's resource too large", msg: resource("svc", scope("lib", big, big)), limit: 800, wantErr: ErrTooLarge},
		{name: "truncated", msg: resource("svc", scope("lib", big))[:100], limit: 800, wantErr: errTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ts traceSplitter
			if _, _, err := ts.appendByTrace(nil, nil, tt.msg, tt.limit, 1, false, "resource_spans", nil); !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

// TestAppendByTraceLimit: one trace spread over resources larger together
// than the limit becomes several pieces with the same key.
func TestAppendByTraceLimit(t *testing.T) {
	a := tid('a')
	big := span(a, string(bytes.Repeat([]byte{'x'}, 500)))
	msg := cat(resource("svc-1", scope("lib", big)), resource("svc-2", scope("lib", big)))
	var ts traceSplitter
	dst, pieces, err := ts.appendByTrace(nil, nil, msg, 700, 1, false, "resource_spans", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(pieces) != 2 {
		t.Fatalf("got %d pieces, want 2", len(pieces))
	}
	for i, p := range pieces {
		if string(dst[p.keyStart:p.keyEnd]) != hexID(a) {
			t.Errorf("piece %d: key %x", i, dst[p.keyStart:p.keyEnd])
		}
		if p.end-p.start > 700 {
			t.Errorf("piece %d: %d bytes", i, p.end-p.start)
		}
	}
}

// TestSplitRealPayloads splits the repository's real payloads and checks
// with otlpdecode that every piece is a valid request and that no item is
// lost or duplicated.
func TestSplitRealPayloads(t *testing.T) {
	tests := []struct {
		file  string
		check func([]byte, *otlpdecode.Options) (otlpdecode.Result, error)
	}{
		{"traces_500x10.pb", otlpdecode.CheckTraces},
		{"traces_all_fields.pb", otlpdecode.CheckTraces},
		{"metrics_all_kinds.pb", otlpdecode.CheckMetrics},
		{"logs_all_fields.pb", otlpdecode.CheckLogs},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			msg, err := os.ReadFile(filepath.Join("..", "..", "testdata", "otlp", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			want, err := tt.check(msg, nil)
			if err != nil {
				t.Fatal(err)
			}
			count := func(dst []byte, pieces []piece) (items int) {
				for _, p := range pieces {
					res, err := tt.check(dst[p.start:p.end], nil)
					if err != nil {
						t.Fatalf("piece is not a valid request: %v", err)
					}
					items += res.Items
				}
				return items
			}
			// The smallest limit that fits the largest resource.
			limit := 0
			for _, f := range fields(t, msg) {
				limit = max(limit, len(f))
			}
			dst, pieces, err := appendResources(nil, nil, msg, limit, -1, -1, "resource")
			if err != nil {
				t.Fatal(err)
			}
			if got := count(dst, pieces); got != want.Items {
				t.Errorf("split by resource: %d items, want %d", got, want.Items)
			}
			if !strings.HasPrefix(tt.file, "traces") {
				return
			}
			var ts traceSplitter
			dst, pieces, err = ts.appendByTrace(nil, nil, msg, 1<<20, 1, false, "resource_spans", nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := count(dst, pieces); got != want.Items {
				t.Errorf("split by trace: %d items, want %d", got, want.Items)
			}
			for _, p := range pieces {
				for _, s := range decodeSpans(t, dst[p.start:p.end]) {
					if p.keyStart < 0 || s.traceID != string(dst[p.keyStart:p.keyEnd]) {
						t.Fatalf("span of trace %x in piece keyed %x", s.traceID, dst[p.keyStart:p.keyEnd])
					}
				}
			}
			t.Logf("%d bytes, %d items: %d pieces by trace id", len(msg), want.Items, len(pieces))
		})
	}
}

// TestSplitAllocs: with warm buffers, splitting allocates nothing.
func TestSplitAllocs(t *testing.T) {
	msg, err := os.ReadFile(filepath.Join("..", "..", "testdata", "otlp", "traces_500x10.pb"))
	if err != nil {
		t.Fatal(err)
	}
	// 20 copies of the request: 20 resources, split into pieces of 3.
	many := bytes.Repeat(msg, 20)
	var (
		dst    []byte
		pieces []piece
		ts     traceSplitter
	)
	for name, f := range map[string]func(){
		"appendResources": func() {
			dst, pieces, err = appendResources(dst[:0], pieces[:0], many, 3*len(msg), -1, -1, "resource_spans")
		},
		"appendByTrace": func() {
			dst, pieces, err = ts.appendByTrace(dst[:0], pieces[:0], msg, 1<<20, 1, false, "resource_spans", nil)
		},
	} {
		f()
		if err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(20, f); n != 0 {
			t.Errorf("%s: %v allocs per run, want 0", name, n)
		}
	}
}

// appendExcept appends the fields of the encoded message body other than
// field num.
func appendExcept(dst, body []byte, num int) []byte {
	for b := body; len(b) > 0; {
		n, raw, _, rest, err := nextField(b)
		if err != nil {
			return dst // parse already validated body
		}
		if n != num {
			dst = append(dst, raw...)
		}
		b = rest
	}
	return dst
}
