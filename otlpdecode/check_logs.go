package otlpdecode

import (
	"encoding/binary"

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
func (c *checker) logRecord(src []byte) (reason, error) {
	var r reason
	traceID, spanID := 0, 0
	var badID reason // an occurrence of an id pdata refuses (ValidIDLen)
	nAttrs := 0
	var fc otlppb.Field
	for len(src) > 0 {
		var ok bool
		if src, ok = otlppb.SkipScalar(src); ok {
			continue // a scalar field: none is inspected here
		}
		if src, ok = fc.ReadShort(src); !ok {
			var err error
			if src, err = fc.Read(src); err != nil {
				return r, err
			}
		}
		switch fc.FieldNum {
		case otlppb.LogRecordSeverityText:
			c.stringField(&fc, "severity_text", &r)
		case otlppb.LogRecordBody:
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
				noteIDLen(&badID, "trace_id", len(b), 16)
			}
		case otlppb.LogRecordSpanID:
			if b, ok := fc.Bytes(); ok {
				spanID = len(b)
				noteIDLen(&badID, "span_id", len(b), 8)
			}
		case otlppb.LogRecordEventName:
			c.stringField(&fc, "event_name", &r)
		}
	}
	if !ValidLogIDLens(traceID, spanID) {
		return idLensReason(traceID, spanID), nil
	}
	if badID.bad() {
		return badID, nil
	}
	return r, nil
}

// logRecordView is logRecord for a record a visitor gets: the same checks,
// in the same order, and the walk fills the record's view rv
// (otlpview.ItemViews.LogRecordOf) from what it reads, so that visiting a
// record costs no walk of its own. It is logRecord's twin rather than
// logRecord with a view argument: the view's bookkeeping in the shared
// loop cost the plain check instructions (as checker.span's did).
// TestVisitedItemIsItsView and the fuzz targets hold the two to the same
// verdicts and rv to otlpview's own decoding.
func (c *checker) logRecordView(src []byte, rv *otlpview.LogRecord) (reason, error) {
	var r reason
	traceID, spanID := 0, 0
	var badID reason // an occurrence of an id pdata refuses (ValidIDLen)
	nAttrs := 0
	var fc otlppb.Field
	for len(src) > 0 {
		if len(src) >= 9 {
			// The view's commonest scalars, inline (the rest, and these
			// when short of bytes, go through ReadField below).
			switch src[0] {
			case otlppb.LogRecordTimeUnixNano<<3 | otlppb.WireI64:
				rv.TimeUnixNano, src = binary.LittleEndian.Uint64(src[1:9]), src[9:]
				continue
			case otlppb.LogRecordObservedTimeUnixNano<<3 | otlppb.WireI64:
				rv.ObservedTimeUnixNano, src = binary.LittleEndian.Uint64(src[1:9]), src[9:]
				continue
			case otlppb.LogRecordSeverityNumber<<3 | otlppb.WireVarint:
				if src[1] < 0x80 {
					rv.SeverityNumber, src = otlpview.SeverityNumber(src[1]), src[2:]
					continue
				}
			}
		}
		var ok bool
		if src, ok = fc.ReadShort(src); !ok {
			var err error
			if src, err = fc.Read(src); err != nil {
				return r, err
			}
		}
		switch fc.FieldNum {
		default: // the other scalars
			_ = rv.ReadField(&fc)
		case otlppb.LogRecordSeverityText:
			c.stringField(&fc, "severity_text", &r)
			_ = rv.ReadField(&fc)
		case otlppb.LogRecordBody:
			// ReadField's one error, a malformed body, is c.anyValue's.
			_ = rv.ReadField(&fc)
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
		case otlppb.LogRecordAttributes: // the view's lazy iterator
			if err := c.attribute(&fc, "attributes", &nAttrs, &r); err != nil {
				return r, err
			}
		case otlppb.LogRecordTraceID:
			if b, ok := fc.Bytes(); ok {
				traceID, rv.TraceID = len(b), b
				noteIDLen(&badID, "trace_id", len(b), 16)
			}
		case otlppb.LogRecordSpanID:
			if b, ok := fc.Bytes(); ok {
				spanID, rv.SpanID = len(b), b
				noteIDLen(&badID, "span_id", len(b), 8)
			}
		case otlppb.LogRecordEventName:
			c.stringField(&fc, "event_name", &r)
			_ = rv.ReadField(&fc)
		}
	}
	if !ValidLogIDLens(traceID, spanID) {
		return idLensReason(traceID, spanID), nil
	}
	if badID.bad() {
		return badID, nil
	}
	return r, nil
}

// idLensReason is why a log record or an exemplar whose last trace_id and
// span_id are of these lengths is rejected, one of them being invalid
// (ValidLogIDLens, ValidExemplarIDLens): the trace_id first.
func idLensReason(traceID, spanID int) reason {
	if traceID != 0 && traceID != 16 {
		return lenReason("trace_id", traceID, "empty or 16")
	}
	return lenReason("span_id", spanID, "empty or 8")
}
