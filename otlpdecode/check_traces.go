package otlpdecode

import (
	"encoding/binary"

	"github.com/otlp-lite/otlp-lite/otlppb"
	"github.com/otlp-lite/otlp-lite/otlpview"
)

// CheckTraces walks an ExportTraceServiceRequest (same wire format as
// TracesData) and validates every span.
//
// A span is rejected when its trace_id is not 16 bytes or is all zeroes,
// its span_id is not 8 bytes or is all zeroes, its parent_span_id is neither
// empty nor 8 bytes, or one of its links has a trace_id other than 16 bytes
// or a span_id other than 8 bytes. trace.proto, Span.trace_id: "The ID is a
// 16-byte array. An ID with all zeroes OR of length other than 16 bytes is
// considered invalid"; Span.span_id likewise for 8 bytes. An all-zero
// parent_span_id or link id is accepted: some producers write a root span's
// parent as eight zero bytes, and the trace API specification lets SDKs
// record links to an invalid (all-zero) SpanContext when the link carries
// attributes or tracestate. With opts.ValidateUTF8, a span is also rejected
// when any of its string fields, or of its resource or scope, is not UTF-8.
//
// err != nil means src cannot be decoded at all (malformed protobuf
// anywhere, AnyValue nested beyond the limit) and the whole request must be
// refused; the message names the position, e.g.
// `cannot decode resource_spans[2].scope_spans[0].spans[5].attributes[3]: ...`.
//
// CheckTraces does not allocate unless it returns an error or a rejection.
func CheckTraces(src []byte, opts *Options) (Result, error) {
	c := newChecker(opts)
	return c.check(src, &traceNames, signalTraces)
}

// span checks a Span.
//
//	message Span {
//	  bytes trace_id = 1;
//	  bytes span_id = 2;
//	  string trace_state = 3;
//	  bytes parent_span_id = 4;
//	  fixed32 flags = 16;
//	  string name = 5;
//	  SpanKind kind = 6;
//	  fixed64 start_time_unix_nano = 7;
//	  fixed64 end_time_unix_nano = 8;
//	  repeated opentelemetry.proto.common.v1.KeyValue attributes = 9;
//	  uint32 dropped_attributes_count = 10;
//	  repeated Event events = 11;
//	  uint32 dropped_events_count = 12;
//	  repeated Link links = 13;
//	  uint32 dropped_links_count = 14;
//	  Status status = 15;
//	}
func (c *checker) span(src []byte) (reason, error) {
	var r reason
	// Ids are checked after the walk because the last occurrence wins.
	var traceID, spanID []byte
	parentID := 0
	var badID reason // an occurrence of an id pdata refuses (ValidIDLen)
	nAttrs, nEvents, nLinks := 0, 0, 0
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		var ok bool
		if src, ok = otlppb.SkipScalar(src); ok {
			continue
		}
		if src, ok = fc.ReadShort(src); !ok {
			if src, err = fc.Read(src); err != nil {
				return r, err
			}
		}
		switch fc.FieldNum {
		case otlppb.SpanTraceID:
			if b, ok := fc.Bytes(); ok {
				traceID = b
				noteIDLen(&badID, "trace_id", len(b), 16)
			}
		case otlppb.SpanSpanID:
			if b, ok := fc.Bytes(); ok {
				spanID = b
				noteIDLen(&badID, "span_id", len(b), 8)
			}
		case otlppb.SpanTraceState:
			c.stringField(&fc, "trace_state", &r)
		case otlppb.SpanParentSpanID:
			if b, ok := fc.Bytes(); ok {
				parentID = len(b)
				noteIDLen(&badID, "parent_span_id", len(b), 8)
			}
		case otlppb.SpanName:
			c.stringField(&fc, "name", &r)
		case otlppb.SpanAttributes:
			// c.attribute by hand: this is the hottest loop of the receiver.
			data, ok := fc.MessageData()
			if !ok {
				continue
			}
			v, err := c.keyValue(data, 1)
			if err != nil {
				return r, at(err, "attributes", nAttrs)
			}
			if v != verdictOK && !r.bad() {
				r = v.reason("attributes", nAttrs)
			}
			nAttrs++
		case otlppb.SpanEvents:
			data, ok := fc.MessageData()
			if !ok {
				continue
			}
			if err := c.event(data, nEvents, &r); err != nil {
				return r, at(err, "events", nEvents)
			}
			nEvents++
		case otlppb.SpanLinks:
			data, ok := fc.MessageData()
			if !ok {
				continue
			}
			if err := c.link(data, nLinks, &r); err != nil {
				return r, at(err, "links", nLinks)
			}
			nLinks++
		case otlppb.SpanStatus:
			data, ok := fc.MessageData()
			if !ok {
				continue
			}
			if err := c.status(data, &r); err != nil {
				return r, at(err, "status", -1)
			}
		}
	}
	// Ids come first: they make the span unusable, while UTF-8 problems
	// only affect a field. The all-zero tests run once per span, here,
	// rather than in the walk, where an id may be overwritten.
	if !ValidSpanTraceID(traceID) || !ValidSpanID(spanID) || !ValidParentSpanIDLen(parentID) {
		return spanIDsReason(traceID, spanID, parentID), nil
	}
	if badID.bad() {
		return badID, nil
	}
	return r, nil
}

