package otlpdecode

import (
	"encoding/binary"
	"fmt"

	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlppb"
)

// TraceSplitter regroups the spans of a traces request, or the log records
// of a logs request, by trace id (for Kafka's partitioning by trace id).
// Its slices and map are reused between requests (keep it in a sync.Pool),
// so regrouping allocates only while they grow. It is not safe for
// concurrent use.
type TraceSplitter struct {
	shape traceShape
	rs    []msgRef
	ss    []msgRef
	spans []spanRef
	hdrs  [][]byte // the fields of resources and scopes other than their children
	ids   map[[16]byte]int32
	keys  [][16]byte // per group; zero: items without a valid trace id
	off   []int32    // group g's spans are order[off[g]:off[g+1]]
	order []int32
	tmp   []byte
}

// traceShape is where a traces or a logs request keeps its items and their
// trace ids: the two have the same shape.
type traceShape struct {
	resources uint32 // the request's repeated ResourceSpans/ResourceLogs
	scopes    uint32 // the resource's repeated ScopeSpans/ScopeLogs
	items     uint32 // the scope's repeated Span/LogRecord
	traceID   uint32 // the item's trace_id
	// The names of resources, scopes and items, for errors.
	resourcesName, scopesName, itemsName string
}

var (
	spansShape = traceShape{
		otlppb.ExportTraceServiceRequestResourceSpans, otlppb.ResourceSpansScopeSpans, otlppb.ScopeSpansSpans, otlppb.SpanTraceID,
		"resource_spans", "scope_spans", "spans",
	}
	logsShape = traceShape{
		otlppb.ExportLogsServiceRequestResourceLogs, otlppb.ResourceLogsScopeLogs, otlppb.ScopeLogsLogRecords, otlppb.LogRecordTraceID,
		"resource_logs", "scope_logs", "log_records",
	}
)

// appendGroup's one-byte tags (lenFieldSize) hold for both shapes.
const _ = uint(15 - max(otlppb.ExportTraceServiceRequestResourceSpans, otlppb.ResourceSpansScopeSpans,
	otlppb.ExportLogsServiceRequestResourceLogs, otlppb.ResourceLogsScopeLogs))

// msgRef is a ResourceSpans or ScopeSpans: its fields other than the
// repeated child (scope_spans, spans) are hdrs[hdrStart:hdrEnd], hdr bytes
// in all; and its parent index.
type msgRef struct {
	hdrStart, hdrEnd int32
	hdr              int
	parent           int32
}

type spanRef struct {
	raw   []byte // the whole `spans` field: tag, length, Span
	ss    int32
	group int32
}

// AppendByTrace appends the request msg of signal sig (otlp.Traces, or
// otlp.Logs: the two have the same shape) to dst as one piece per trace id
// (more if one trace's items exceed limit), in the order the trace ids
// first appear, each keyed by what key appends to dst for its trace id
// (ok false: the piece has no key). With dest, each piece's Dest is dest
// of the trace's whole request (before it is cut to the limit), so that a
// trace's pieces share one destination. storage/kafka keys the pieces as
// the OpenTelemetry Collector's kafkaexporter does with
// partition_traces_by_id and partition_logs_by_trace_id, so that every
// span of a trace lands in the partition the Collector would choose.
//
// The Collector writes one record per trace per ScopeSpans
// (batchpersignal.SplitTraces); this writes one per trace per request: the
// key, and so the partition, is the same, in fewer records.
//
// The request is rebuilt from its own bytes. For each trace, every
// ResourceSpans and ScopeSpans that holds some of its spans is repeated
// with its other fields (resource, scope, schema_url) and only that trace's
// spans, in their original order:
//
//	message ResourceSpans {                  // ResourceLogs likewise
//	  opentelemetry.proto.resource.v1.Resource resource = 1;
//	  repeated ScopeSpans scope_spans = 2;
//	  string schema_url = 3;
//	}
//	message ScopeSpans {                     // ScopeLogs likewise
//	  opentelemetry.proto.common.v1.InstrumentationScope scope = 1;
//	  repeated Span spans = 2;               // log_records = 2
//	  string schema_url = 3;
//	}
//	message Span {
//	  bytes trace_id = 1;                    // LogRecord: trace_id = 9
//	  ...
//	}
//
// Items whose trace id is absent, or not 16 bytes (Check rejects those
// spans, but a rewrite does not rely on it) go together, with those whose
// trace id is all zero, into one group with the zero trace id. Resources or
// scopes without items carry nothing and are dropped. A signal other than
// traces or logs is an error.
func (t *TraceSplitter) AppendByTrace(dst []byte, pieces []Piece, msg []byte, sig otlp.Signal, limit int, key func(dst []byte, traceID [16]byte) ([]byte, bool), dest func(req []byte) string) ([]byte, []Piece, error) {
	switch sig {
	case otlp.Traces:
		t.shape = spansShape
	case otlp.Logs:
		t.shape = logsShape
	default:
		return dst, pieces, fmt.Errorf("cannot split %v by trace id", sig)
	}
	if err := t.parse(msg); err != nil {
		return dst, pieces, err
	}
	for g := range t.keys {
		t.tmp = appendCommon(t.tmp[:0], msg, t.shape.resources)
		t.tmp = t.appendGroup(t.tmp, t.order[t.off[g]:t.off[g+1]])
		keyStart := len(dst)
		var keyed bool
		dst, keyed = key(dst, t.keys[g])
		keyEnd := len(dst)
		if !keyed {
			dst = dst[:keyStart]
			keyStart, keyEnd = -1, -1
		}
		first := len(pieces)
		var err error
		dst, pieces, err = AppendResources(dst, pieces, t.tmp, sig, limit, keyStart, keyEnd)
		if err != nil {
			return dst, pieces, err
		}
		if dest != nil {
			// The Collector picks a piece's topic from its first
			// resource with the attribute: the trace's, not each split
			// part's, so that a trace stays on one topic.
			d := dest(t.tmp)
			for i := first; i < len(pieces); i++ {
				pieces[i].Dest = d
			}
		}
	}
	return dst, pieces, nil
}

