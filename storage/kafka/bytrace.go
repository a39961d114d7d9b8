package kafka

import "fmt"

// traceSplitter regroups the spans of a traces request by trace id, for
// Config.KeyByTraceID. Its slices and map are reused between requests (it
// lives in a sync.Pool), so regrouping allocates only while they grow.
type traceSplitter struct {
	rs    []msgRef
	ss    []msgRef
	spans []spanRef
	hdrs  [][]byte // the fields of resources and scopes other than their children
	ids   map[[16]byte]int32
	keys  [][16]byte // per group; keyed[g] false: spans without a valid trace id
	keyed []bool
	off   []int32 // group g's spans are order[off[g]:off[g+1]]
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

// appendByTrace appends the traces request msg to dst as one piece per
// trace id (more if one trace's spans exceed limit), each keyed by the
// 16-byte trace id, as the OpenTelemetry Collector's kafkaexporter does with
// partition_traces_by_id: Kafka's key partitioner then sends every span of
// a trace to the same partition, so a consumer sees whole traces.
//
// The request is rebuilt from its own bytes. For each trace, every
// ResourceSpans and ScopeSpans that holds some of its spans is repeated
// with its other fields (resource, scope, schema_url) and only that trace's
// spans, in their original order:
//
//	message ResourceSpans {
//	  opentelemetry.proto.resource.v1.Resource resource = 1;
//	  repeated ScopeSpans scope_spans = 2;
//	  string schema_url = 3;
//	}
//	message ScopeSpans {
//	  opentelemetry.proto.common.v1.InstrumentationScope scope = 1;
//	  repeated Span spans = 2;
//	  string schema_url = 3;
//	}
//	message Span {
//	  bytes trace_id = 1;
//	  ...
//	}
//
// Spans whose trace_id is not 16 bytes (the receiver rejects those before
// storage, but the sink does not rely on it) go together into one unkeyed
// piece. Resources or scopes without spans carry nothing and are dropped.
func (t *traceSplitter) appendByTrace(dst []byte, pieces []piece, msg []byte, limit int) ([]byte, []piece, error) {
	if err := t.parse(msg); err != nil {
		return dst, pieces, err
	}
	for g := range t.keys {
		t.tmp = appendCommon(t.tmp[:0], msg)
		t.tmp = t.appendGroup(t.tmp, t.order[t.off[g]:t.off[g+1]])
		keyStart, keyEnd := -1, -1
		if t.keyed[g] {
			keyStart = len(dst)
			dst = append(dst, t.keys[g][:]...)
			keyEnd = len(dst)
		}
		var err error
		dst, pieces, err = appendResources(dst, pieces, t.tmp, limit, keyStart, keyEnd, "resource_spans")
		if err != nil {
			return dst, pieces, err
		}
	}
	return dst, pieces, nil
}

// parse indexes msg's resources, scopes and spans and assigns each span to
// a group, then orders the spans by group (a stable counting sort, so each
// group keeps the request's order).
func (t *traceSplitter) parse(msg []byte) error {
	t.rs, t.ss, t.spans, t.hdrs = t.rs[:0], t.ss[:0], t.spans[:0], t.hdrs[:0]
	t.keys, t.keyed = t.keys[:0], t.keyed[:0]
	if t.ids == nil {
		t.ids = make(map[[16]byte]int32)
	}
	clear(t.ids)
	noKey := int32(-1)
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
				id, ok, err := traceID(span)
				if err != nil {
					return fmt.Errorf("cannot split span by trace id: %w", err)
				}
				var g int32
				if ok {
					var found bool
					if g, found = t.ids[id]; !found {
						g = int32(len(t.keys))
						t.ids[id] = g
						t.keys = append(t.keys, id)
						t.keyed = append(t.keyed, true)
					}
				} else {
					if noKey < 0 {
						noKey = int32(len(t.keys))
						t.keys = append(t.keys, [16]byte{})
						t.keyed = append(t.keyed, false)
					}
					g = noKey
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

// traceID returns the trace_id (field 1) of an encoded Span, ok=false if it
// is absent or not 16 bytes.
func traceID(span []byte) (id [16]byte, ok bool, err error) {
	for b := span; len(b) > 0; {
		num, _, v, rest, err := nextField(b)
		if err != nil {
			return id, false, err
		}
		b = rest
		if num == 1 {
			// Last one wins for a repeated non-repeated field.
			ok = v != nil && len(v) == 16
			if ok {
				copy(id[:], v)
			}
		}
	}
	return id, ok, nil
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