// spanView is span for a visited span: it checks src as span does and
// fills sv, the view of the span a visitor gets
// (otlpview.ItemViews.SpanOf), from what it reads, so that visiting a
// span costs no walk of its own. It is a walk of its own rather than an
// option of span's because the plain check runs on every request: the
// view's bookkeeping there (a test for sv per field, the lists' offsets
// per attribute) cost the gRPC 500x10 request 3.2% more instructions
// than span without it (callgrind, against f2569fe).
func (c *checker) spanView(src []byte, sv *otlpview.Span) (reason, error) {
	var r reason
	// Ids are checked after the walk because the last occurrence wins.
	var traceID, spanID, parentID []byte
	var badID reason // an occurrence of an id pdata refuses (ValidIDLen)
	nAttrs, nEvents, nLinks := 0, 0, 0
	// The view's lists: the first and end of the last occurrence of
	// each, as offsets from the end of the span (len of what is left).
	var attrs, events, links listRange
	size := len(src)
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		var ok bool
		if len(src) >= 9 {
			// The view's commonest scalars, inline (the rest, and
			// these when short of bytes, go through spanScalar).
			switch src[0] {
			case otlppb.SpanStartTimeUnixNano<<3 | otlppb.WireI64:
				sv.StartTimeUnixNano, src = binary.LittleEndian.Uint64(src[1:9]), src[9:]
				continue
			case otlppb.SpanEndTimeUnixNano<<3 | otlppb.WireI64:
				sv.EndTimeUnixNano, src = binary.LittleEndian.Uint64(src[1:9]), src[9:]
				continue
			case otlppb.SpanKind<<3 | otlppb.WireVarint:
				if src[1] < 0x80 {
					sv.Kind, src = otlpview.SpanKind(src[1]), src[2:]
					continue
				}
			}
		}
		left := len(src)
		if src, ok = fc.ReadShort(src); !ok {
			if src, err = fc.Read(src); err != nil {
				return r, err
			}
		}
		switch fc.FieldNum {
		case otlppb.SpanTraceID:
			if b, ok := fc.Bytes(); ok {
				traceID = b
				noteIDLen(&badID, "trace_id", len(b), 16)
			}
		case otlppb.SpanSpanID:
			if b, ok := fc.Bytes(); ok {
				spanID = b
				noteIDLen(&badID, "span_id", len(b), 8)
			}
		case otlppb.SpanTraceState:
			c.stringField(&fc, "trace_state", &r)
			if v, ok := fc.String(); ok {
				sv.TraceState = v
			}
		case otlppb.SpanParentSpanID:
			if b, ok := fc.Bytes(); ok {
				parentID = b
				noteIDLen(&badID, "parent_span_id", len(b), 8)
			}
		case otlppb.SpanName:
			c.stringField(&fc, "name", &r)
			if v, ok := fc.String(); ok {
				sv.Name = v
			}
		case otlppb.SpanAttributes:
			attrs.add(size-left, size-len(src))
			// c.attribute by hand: this is the hottest loop of the receiver.
			data, ok := fc.MessageData()
			if !ok {
				continue
			}
			v, err := c.keyValue(data, 1)
			if err != nil {
				return r, at(err, "attributes", nAttrs)
			}
			if v != verdictOK && !r.bad() {
				r = v.reason("attributes", nAttrs)
			}
			nAttrs++
		case otlppb.SpanEvents:
			events.add(size-left, size-len(src))
			data, ok := fc.MessageData()
			if !ok {
				continue
			}
			if err := c.event(data, nEvents, &r); err != nil {
				return r, at(err, "events", nEvents)
			}
			nEvents++
		case otlppb.SpanLinks:
			links.add(size-left, size-len(src))
			data, ok := fc.MessageData()
			if !ok {
				continue
			}
			if err := c.link(data, nLinks, &r); err != nil {
				return r, at(err, "links", nLinks)
			}
			nLinks++
		case otlppb.SpanStatus:
			data, ok := fc.MessageData()
			if !ok {
				continue
			}
			if err := c.status(data, &r); err != nil {
				return r, at(err, "status", -1)
			}
			sv.Status.Decode(data) // well-formed: c.status read it
		default:
			// The scalars the inline reads above left (the rarer ones,
			// and those with too few bytes or a long varint).
			spanScalar(sv, &fc)
		}
	}
	// Ids come first: they make the span unusable, while UTF-8 problems
	// only affect a field. The all-zero tests run once per span, here,
	// rather than in the walk, where an id may be overwritten.
	if !ValidSpanTraceID(traceID) || !ValidSpanID(spanID) || !ValidParentSpanIDLen(len(parentID)) {
		return spanIDsReason(traceID, spanID, len(parentID)), nil
	}
	if badID.bad() {
		return badID, nil
	}
	sv.TraceID, sv.SpanID, sv.ParentSpanID = traceID, spanID, parentID
	raw := sv.Raw
	sv.SetLists(attrs.of(raw), events.of(raw), links.of(raw))
	return r, nil
}

