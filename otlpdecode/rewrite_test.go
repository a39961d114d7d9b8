package otlpdecode

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlppb"
)

// Test message builders: just enough protobuf to lay out OTLP requests.

func rwLen(num uint32, parts ...[]byte) []byte {
	body := bytes.Join(parts, nil)
	return append(appendLenField(nil, num, len(body)), body...)
}

func rwVarint(num uint32, v uint64) []byte {
	b := binary.AppendUvarint(nil, uint64(num)<<3|otlppb.WireVarint)
	return binary.AppendUvarint(b, v)
}

// rwNext reads the next field of b with the rewrites' reader: its number,
// its bytes on the wire, its value if length-delimited.
func rwNext(b []byte) (num uint32, raw, value, rest []byte, err error) {
	var f otlppb.Field
	if raw, rest, err = readRaw(&f, b); err != nil {
		return 0, nil, nil, nil, err
	}
	value, _ = f.MessageData()
	return f.FieldNum, raw, value, rest, nil
}

// errMalformed, as a wanted error, stands for any error but ErrTooLarge:
// what the field reader reports about bytes it cannot read.
var errMalformed = errors.New("malformed")

// rwIsErr reports whether err is want (errMalformed: any error but
// ErrTooLarge).
func rwIsErr(err, want error) bool {
	if want == errMalformed {
		return err != nil && !errors.Is(err, ErrTooLarge)
	}
	return errors.Is(err, want)
}

// rwUnknownField is a field number no export request has.
const rwUnknownField = 9

func rwTID(b byte) []byte { return bytes.Repeat([]byte{b}, 16) }

// rwAppendHexID appends id as lower-case hex, or nothing when it is all
// zero: the Kafka sink's key (the Collector's) for a span's trace id.
func rwAppendHexID(dst []byte, id [16]byte) []byte {
	if id == ([16]byte{}) {
		return dst
	}
	return hex.AppendEncode(dst, id[:])
}

// rwSpanKey keys a trace's piece as the Kafka sink keys spans: by its hex
// trace id, the empty key for the zero trace id.
func rwSpanKey(dst []byte, id [16]byte) ([]byte, bool) { return rwAppendHexID(dst, id), true }

// rwHexID is the key of the trace id id.
func rwHexID(id []byte) string { return string(rwAppendHexID(nil, [16]byte(id))) }

// rwSpan is a ScopeSpans.spans field: a Span with a trace_id and a name.
func rwSpan(traceID []byte, name string) []byte {
	return rwLen(otlppb.ScopeSpansSpans, rwLen(otlppb.SpanTraceID, traceID), rwLen(otlppb.SpanName, []byte(name)))
}

// rwResource is a resource_spans field: a ResourceSpans with a resource
// holding one attribute-ish payload, the given ScopeSpans and a schema_url.
func rwResource(name string, scopes ...[]byte) []byte {
	parts := [][]byte{rwLen(otlppb.ResourceSpansResource, rwLen(otlppb.ResourceAttributes, []byte(name)))}
	parts = append(parts, scopes...)
	parts = append(parts, rwLen(otlppb.ResourceSpansSchemaURL, []byte("https://opentelemetry.io/schemas/1.26.0")))
	return rwLen(otlppb.ExportTraceServiceRequestResourceSpans, parts...)
}

// rwScope is a scope_spans field: a ScopeSpans with a scope named name and
// the given spans.
func rwScope(name string, spans ...[]byte) []byte {
	scope := rwLen(otlppb.ScopeSpansScope, rwLen(otlppb.InstrumentationScopeName, []byte(name)))
	return rwLen(otlppb.ResourceSpansScopeSpans, append([][]byte{scope}, spans...)...)
}

// rwFields returns the top-level fields of msg, raw.
func rwFields(t testing.TB, msg []byte) (out [][]byte) {
	t.Helper()
	for b := msg; len(b) > 0; {
		_, raw, _, rest, err := rwNext(b)
		if err != nil {
			t.Fatalf("cannot parse piece: %v", err)
		}
		out = append(out, raw)
		b = rest
	}
	return out
}

