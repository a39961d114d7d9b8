package otlpview

import (
	"github.com/otlp-lite/otlp-lite/otlppb"
)

// SpanKind is Span.SpanKind.
type SpanKind int32

// The span kinds of trace.proto.
const (
	SpanKindUnspecified SpanKind = 0
	SpanKindInternal    SpanKind = 1
	SpanKindServer      SpanKind = 2
	SpanKindClient      SpanKind = 3
	SpanKindProducer    SpanKind = 4
	SpanKindConsumer    SpanKind = 5
)

// StatusCode is Status.StatusCode.
type StatusCode int32

// The status codes of trace.proto.
const (
	StatusCodeUnset StatusCode = 0
	StatusCodeOk    StatusCode = 1
	StatusCodeError StatusCode = 2
)

// Span is a view of a Span. Byte slices and strings alias the request;
// repeated fields are lazy iterators over it.
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
type Span struct {
	// Raw is the span's protobuf encoding, for a store that keeps it as
	// it came (it aliases the request, like the other fields).
	Raw                    []byte
	TraceID                []byte
	SpanID                 []byte
	TraceState             string
	ParentSpanID           []byte
	Flags                  uint32
	Name                   string
	Kind                   SpanKind
	StartTimeUnixNano      uint64
	EndTimeUnixNano        uint64
	Attributes             KeyValues
	DroppedAttributesCount uint32
	Events                 Events
	DroppedEventsCount     uint32
	Links                  Links
	DroppedLinksCount      uint32
	Status                 Status
}

// Status is a view of a Status.
//
//	message Status {
//	  reserved 1;
//	  string message = 2;
//	  StatusCode code = 3;
//	}
type Status struct {
	Message string
	Code    StatusCode
}

// decode merges a Status occurrence into st: Status has only scalars, so
// decoding every occurrence into the same struct is protobuf's merge.
// Decode decodes the Status message src into st, over what st holds
// (a later occurrence of a field wins, as in a span's repeated status).
func (st *Status) Decode(src []byte) error { return st.decode(src) }

func (st *Status) decode(src []byte) error {
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return err
		}
		switch fc.FieldNum {
		case otlppb.StatusMessage:
			if s, ok := fc.String(); ok {
				st.Message = s
			}
		case otlppb.StatusCode:
			if n, ok := readInt32(&fc); ok {
				st.Code = StatusCode(n)
			}
		}
	}
	return nil
}

func (s *Span) decode(src []byte) error {
	*s = Span{Raw: src}
	// The lazy iterators over attributes, events and links see only the
	// part of the span from the first to the last occurrence of their
	// field (nothing when it is absent), so a span without events or links
	// does not pay a scan of itself for each: that was a quarter of a full
	// walk's time (bench/ profiles).
	orig := src
	var attrs, events, links fieldSpan
	var fc otlppb.Field
	for len(src) > 0 {
		start := len(orig) - len(src)
		var ok bool
		if src, ok = fc.ReadShort(src); !ok { // most of a span's fields, inline
			var err error
			if src, err = fc.Read(src); err != nil {
				return err
			}
		}
		switch fc.FieldNum {
		case otlppb.SpanAttributes:
			attrs.add(start, len(orig)-len(src))
		case otlppb.SpanEvents:
			events.add(start, len(orig)-len(src))
		case otlppb.SpanLinks:
			links.add(start, len(orig)-len(src))
		case otlppb.SpanTraceID:
			if b, ok := fc.Bytes(); ok {
				s.TraceID = b
			}
		case otlppb.SpanSpanID:
			if b, ok := fc.Bytes(); ok {
				s.SpanID = b
			}
		case otlppb.SpanTraceState:
			if v, ok := fc.String(); ok {
				s.TraceState = v
			}
		case otlppb.SpanParentSpanID:
			if b, ok := fc.Bytes(); ok {
				s.ParentSpanID = b
			}
		case otlppb.SpanName:
			if v, ok := fc.String(); ok {
				s.Name = v
			}
		case otlppb.SpanKind:
			if n, ok := readInt32(&fc); ok {
				s.Kind = SpanKind(n)
			}
		case otlppb.SpanStartTimeUnixNano:
			if n, ok := fc.Fixed64(); ok {
				s.StartTimeUnixNano = n
			}
		case otlppb.SpanEndTimeUnixNano:
			if n, ok := fc.Fixed64(); ok {
				s.EndTimeUnixNano = n
			}
		case otlppb.SpanDroppedAttributesCount:
			if n, ok := readUint32(&fc); ok {
				s.DroppedAttributesCount = n
			}
		case otlppb.SpanDroppedEventsCount:
			if n, ok := readUint32(&fc); ok {
				s.DroppedEventsCount = n
			}
		case otlppb.SpanDroppedLinksCount:
			if n, ok := readUint32(&fc); ok {
				s.DroppedLinksCount = n
			}
		case otlppb.SpanStatus:
			if data, ok := fc.MessageData(); ok {
				if err := s.Status.decode(data); err != nil {
					return at(err, "status", -1)
				}
			}
		case otlppb.SpanFlags:
			if n, ok := fc.Fixed32(); ok {
				s.Flags = n
			}
		}
	}
	s.Attributes = KeyValues{src: attrs.of(orig), field: otlppb.SpanAttributes}
	s.Events = Events{src: events.of(orig)}
	s.Links = Links{src: links.of(orig)}
	return nil
}

