package otlpdecode

import (
	"github.com/otlp-lite/otlp-lite/otlppb"
	"github.com/otlp-lite/otlp-lite/otlpview"
)

// CheckLogs walks an ExportLogsServiceRequest (same wire format as
// LogsData) and validates every log record.
//
// A log record is rejected when its trace_id is neither empty nor 16 bytes
// or its span_id neither empty nor 8 bytes (logs.proto: "optional ... can
// be set for logs that are part of request processing"). With
// opts.ValidateUTF8 it is also rejected when any of its string fields
// (severity_text, event_name, attribute keys, string values anywhere in
// body or attributes), or of its resource or scope, is not UTF-8.
//
// Errors and allocations are as for CheckTraces.
func CheckLogs(src []byte, opts *Options) (Result, error) {
	c := newChecker(opts)
	return c.check(src, &logNames, signalLogs)
}

// logRecord checks a LogRecord.
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
//
// rv, when not nil, is the view of the record a visitor gets
// (otlpview.ItemViews.LogRecordOf): the walk hands it every field it
// reads, so that visiting a record costs no walk of its own. nil is the
// plain check, which then skips scalar fields unread.
func (c *checker) logRecord(src []byte, rv *otlpview.LogRecord) (reason, error) {
	var r reason
	traceID, spanID := 0, 0
	nAttrs := 0
	var fc otlppb.Field
	for len(src) > 0 {
		var ok bool
		if rv == nil {
			if src, ok = otlppb.SkipScalar(src); ok {
				continue // a scalar field: none is inspected here
			}
		}
		if src, ok = fc.ReadShort(src); !ok {
			var err error
			if src, err = fc.Read(src); err != nil {
				return r, err
			}
		}
		// With a view to fill (rv), no scalar is skipped either: they
		// come to the default case, which hands them to rv. The
		// attributes are the view's lazy iterator, not read into it.
		switch fc.FieldNum {
		default:
			if rv != nil {
				_ = rv.ReadField(&fc)
			}
		case otlppb.LogRecordSeverityText:
			c.stringField(&fc, "severity_text", &r)
			if rv != nil {
				_ = rv.ReadField(&fc)
			}
		case otlppb.LogRecordBody:
			if rv != nil {
				// Its one error, a malformed body, is c.anyValue's below.
				_ = rv.ReadField(&fc)
			}
			data, ok := fc.MessageData()
			if !ok {
				continue
			}
			v, err := c.anyValue(data, 1)
			if err != nil {
				return r, at(err, "body", -1)
			}
			if v != verdictOK && !r.bad() {
				r = v.reason("body", -1)
			}
		case otlppb.LogRecordAttributes:
			if err := c.attribute(&fc, "attributes", &nAttrs, &r); err != nil {
				return r, err
			}
		case otlppb.LogRecordTraceID:
			if b, ok := fc.Bytes(); ok {
				traceID = len(b)
				if rv != nil {
					rv.TraceID = b
				}
			}
		case otlppb.LogRecordSpanID:
			if b, ok := fc.Bytes(); ok {
				spanID = len(b)
				if rv != nil {
					rv.SpanID = b
				}
			}
		case otlppb.LogRecordEventName:
			c.stringField(&fc, "event_name", &r)
			if rv != nil {
				_ = rv.ReadField(&fc)
			}
		}
	}
	switch {
	case traceID != 0 && traceID != 16:
		return lenReason("trace_id", traceID, "empty or 16"), nil
	case spanID != 0 && spanID != 8:
		return lenReason("span_id", spanID, "empty or 8"), nil
	}
	return r, nil
}
