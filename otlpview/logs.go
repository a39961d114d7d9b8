package otlpview

import (
	"github.com/otlp-lite/otlp-lite/otlppb"
)

// SeverityNumber is logs.proto's SeverityNumber (1-24: TRACE to FATAL4).
type SeverityNumber int32

// LogRecord is a view of a LogRecord. Byte slices and strings alias the
// request.
//
//	message LogRecord {
//	  reserved 4;
//	  fixed64 time_unix_nano = 1;
//	  fixed64 observed_time_unix_nano = 11;
//	  SeverityNumber severity_number = 2;
//	  string severity_text = 3;
//	  opentelemetry.proto.common.v1.AnyValue body = 5;
//	  repeated opentelemetry.proto.common.v1.KeyValue attributes = 6;
//	  uint32 dropped_attributes_count = 7;
//	  fixed32 flags = 8;
//	  bytes trace_id = 9;
//	  bytes span_id = 10;
//	  string event_name = 12;
//	}
type LogRecord struct {
	// Raw is the record's protobuf encoding, for a store that keeps it
	// as it came (it aliases the request, like the other fields).
	Raw                    []byte
	TimeUnixNano           uint64
	ObservedTimeUnixNano   uint64
	SeverityNumber         SeverityNumber
	SeverityText           string
	Body                   AnyValue
	Attributes             KeyValues
	DroppedAttributesCount uint32
	Flags                  uint32
	TraceID                []byte
	SpanID                 []byte
	EventName              string
}

func (r *LogRecord) decode(src []byte) error {
	r.reset(src)
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return err
		}
		if err := r.ReadField(&fc); err != nil {
			return err
		}
	}
	return nil
}

// reset empties r for the record src.
// It clears r in place, then sets what is not zero: a composite literal
// assigned whole is built on the stack and copied, twice the stores
// (7% of a visited logs walk, pprof).
func (r *LogRecord) reset(src []byte) {
	*r = LogRecord{}
	r.Raw = src
	r.Attributes = KeyValues{src: src, field: otlppb.LogRecordAttributes}
}

// ReadField reads the field fc of the record r.Raw into r, as decoding the
// record does (the last occurrence of a field wins; the body merges): for
// a walk that reads the record's fields itself and fills the view as it
// goes (otlpdecode's validation, from ItemViews.LogRecordOf), instead of a
// second walk. Every field of the record goes through it, in wire order.
// Its error is the body's, when the body is malformed.
func (r *LogRecord) ReadField(fc *otlppb.Field) error {
	switch fc.FieldNum {
	case otlppb.LogRecordTimeUnixNano:
		if n, ok := fc.Fixed64(); ok {
			r.TimeUnixNano = n
		}
	case otlppb.LogRecordSeverityNumber:
		if n, ok := readInt32(fc); ok {
			r.SeverityNumber = SeverityNumber(n)
		}
	case otlppb.LogRecordSeverityText:
		if v, ok := fc.String(); ok {
			r.SeverityText = v
		}
	case otlppb.LogRecordBody:
		if data, ok := fc.MessageData(); ok {
			if err := r.Body.merge(data); err != nil {
				return at(err, "body", -1)
			}
		}
	case otlppb.LogRecordDroppedAttributesCount:
		if n, ok := readUint32(fc); ok {
			r.DroppedAttributesCount = n
		}
	case otlppb.LogRecordFlags:
		if n, ok := fc.Fixed32(); ok {
			r.Flags = n
		}
	case otlppb.LogRecordTraceID:
		if b, ok := fc.Bytes(); ok {
			r.TraceID = b
		}
	case otlppb.LogRecordSpanID:
		if b, ok := fc.Bytes(); ok {
			r.SpanID = b
		}
	case otlppb.LogRecordObservedTimeUnixNano:
		if n, ok := fc.Fixed64(); ok {
			r.ObservedTimeUnixNano = n
		}
	case otlppb.LogRecordEventName:
		if v, ok := fc.String(); ok {
			r.EventName = v
		}
	}
	return nil
}

// LogsDecoder visits the log records of ExportLogsServiceRequest (or
// LogsData) messages. The zero value is ready to use; it is not safe for
// concurrent use; reuse it so that Decode stops allocating.
type LogsDecoder struct {
	c   containers
	rec LogRecord
}

// Decode calls fn for every log record of src, in wire order, with the
// record's resource and scope. The contract is that of
// TracesDecoder.Decode.
// It is kept out of line: see decodeRequest.
//
//go:noinline
func (d *LogsDecoder) Decode(src []byte, fn func(res *Resource, scope *Scope, rec *LogRecord) error) error {
	return decodeRequest(&d.c, &d.rec, &logLevels, src, fn)
}