func TestAppendResources(t *testing.T) {
	r := func(n int) []byte { return rwResource(string(bytes.Repeat([]byte{'r'}, n))) }
	r1, r2, r3 := r(100), r(200), r(300)
	unknown := rwVarint(rwUnknownField, 7)
	group := []byte{rwUnknownField<<3 | otlppb.WireStartGroup, 1 << 3, 1, rwUnknownField<<3 | otlppb.WireEndGroup}
	tests := []struct {
		name    string
		msg     []byte
		limit   int
		want    [][]byte // expected pieces
		wantErr error
	}{
		{name: "fits", msg: rwCat(r1, r2, r3), limit: 1 << 20, want: [][]byte{rwCat(r1, r2, r3)}},
		{name: "empty request", msg: nil, limit: 100, want: [][]byte{nil}},
		{name: "exactly the limit", msg: rwCat(r1, r2), limit: len(r1) + len(r2), want: [][]byte{rwCat(r1, r2)}},
		{name: "one per piece", msg: rwCat(r1, r2, r3), limit: len(r3), want: [][]byte{r1, r2, r3}},
		{name: "greedy packing", msg: rwCat(r1, r2, r1, r1), limit: len(r1) + len(r2), want: [][]byte{rwCat(r1, r2), rwCat(r1, r1)}},
		{name: "unknown fields repeated in every piece", msg: rwCat(r1, unknown, r2), limit: len(r2) + len(unknown),
			want: [][]byte{rwCat(unknown, r1), rwCat(unknown, r2)}},
		// A group (deprecated, skipped by Check and by protobuf-go as an
		// unknown field) is carried like one.
		{name: "group repeated in every piece", msg: rwCat(r1, group, r2), limit: len(r2) + len(group),
			want: [][]byte{rwCat(group, r1), rwCat(group, r2)}},
		{name: "one resource too large", msg: rwCat(r1, r3), limit: len(r3) - 1, wantErr: ErrTooLarge},
		{name: "only unknown fields, too large", msg: bytes.Repeat(unknown, 10), limit: 5, wantErr: ErrTooLarge},
		{name: "truncated", msg: rwCat(r1, r2)[:len(r1)+10], limit: len(r1), wantErr: errMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := []byte("kept")
			dst, pieces, err := AppendResources(prefix, nil, tt.msg, otlp.Traces, tt.limit, -1, -1)
			if tt.wantErr != nil {
				if !rwIsErr(err, tt.wantErr) {
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
				got := dst[p.Start:p.End]
				if !bytes.Equal(got, tt.want[i]) {
					t.Errorf("piece %d: %d bytes, want %d", i, len(got), len(tt.want[i]))
				}
				if len(got) > tt.limit {
					t.Errorf("piece %d: %d bytes over the limit %d", i, len(got), tt.limit)
				}
				if p.KeyStart >= 0 {
					t.Errorf("piece %d has a key", i)
				}
			}
		})
	}
}

func rwCat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// rwDecodedSpan is what a test needs of a span in a piece: its resource and
// rwScope (raw fields other than the children) and itself.
type rwDecodedSpan struct {
	resource, scope, span string
	traceID               string
}

// rwDecodeSpans walks a traces request and lists its spans with their
// resource and scope.
func rwDecodeSpans(t testing.TB, msg []byte) (out []rwDecodedSpan) {
	t.Helper()
	for b := msg; len(b) > 0; {
		num, _, rs, rest, err := rwNext(b)
		if err != nil {
			t.Fatal(err)
		}
		b = rest
		if num != otlppb.ExportTraceServiceRequestResourceSpans {
			continue
		}
		rsHdr := string(rwAppendExcept(nil, rs, otlppb.ResourceSpansScopeSpans))
		for rb := rs; len(rb) > 0; {
			num, _, ss, rest, err := rwNext(rb)
			if err != nil {
				t.Fatal(err)
			}
			rb = rest
			if num != otlppb.ResourceSpansScopeSpans {
				continue
			}
			ssHdr := string(rwAppendExcept(nil, ss, otlppb.ScopeSpansSpans))
			for sb := ss; len(sb) > 0; {
				num, raw, sp, rest, err := rwNext(sb)
				if err != nil {
					t.Fatal(err)
				}
				sb = rest
				if num != otlppb.ScopeSpansSpans {
					continue
				}
				id, _ := traceID(sp, otlppb.SpanTraceID)
				d := rwDecodedSpan{resource: rsHdr, scope: ssHdr, span: string(raw)}
				d.traceID = string(rwAppendHexID(nil, id))
				out = append(out, d)
			}
		}
	}
	return out
}