// parse indexes msg's resources, scopes and spans and assigns each span to
// a group, then orders the spans by group (a stable counting sort, so each
// group keeps the request's order).
func (t *TraceSplitter) parse(msg []byte) error {
	t.rs, t.ss, t.spans, t.hdrs = t.rs[:0], t.ss[:0], t.spans[:0], t.hdrs[:0]
	t.keys = t.keys[:0]
	if t.ids == nil {
		t.ids = make(map[[16]byte]int32)
	}
	clear(t.ids)
	sh := &t.shape
	var f otlppb.Field
	for b := msg; len(b) > 0; {
		var err error
		if b, err = f.Read(b); err != nil {
			return fmt.Errorf("cannot split request by trace id: %w", err)
		}
		if f.FieldNum != sh.resources {
			continue
		}
		rsBody, ok := f.MessageData()
		if !ok {
			return fmt.Errorf("cannot split request by trace id: %s is not length-delimited", sh.resourcesName)
		}
		rsIdx := int32(len(t.rs))
		// Two passes over the resource: its own fields first, so that they
		// are one run of hdrs, then its scopes, which add theirs.
		rs := msgRef{hdrStart: int32(len(t.hdrs))}
		for rb := rsBody; len(rb) > 0; {
			raw, rest, err := readRaw(&f, rb)
			if err != nil {
				return fmt.Errorf("cannot split %s[%d] by trace id: %w", sh.resourcesName, rsIdx, err)
			}
			rb = rest
			if f.FieldNum != sh.scopes {
				rs.hdr += len(raw)
				t.hdrs = append(t.hdrs, raw)
			} else if _, ok := f.MessageData(); !ok {
				return fmt.Errorf("cannot split %s[%d] by trace id: %s is not length-delimited", sh.resourcesName, rsIdx, sh.scopesName)
			}
		}
		rs.hdrEnd = int32(len(t.hdrs))
		t.rs = append(t.rs, rs)
		for rb := rsBody; len(rb) > 0; {
			rb, _ = f.Read(rb)
			if f.FieldNum != sh.scopes {
				continue
			}
			ssBody, _ := f.MessageData()
			ssIdx := int32(len(t.ss))
			t.ss = append(t.ss, msgRef{hdrStart: int32(len(t.hdrs)), hdrEnd: int32(len(t.hdrs)), parent: rsIdx})
			for sb := ssBody; len(sb) > 0; {
				raw, rest, err := readRaw(&f, sb)
				if err != nil {
					return fmt.Errorf("cannot split %s[%d] by trace id: %w", sh.scopesName, ssIdx, err)
				}
				sb = rest
				if f.FieldNum != sh.items {
					t.ss[ssIdx].hdr += len(raw)
					t.hdrs = append(t.hdrs, raw)
					t.ss[ssIdx].hdrEnd = int32(len(t.hdrs))
					continue
				}
				span, ok := f.MessageData()
				if !ok {
					return fmt.Errorf("cannot split %s[%d] by trace id: %s is not length-delimited", sh.scopesName, ssIdx, sh.itemsName)
				}
				id, err := traceID(span, sh.traceID)
				if err != nil {
					return fmt.Errorf("cannot split span by trace id: %w", err)
				}
				g, found := t.ids[id]
				if !found {
					g = int32(len(t.keys))
					t.ids[id] = g
					t.keys = append(t.keys, id)
				}
				t.spans = append(t.spans, spanRef{raw: raw, ss: ssIdx, group: g})
			}
		}
	}
	n := len(t.keys)
	t.off = t.off[:0]
	for range n + 1 {
		t.off = append(t.off, 0)
	}
	for _, s := range t.spans {
		t.off[s.group+1]++
	}
	for g := 1; g <= n; g++ {
		t.off[g] += t.off[g-1]
	}
	if cap(t.order) < len(t.spans) {
		t.order = make([]int32, len(t.spans))
	}
	t.order = t.order[:len(t.spans)]
	// fill uses off[g] as group g's cursor, which leaves off shifted by
	// one group; shift it back afterwards.
	for i, s := range t.spans {
		t.order[t.off[s.group]] = int32(i)
		t.off[s.group]++
	}
	copy(t.off[1:], t.off[:n])
	t.off[0] = 0
	return nil
}