// fieldSpan is the byte range from the first to the end of the last
// occurrence of a repeated field in a message.
type fieldSpan struct{ start, end int }

func (f *fieldSpan) add(start, end int) {
	if f.end == 0 {
		f.start = start
	}
	f.end = end
}

func (f fieldSpan) of(msg []byte) []byte {
	if f.end == 0 {
		return nil
	}
	return msg[f.start:f.end]
}

// Event is a view of a Span.Event.
//
//	message Event {
//	  fixed64 time_unix_nano = 1;
//	  string name = 2;
//	  repeated opentelemetry.proto.common.v1.KeyValue attributes = 3;
//	  uint32 dropped_attributes_count = 4;
//	}
type Event struct {
	TimeUnixNano           uint64
	Name                   string
	Attributes             KeyValues
	DroppedAttributesCount uint32
}

func (e *Event) decode(src []byte) error {
	*e = Event{Attributes: KeyValues{src: src, field: otlppb.SpanEventAttributes}}
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return err
		}
		switch fc.FieldNum {
		case otlppb.SpanEventTimeUnixNano:
			if n, ok := fc.Fixed64(); ok {
				e.TimeUnixNano = n
			}
		case otlppb.SpanEventName:
			if v, ok := fc.String(); ok {
				e.Name = v
			}
		case otlppb.SpanEventDroppedAttributesCount:
			if n, ok := readUint32(&fc); ok {
				e.DroppedAttributesCount = n
			}
		}
	}
	return nil
}

// Events is the events field of a Span, decoded lazily.
type Events struct {
	src []byte
}

// Iter returns an iterator over the events.
func (es Events) Iter() EventIter {
	return EventIter{rawIter: rawIter{src: es.src, field: otlppb.SpanEvents}}
}

// EventIter iterates over Events.
type EventIter struct {
	rawIter
	e Event
}

// Next decodes the next event.
func (it *EventIter) Next() bool {
	data, ok := it.next()
	return ok && it.decoded(it.e.decode(data), "events")
}

// Event returns the current event, valid until Next.
func (it *EventIter) Event() *Event { return &it.e }

// Link is a view of a Span.Link.
//
//	message Link {
//	  bytes trace_id = 1;
//	  bytes span_id = 2;
//	  string trace_state = 3;
//	  repeated opentelemetry.proto.common.v1.KeyValue attributes = 4;
//	  uint32 dropped_attributes_count = 5;
//	  fixed32 flags = 6;
//	}
type Link struct {
	TraceID                []byte
	SpanID                 []byte
	TraceState             string
	Attributes             KeyValues
	DroppedAttributesCount uint32
	Flags                  uint32
}

func (l *Link) decode(src []byte) error {
	*l = Link{Attributes: KeyValues{src: src, field: otlppb.SpanLinkAttributes}}
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return err
		}
		switch fc.FieldNum {
		case otlppb.SpanLinkTraceID:
			if b, ok := fc.Bytes(); ok {
				l.TraceID = b
			}
		case otlppb.SpanLinkSpanID:
			if b, ok := fc.Bytes(); ok {
				l.SpanID = b
			}
		case otlppb.SpanLinkTraceState:
			if v, ok := fc.String(); ok {
				l.TraceState = v
			}
		case otlppb.SpanLinkDroppedAttributesCount:
			if n, ok := readUint32(&fc); ok {
				l.DroppedAttributesCount = n
			}
		case otlppb.SpanLinkFlags:
			if n, ok := fc.Fixed32(); ok {
				l.Flags = n
			}
		}
	}
	return nil
}

// Links is the links field of a Span, decoded lazily.
type Links struct {
	src []byte
}

// Iter returns an iterator over the links.
func (ls Links) Iter() LinkIter {
	return LinkIter{rawIter: rawIter{src: ls.src, field: otlppb.SpanLinks}}
}

// LinkIter iterates over Links.
type LinkIter struct {
	rawIter
	l Link
}

// Next decodes the next link.
func (it *LinkIter) Next() bool {
	data, ok := it.next()
	return ok && it.decoded(it.l.decode(data), "links")
}

// Link returns the current link, valid until Next.
func (it *LinkIter) Link() *Link { return &it.l }

// TracesDecoder visits the spans of ExportTraceServiceRequest (or
// TracesData) messages. The zero value is ready to use. A TracesDecoder is
// not safe for concurrent use; reuse it (e.g. through a sync.Pool) so that
// its buffers stop growing and Decode stops allocating.
type TracesDecoder struct {
	c    containers
	span Span
}

// Decode calls fn for every span of src, in wire order, with the span's
// resource and scope.
//
// Decode checks the protobuf structure of the messages it walks to reach
// the spans and of the spans' own fields; it does not apply the validation
// rules of otlpdecode.CheckTraces. Repeated sub-messages (attributes,
// events, links) are decoded lazily by their iterators, which report
// malformed input through their Err method; a request that passed
// CheckTraces never makes them fail.
//
// The views passed to fn are valid only until fn returns. Decode stops at
// the first error fn returns and returns that error unchanged; other errors
// name the position of the malformed message.
// It is kept out of line: see decodeRequest.
//
//go:noinline
func (d *TracesDecoder) Decode(src []byte, fn func(res *Resource, scope *Scope, span *Span) error) error {
	return decodeRequest(&d.c, &d.span, &traceLevels, src, fn)
}