// spanScalar reads the scalar field fc of a Span into its view, as
// otlpview does (truncating to 32 bits like protobuf-go).
func spanScalar(sv *otlpview.Span, fc *otlppb.Field) {
	switch fc.FieldNum {
	case otlppb.SpanKind:
		if n, ok := fc.Uint64(); ok {
			sv.Kind = otlpview.SpanKind(int32(n))
		}
	case otlppb.SpanStartTimeUnixNano:
		if n, ok := fc.Fixed64(); ok {
			sv.StartTimeUnixNano = n
		}
	case otlppb.SpanEndTimeUnixNano:
		if n, ok := fc.Fixed64(); ok {
			sv.EndTimeUnixNano = n
		}
	case otlppb.SpanDroppedAttributesCount:
		if n, ok := fc.Uint64(); ok {
			sv.DroppedAttributesCount = uint32(n)
		}
	case otlppb.SpanDroppedEventsCount:
		if n, ok := fc.Uint64(); ok {
			sv.DroppedEventsCount = uint32(n)
		}
	case otlppb.SpanDroppedLinksCount:
		if n, ok := fc.Uint64(); ok {
			sv.DroppedLinksCount = uint32(n)
		}
	case otlppb.SpanFlags:
		if n, ok := fc.Fixed32(); ok {
			sv.Flags = n
		}
	}
}

// spanIDsReason is why a span whose last trace_id, span_id and
// parent_span_id's length are these is rejected, one of them being
// invalid (ValidSpanTraceID, ValidSpanID, ValidParentSpanIDLen): the first
// invalid one, in that order.
func spanIDsReason(traceID, spanID []byte, parentID int) reason {
	switch {
	case len(traceID) != 16:
		return lenReason("trace_id", len(traceID), "16")
	case !ValidSpanTraceID(traceID):
		return zeroReason("trace_id")
	case len(spanID) != 8:
		return lenReason("span_id", len(spanID), "8")
	case !ValidSpanID(spanID):
		return zeroReason("span_id")
	}
	return lenReason("parent_span_id", parentID, "empty or 8")
}

// listRange is the byte range from the first to the end of the last
// occurrence of a repeated field in a message (otlpview's lists).
type listRange struct{ start, end int }

func (l *listRange) add(start, end int) {
	if l.end == 0 {
		l.start = start
	}
	l.end = end
}

func (l listRange) of(msg []byte) []byte {
	if l.end == 0 {
		return nil
	}
	return msg[l.start:l.end]
}

// zeroID16 reports whether the 16-byte id b is all zeroes.
func zeroID16(b []byte) bool {
	return binary.LittleEndian.Uint64(b[:8])|binary.LittleEndian.Uint64(b[8:16]) == 0
}