// traceID returns the trace_id (field idField) of an encoded Span or
// LogRecord; all zero if it is absent or not 16 bytes.
func traceID(item []byte, idField uint32) (id [16]byte, err error) {
	var f otlppb.Field
	for b := item; len(b) > 0; {
		if b, err = f.Read(b); err != nil {
			return id, err
		}
		if f.FieldNum == idField {
			// Last one wins for a repeated non-repeated field.
			id = [16]byte{}
			if v, _ := f.Bytes(); len(v) == 16 {
				copy(id[:], v)
			}
		}
	}
	return id, nil
}

// appendGroup appends one ResourceSpans per run of spans sharing a resource
// (and one ScopeSpans per run sharing a scope) for the spans list, which is
// in request order.
func (t *TraceSplitter) appendGroup(dst []byte, list []int32) []byte {
	for i := 0; i < len(list); {
		rs := t.ss[t.spans[list[i]].ss].parent
		j := i
		for j < len(list) && t.ss[t.spans[list[j]].ss].parent == rs {
			j++
		}
		// Sizes first: protobuf lengths precede the bytes.
		rsLen := t.rs[rs].hdr
		for k := i; k < j; {
			n, size := t.scopeRun(list[k:j])
			rsLen += lenFieldSize(size)
			k += n
		}
		dst = appendLenField(dst, t.shape.resources, rsLen)
		dst = t.appendHdr(dst, t.rs[rs])
		for k := i; k < j; {
			n, size := t.scopeRun(list[k:j])
			ss := t.spans[list[k]].ss
			dst = appendLenField(dst, t.shape.scopes, size)
			dst = t.appendHdr(dst, t.ss[ss])
			for _, s := range list[k : k+n] {
				dst = append(dst, t.spans[s].raw...)
			}
			k += n
		}
		i = j
	}
	return dst
}

// scopeRun returns how many leading spans of list share a ScopeSpans and
// the encoded size of that ScopeSpans holding only them.
func (t *TraceSplitter) scopeRun(list []int32) (n, size int) {
	ss := t.spans[list[0]].ss
	size = t.ss[ss].hdr
	for n < len(list) && t.spans[list[n]].ss == ss {
		size += len(t.spans[list[n]].raw)
		n++
	}
	return n, size
}

func (t *TraceSplitter) appendHdr(dst []byte, m msgRef) []byte {
	for _, raw := range t.hdrs[m.hdrStart:m.hdrEnd] {
		dst = append(dst, raw...)
	}
	return dst
}

// appendLenField appends the tag and length of a length-delimited field;
// the caller appends its n bytes of value.
func appendLenField(dst []byte, num uint32, n int) []byte {
	dst = binary.AppendUvarint(dst, uint64(num)<<3|otlppb.WireLen)
	return binary.AppendUvarint(dst, uint64(n))
}

// lenFieldSize is the encoded size of a length-delimited field of a number
// under 16 (a one-byte tag) with an n-byte value.
func lenFieldSize(n int) int {
	return 1 + uvarintSize(uint64(n)) + n
}

func uvarintSize(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
