package kafka

import "fmt"

// traceSplitter regroups the spans of a traces request by trace id, for
// Config.PartitionTracesByID. Its slices and map are reused between requests (it
// lives in a sync.Pool), so regrouping allocates only while they grow.
type traceSplitter struct {
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

// msgRef is a ResourceSpans or ScopeSpans: its fields other than the
// repeated child (field 2) are hdrs[hdrStart:hdrEnd], hdr bytes in all; and
// its parent index.
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

// appendByTrace appends the request msg (traces, or logs: the two have the
// same shape) to dst as one piece per trace id (more if one trace's items
// exceed limit), keyed as the OpenTelemetry Collector's kafkaexporter keys
// them with partition_traces_by_id (partition_logs_by_trace_id for logs):
// the trace id as 32 lower-case hex characters (keys.go). With the same
// partitioner (sarama_compat, keys.go), every span of a trace lands in the
// partition the Collector would choose, so a consumer sees whole traces
// whichever of the two produced them.
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
// idField is the trace_id field of the item. Items whose trace id is
// absent, all zero or not 16 bytes (the receiver rejects those spans before
// storage, but the sink does not rely on it) go together into one piece
// keyed as the Collector keys a zero trace id: the empty key for spans,
// no key (nilEmpty) for log records. Resources or scopes without items
// carry nothing and are dropped.
func (t *traceSplitter) appendByTrace(dst []byte, pieces []piece, msg []byte, limit, idField int, nilEmpty bool, name string, topic func([]byte) string) ([]byte, []piece, error) {
	if err := t.parse(msg, idField); err != nil {
		return dst, pieces, err
	}
	for g := range t.keys {
		t.tmp = appendCommon(t.tmp[:0], msg)
		t.tmp = t.appendGroup(t.tmp, t.order[t.off[g]:t.off[g+1]])
		keyStart := len(dst)
		dst = appendHexID(dst, t.keys[g])
		keyEnd := len(dst)
		if keyStart == keyEnd && nilEmpty {
			keyStart, keyEnd = -1, -1
		}
		first := len(pieces)
		var err error
		dst, pieces, err = appendResources(dst, pieces, t.tmp, limit, keyStart, keyEnd, name)
		if err != nil {
			return dst, pieces, err
		}
		if topic != nil {
			// The Collector picks a piece's topic from its first
			// resource with the attribute: the trace's, not each split
			// part's, so that a trace stays on one topic.
			tp := topic(t.tmp)
			for i := first; i < len(pieces); i++ {
				pieces[i].topic = tp
			}
		}
	}
	return dst, pieces, nil
}

// parse indexes msg's resources, scopes and spans and assigns each span to
// a group, then orders the spans by group (a stable counting sort, so each
// group keeps the request's order).
func (t *traceSplitter) parse(msg []byte, idField int) error {
	t.rs, t.ss, t.spans, t.hdrs = t.rs[:0], t.ss[:0], t.spans[:0], t.hdrs[:0]
	t.keys = t.keys[:0]
	if t.ids == nil {
		t.ids = make(map[[16]byte]int32)
	}
	clear(t.ids)
	for b := msg; len(b) > 0; {
		num, _, rsBody, rest, err := nextField(b)
		if err != nil {
			return fmt.Errorf("cannot split request by trace id: %w", err)
		}
		b = rest
		if num != 1 {
			continue
		}
		if rsBody == nil {
			return fmt.Errorf("cannot split request by trace id: resource_spans is not length-delimited")
		}
		rsIdx := int32(len(t.rs))
		// Two passes over the resource: its own fields first, so that they
		// are one run of hdrs, then its scopes, which add theirs.
		rs := msgRef{hdrStart: int32(len(t.hdrs))}
		for rb := rsBody; len(rb) > 0; {
			num, raw, ssBody, rest, err := nextField(rb)
			if err != nil {
				return fmt.Errorf("cannot split resource_spans[%d] by trace id: %w", rsIdx, err)
			}
			rb = rest
			if num != 2 {
				rs.hdr += len(raw)
				t.hdrs = append(t.hdrs, raw)
			} else if ssBody == nil {
				return fmt.Errorf("cannot split resource_spans[%d] by trace id: scope_spans is not length-delimited", rsIdx)
			}
		}
		rs.hdrEnd = int32(len(t.hdrs))
		t.rs = append(t.rs, rs)
		for rb := rsBody; len(rb) > 0; {
			num, _, ssBody, rest, _ := nextField(rb)
			rb = rest
			if num != 2 {
				continue
			}
			ssIdx := int32(len(t.ss))
			t.ss = append(t.ss, msgRef{hdrStart: int32(len(t.hdrs)), hdrEnd: int32(len(t.hdrs)), parent: rsIdx})
			for sb := ssBody; len(sb) > 0; {
				num, raw, span, rest, err := nextField(sb)
				if err != nil {
					return fmt.Errorf("cannot split scope_spans[%d] by trace id: %w", ssIdx, err)
				}
				sb = rest
				if num != 2 {
					t.ss[ssIdx].hdr += len(raw)
					t.hdrs = append(t.hdrs, raw)
					t.ss[ssIdx].hdrEnd = int32(len(t.hdrs))
					continue
				}
				if span == nil {
					return fmt.Errorf("cannot split scope_spans[%d] by trace id: spans is not length-delimited", ssIdx)
				}
				id, err := traceID(span, idField)
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
func traceID(item []byte, idField int) (id [16]byte, err error) {
	for b := item; len(b) > 0; {
		num, _, v, rest, err := nextField(b)
		if err != nil {
			return id, err
		}
		b = rest
		if num == idField {
			// Last one wins for a repeated non-repeated field.
			id = [16]byte{}
			if len(v) == 16 {
				copy(id[:], v)
			}
		}
	}
	return id, nil
}

// appendGroup appends one ResourceSpans per run of spans sharing a resource
// (and one ScopeSpans per run sharing a scope) for the spans list, which is
// in request order.
func (t *traceSplitter) appendGroup(dst []byte, list []int32) []byte {
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
		dst = appendLenField(dst, 1, rsLen)
		dst = t.appendHdr(dst, t.rs[rs])
		for k := i; k < j; {
			n, size := t.scopeRun(list[k:j])
			ss := t.spans[list[k]].ss
			dst = appendLenField(dst, 2, size)
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
func (t *traceSplitter) scopeRun(list []int32) (n, size int) {
	ss := t.spans[list[0]].ss
	size = t.ss[ss].hdr
	for n < len(list) && t.spans[list[n]].ss == ss {
		size += len(t.spans[list[n]].raw)
		n++
	}
	return n, size
}

func (t *traceSplitter) appendHdr(dst []byte, m msgRef) []byte {
	for _, raw := range t.hdrs[m.hdrStart:m.hdrEnd] {
		dst = append(dst, raw...)
	}
	return dst
}
