package otlpclient

import (
	"encoding/binary"
	"math/rand/v2"

	"github.com/VictoriaMetrics/easyproto"

	"github.com/otlp-lite/otlp-lite/otlppb"
)

// SpanGenerator makes synthetic trace batches shaped like the benchmark of
// the OTLP proposal (OTEP 0035, "Appendix B - Performance Benchmarks"):
// every span has a trace and span id, a name, a kind, start and end times,
// and Attrs attributes: two integers (the span's and the trace's sequence
// numbers), then string attributes with random keys of 1-50 and random
// values of 1-20 characters. The random source has a fixed seed, so two
// generators with the same parameters produce the same batches.
//
// A SpanGenerator is not safe for concurrent use.
type SpanGenerator struct {
	SpansPerBatch int
	Attrs         int

	rng   *rand.Rand
	mp    easyproto.MarshalerPool
	seq   uint64
	trace uint64
	// traceID is the current trace's id: a trace spans batches when
	// SpansPerBatch is not a multiple of ten.
	traceID [16]byte
	str     []byte
	now     uint64
}

// NewSpanGenerator returns a generator of batches of spansPerBatch spans
// with attrs attributes each, seeded with seed.
func NewSpanGenerator(spansPerBatch, attrs int, seed uint64) *SpanGenerator {
	return &SpanGenerator{
		SpansPerBatch: spansPerBatch,
		Attrs:         attrs,
		rng:           rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		now:           1_700_000_000_000_000_000, // a fixed start time keeps batches reproducible
	}
}

const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// randString returns a random alphanumeric string of length in [lo, hi],
// valid UTF-8 so that a validating receiver accepts it. The result aliases
// g.str and is valid until the next call; the marshaler copies it at once
// (a string and a bytes field have the same encoding).
func (g *SpanGenerator) randString(lo, hi int) []byte {
	n := lo + g.rng.IntN(hi-lo+1)
	g.str = g.str[:0]
	for range n {
		g.str = append(g.str, alnum[g.rng.IntN(len(alnum))])
	}
	return g.str
}

// AppendBatch appends one serialized ExportTraceServiceRequest to dst:
//
//	message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
//	message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
//	message Resource { repeated KeyValue attributes = 1; }
//	message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; }
//	message InstrumentationScope { string name = 1; string version = 2; }
//	message Span {
//	  bytes trace_id = 1; bytes span_id = 2; string name = 5; SpanKind kind = 6;
//	  fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8;
//	  repeated KeyValue attributes = 9;
//	}
//	message KeyValue { string key = 1; AnyValue value = 2; }
//	message AnyValue { oneof value { string string_value = 1; int64 int_value = 3; } }
func (g *SpanGenerator) AppendBatch(dst []byte) []byte {
	m := g.mp.Get()
	rs := m.MessageMarshaler().AppendMessage(otlppb.ExportTraceServiceRequestResourceSpans)
	res := rs.AppendMessage(otlppb.ResourceSpansResource)
	kv := res.AppendMessage(otlppb.ResourceAttributes)
	kv.AppendString(otlppb.KeyValueKey, "service.name")
	kv.AppendMessage(otlppb.KeyValueValue).AppendString(otlppb.AnyValueStringValue, "otlp-lite-loadgen")
	ss := rs.AppendMessage(otlppb.ResourceSpansScopeSpans)
	scope := ss.AppendMessage(otlppb.ScopeSpansScope)
	scope.AppendString(otlppb.InstrumentationScopeName, "otlp-lite/loadgen")
	scope.AppendString(otlppb.InstrumentationScopeVersion, "1")

	var spanID [8]byte
	for range g.SpansPerBatch {
		g.seq++
		if g.seq%10 == 1 { // ten spans per trace
			g.trace++
			binary.BigEndian.PutUint64(g.traceID[:8], g.rng.Uint64())
			binary.BigEndian.PutUint64(g.traceID[8:], g.trace)
		}
		binary.BigEndian.PutUint64(spanID[:], g.rng.Uint64()|1) // never the invalid all-zero id
		g.now += 1_000_000
		sp := ss.AppendMessage(otlppb.ScopeSpansSpans)
		sp.AppendBytes(otlppb.SpanTraceID, g.traceID[:])
		sp.AppendBytes(otlppb.SpanSpanID, spanID[:])
		sp.AppendString(otlppb.SpanName, "load-generator-span")
		sp.AppendInt32(otlppb.SpanKind, 3) // SPAN_KIND_CLIENT
		sp.AppendFixed64(otlppb.SpanStartTimeUnixNano, g.now)
		sp.AppendFixed64(otlppb.SpanEndTimeUnixNano, g.now+uint64(g.rng.IntN(1_000_000)))
		for i := range g.Attrs {
			a := sp.AppendMessage(otlppb.SpanAttributes)
			switch i {
			case 0:
				a.AppendString(otlppb.KeyValueKey, "load_generator.span_seq_num")
				a.AppendMessage(otlppb.KeyValueValue).AppendInt64(otlppb.AnyValueIntValue, int64(g.seq))
			case 1:
				a.AppendString(otlppb.KeyValueKey, "load_generator.trace_seq_num")
				a.AppendMessage(otlppb.KeyValueValue).AppendInt64(otlppb.AnyValueIntValue, int64(g.trace))
			default:
				// A string and a bytes field have the same encoding.
				a.AppendBytes(otlppb.KeyValueKey, g.randString(1, 50))
				a.AppendMessage(otlppb.KeyValueValue).AppendBytes(otlppb.AnyValueStringValue, g.randString(1, 20))
			}
		}
	}
	dst = m.Marshal(dst)
	g.mp.Put(m)
	return dst
}