func TestAppendByTrace(t *testing.T) {
	a, b, c := rwTID('a'), rwTID('b'), rwTID('c')
	bad := []byte{1, 2, 3}
	msg := rwCat(
		rwResource("svc-1",
			rwScope("lib-1", rwSpan(a, "a1"), rwSpan(b, "b1"), rwSpan(a, "a2")),
			rwScope("lib-2", rwSpan(c, "c1"), rwSpan(bad, "bad1"))),
		rwVarint(rwUnknownField, 1), // an unknown top-level field: copied into every piece
		rwResource("svc-2",
			rwScope("lib-3", rwSpan(b, "b2"), rwSpan(a, "a3"))),
		rwResource("svc-3"), // no spans: nothing to carry
	)
	var ts TraceSplitter
	dst, pieces, err := ts.AppendByTrace(nil, nil, msg, otlp.Traces, 1<<20, rwSpanKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	all := rwDecodeSpans(t, msg)
	wantKeys := []string{rwHexID(a), rwHexID(b), rwHexID(c), ""} // first-appearance order, the invalid id's group last here
	if len(pieces) != len(wantKeys) {
		t.Fatalf("got %d pieces, want %d", len(pieces), len(wantKeys))
	}
	seen := 0
	for i, p := range pieces {
		var key string
		if p.KeyStart >= 0 {
			key = string(dst[p.KeyStart:p.KeyEnd])
		}
		if key != wantKeys[i] {
			t.Errorf("piece %d: key %x, want %x", i, key, wantKeys[i])
		}
		value := dst[p.Start:p.End]
		if !bytes.HasPrefix(value, rwVarint(rwUnknownField, 1)) {
			t.Errorf("piece %d lost the unknown top-level field", i)
		}
		// The piece holds exactly this trace's spans, in request order,
		// each under its original resource and scope.
		var want []rwDecodedSpan
		for _, s := range all {
			if s.traceID == key {
				want = append(want, s)
			}
		}
		got := rwDecodeSpans(t, value)
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
	a := rwTID('a')
	big := rwSpan(a, string(bytes.Repeat([]byte{'x'}, 500)))
	tests := []struct {
		name    string
		msg     []byte
		limit   int
		wantErr error
	}{
		{name: "one trace's resource too large", msg: rwResource("svc", rwScope("lib", big, big)), limit: 800, wantErr: ErrTooLarge},
		{name: "truncated", msg: rwResource("svc", rwScope("lib", big))[:100], limit: 800, wantErr: errMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ts TraceSplitter
			if _, _, err := ts.AppendByTrace(nil, nil, tt.msg, otlp.Traces, tt.limit, rwSpanKey, nil); !rwIsErr(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

// TestAppendByTraceLimit: one trace spread over resources larger together
// than the limit becomes several pieces with the same key.
func TestAppendByTraceLimit(t *testing.T) {
	a := rwTID('a')
	big := rwSpan(a, string(bytes.Repeat([]byte{'x'}, 500)))
	msg := rwCat(rwResource("svc-1", rwScope("lib", big)), rwResource("svc-2", rwScope("lib", big)))
	var ts TraceSplitter
	dst, pieces, err := ts.AppendByTrace(nil, nil, msg, otlp.Traces, 700, rwSpanKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(pieces) != 2 {
		t.Fatalf("got %d pieces, want 2", len(pieces))
	}
	for i, p := range pieces {
		if string(dst[p.KeyStart:p.KeyEnd]) != rwHexID(a) {
			t.Errorf("piece %d: key %x", i, dst[p.KeyStart:p.KeyEnd])
		}
		if p.End-p.Start > 700 {
			t.Errorf("piece %d: %d bytes", i, p.End-p.Start)
		}
	}
}

// TestSplitRealPayloads splits the repository's real payloads and checks
// with otlpdecode that every piece is a valid request and that no item is
// lost or duplicated.
func TestSplitRealPayloads(t *testing.T) {
	tests := []struct {
		file  string
		sig   otlp.Signal
		check func([]byte, *Options) (Result, error)
	}{
		{"traces_500x10.pb", otlp.Traces, CheckTraces},
		{"traces_all_fields.pb", otlp.Traces, CheckTraces},
		{"metrics_all_kinds.pb", otlp.Metrics, CheckMetrics},
		{"logs_all_fields.pb", otlp.Logs, CheckLogs},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			msg, err := os.ReadFile(filepath.Join("..", "testdata", "otlp", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			want, err := tt.check(msg, nil)
			if err != nil {
				t.Fatal(err)
			}
			count := func(dst []byte, pieces []Piece) (items int) {
				for _, p := range pieces {
					res, err := tt.check(dst[p.Start:p.End], nil)
					if err != nil {
						t.Fatalf("piece is not a valid request: %v", err)
					}
					items += res.Items
				}
				return items
			}
			// The smallest limit that fits the largest resource.
			limit := 0
			for _, f := range rwFields(t, msg) {
				limit = max(limit, len(f))
			}
			dst, pieces, err := AppendResources(nil, nil, msg, tt.sig, limit, -1, -1)
			if err != nil {
				t.Fatal(err)
			}
			if got := count(dst, pieces); got != want.Items {
				t.Errorf("split by resource: %d items, want %d", got, want.Items)
			}
			if !strings.HasPrefix(tt.file, "traces") {
				return
			}
			var ts TraceSplitter
			dst, pieces, err = ts.AppendByTrace(nil, nil, msg, otlp.Traces, 1<<20, rwSpanKey, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := count(dst, pieces); got != want.Items {
				t.Errorf("split by trace: %d items, want %d", got, want.Items)
			}
			for _, p := range pieces {
				for _, s := range rwDecodeSpans(t, dst[p.Start:p.End]) {
					if p.KeyStart < 0 || s.traceID != string(dst[p.KeyStart:p.KeyEnd]) {
						t.Fatalf("span of trace %x in piece keyed %x", s.traceID, dst[p.KeyStart:p.KeyEnd])
					}
				}
			}
			t.Logf("%d bytes, %d items: %d pieces by trace id", len(msg), want.Items, len(pieces))
		})
	}
}

// TestSplitAllocs: with warm buffers, splitting allocates nothing.
func TestSplitAllocs(t *testing.T) {
	msg, err := os.ReadFile(filepath.Join("..", "testdata", "otlp", "traces_500x10.pb"))
	if err != nil {
		t.Fatal(err)
	}
	// 20 copies of the request: 20 resources, split into pieces of 3.
	many := bytes.Repeat(msg, 20)
	var (
		dst    []byte
		pieces []Piece
		ts     TraceSplitter
	)
	for name, f := range map[string]func(){
		"appendResources": func() {
			dst, pieces, err = AppendResources(dst[:0], pieces[:0], many, otlp.Traces, 3*len(msg), -1, -1)
		},
		"appendByTrace": func() {
			dst, pieces, err = ts.AppendByTrace(dst[:0], pieces[:0], msg, otlp.Traces, 1<<20, rwSpanKey, nil)
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

// rwAppendExcept appends the fields of the encoded message body other than
// field num.
func rwAppendExcept(dst, body []byte, num uint32) []byte {
	for b := body; len(b) > 0; {
		n, raw, _, rest, err := rwNext(b)
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