// event checks element idx of Span.events and records in *r, unless it
// already holds one, why the span is rejected. The sub-checks of a span
// write into the span's reason rather than return their own, because a
// reason is 128 bytes and the happy path would copy it out of every
// event, link and status.
//
//	message Event {
//	  fixed64 time_unix_nano = 1;
//	  string name = 2;
//	  repeated opentelemetry.proto.common.v1.KeyValue attributes = 3;
//	  uint32 dropped_attributes_count = 4;
//	}
func (c *checker) event(src []byte, idx int, r *reason) error {
	nAttrs := 0
	var fc otlppb.Field
	for len(src) > 0 {
		var ok bool
		if src, ok = otlppb.SkipScalar(src); ok {
			continue
		}
		if src, ok = fc.ReadShort(src); !ok {
			var err error
			if src, err = fc.Read(src); err != nil {
				return err
			}
		}
		switch fc.FieldNum {
		case otlppb.SpanEventName:
			if c.badString(&fc) {
				r.noteIn(utf8Reason("name", -1), "events", idx)
			}
		case otlppb.SpanEventAttributes:
			data, ok := fc.MessageData()
			if !ok {
				continue
			}
			v, err := c.keyValue(data, 1)
			if err != nil {
				return at(err, "attributes", nAttrs)
			}
			if v != verdictOK {
				r.noteIn(v.reason("attributes", nAttrs), "events", idx)
			}
			nAttrs++
		}
	}
	return nil
}

// link checks element idx of Span.links and records in *r, unless it
// already holds one, why the span is rejected (see event).
//
//	message Link {
//	  bytes trace_id = 1;
//	  bytes span_id = 2;
//	  string trace_state = 3;
//	  repeated opentelemetry.proto.common.v1.KeyValue attributes = 4;
//	  uint32 dropped_attributes_count = 5;
//	  fixed32 flags = 6;
//	}
func (c *checker) link(src []byte, idx int, r *reason) error {
	traceID, spanID := 0, 0
	nAttrs := 0
	// A bad string or attribute is recorded after the walk: an id of the
	// wrong length is the reason given first, wherever it is.
	var sub, badID reason
	var fc otlppb.Field
	for len(src) > 0 {
		var ok bool
		if src, ok = otlppb.SkipScalar(src); ok {
			continue
		}
		if src, ok = fc.ReadShort(src); !ok {
			var err error
			if src, err = fc.Read(src); err != nil {
				return err
			}
		}
		switch fc.FieldNum {
		case otlppb.SpanLinkTraceID:
			if b, ok := fc.Bytes(); ok {
				traceID = len(b)
				noteIDLen(&badID, "trace_id", len(b), 16)
			}
		case otlppb.SpanLinkSpanID:
			if b, ok := fc.Bytes(); ok {
				spanID = len(b)
				noteIDLen(&badID, "span_id", len(b), 8)
			}
		case otlppb.SpanLinkTraceState:
			if c.badString(&fc) && !sub.bad() {
				sub = utf8Reason("trace_state", -1)
			}
		case otlppb.SpanLinkAttributes:
			data, ok := fc.MessageData()
			if !ok {
				continue
			}
			v, err := c.keyValue(data, 1)
			if err != nil {
				return at(err, "attributes", nAttrs)
			}
			if v != verdictOK && !sub.bad() {
				sub = v.reason("attributes", nAttrs)
			}
			nAttrs++
		}
	}
	switch {
	case !ValidLinkIDLens(traceID, spanID) && traceID != 16:
		r.noteIn(lenReason("trace_id", traceID, "16"), "links", idx)
	case !ValidLinkIDLens(traceID, spanID):
		r.noteIn(lenReason("span_id", spanID, "8"), "links", idx)
	case badID.bad():
		r.noteIn(badID, "links", idx)
	case sub.bad():
		r.noteIn(sub, "links", idx)
	}
	return nil
}

// status checks a Status and records in *r, unless it already holds one,
// why the span is rejected (see event).
//
//	message Status {
//	  reserved 1;
//	  string message = 2;
//	  StatusCode code = 3;
//	}
func (c *checker) status(src []byte, r *reason) error {
	var fc otlppb.Field
	for len(src) > 0 {
		var ok bool
		if src, ok = otlppb.SkipScalar(src); ok {
			continue
		}
		if src, ok = fc.ReadShort(src); !ok {
			var err error
			if src, err = fc.Read(src); err != nil {
				return err
			}
		}
		if fc.FieldNum == otlppb.StatusMessage && c.badString(&fc) {
			r.noteIn(utf8Reason("message", -1), "status", -1)
		}
	}
	return nil
}
