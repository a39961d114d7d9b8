//go:build otelarrow

package arrowreceiver

import (
	"errors"
	"fmt"
	"github.com/otlp-lite/otlp-lite/internal/pbappend"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	arrowpb "github.com/open-telemetry/otel-arrow/go/api/experimental/arrow/v1"
	"github.com/open-telemetry/otel-arrow/go/pkg/otel/common"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// logsEncoder writes a batch's Arrow records as an OTLP
// ExportLogsServiceRequest, reading the columns as otel-arrow's
// conversion (pkg/otel/logs/otlp) reads them: the logs record's resources
// and scopes as the traces encoder walks them (scopeWalker), a log
// record's id (delta-encoded, nullable) keying its attributes, its body a
// struct of a type and one column per type (maps and slices in CBOR).
type logsEncoder struct {
	resAttrs, scopeAttrs, logAttrs attrTable
}

// LogRecord fields (opentelemetry.proto.logs.v1.LogRecord).
const (
	fLogTime         = 1
	fLogSeverity     = 2
	fLogSeverityText = 3
	fLogBody         = 5
	fLogAttrs        = 6
	fLogDropped      = 7
	fLogFlags        = 8
	fLogTraceID      = 9
	fLogSpanID       = 10
	fLogObserved     = 11
	fLogEventName    = 12
)

var (
	errLogTraceIDLen = errors.New("a log record's trace id is not 16 bytes")
	errLogSpanIDLen  = errors.New("a log record's span id is not 8 bytes")
)

// encode appends the batch's OTLP to dst, at most maxOTLP bytes of it, and
// returns the log records written. No logs record: nothing.
func (e *logsEncoder) encode(recs []arrow.Record, types []arrowpb.ArrowPayloadType, dst []byte, maxOTLP int) ([]byte, int, error) {
	for _, t := range []*attrTable{&e.resAttrs, &e.scopeAttrs, &e.logAttrs} {
		t.reset()
	}
	var logs arrow.Record
	for i, rec := range recs {
		var err error
		switch types[i] {
		case arrowpb.ArrowPayloadType_RESOURCE_ATTRS:
			err = e.resAttrs.load(rec, 0xffff)
		case arrowpb.ArrowPayloadType_SCOPE_ATTRS:
			err = e.scopeAttrs.load(rec, 0xffff)
		case arrowpb.ArrowPayloadType_LOG_ATTRS:
			err = e.logAttrs.load(rec, 0xffff)
		case arrowpb.ArrowPayloadType_LOGS:
			if logs != nil {
				err = errMultiple{types[i]}
			}
			logs = rec
		default:
			err = fmt.Errorf("a %v record in a logs batch", types[i])
		}
		if err != nil {
			return dst, 0, err
		}
	}
	if logs == nil {
		return dst, 0, nil
	}
	return e.encodeLogs(logs, dst, len(dst)+maxOTLP)
}

type logCols struct {
	id                      u16Col
	time, observed          timestampCol
	traceID, spanID         fsbCol
	severity                i32Col
	severityText, eventName strCol
	dropped, flags          u32Col
	body                    structCol
	bodyType                u8Col
	bodyStr                 strCol
	bodyInt                 i64Col
	bodyDouble              f64Col
	bodyBool                boolCol
	bodyBytes, bodySer      binCol
}

func logColumns(rec arrow.Record) (c logCols, err error) {
	r := resolver{f: recordFields(rec)}
	c.id = r.u16("id")
	c.time = r.timestamp("time_unix_nano")
	c.observed = r.timestamp("observed_time_unix_nano")
	c.traceID = r.fsb("trace_id")
	c.spanID = r.fsb("span_id")
	c.severity = r.i32("severity_number")
	c.severityText = r.str("severity_text")
	c.eventName = r.str("event_name")
	c.dropped = r.u32("dropped_attributes_count")
	c.flags = r.u32("flags")
	c.body = r.strct("body")
	if r.err != nil {
		return c, r.err
	}
	br := resolver{f: structFields(c.body.a)}
	c.bodyType = br.u8("type")
	c.bodyStr = br.str("str")
	c.bodyInt = br.i64("int")
	c.bodyDouble = br.f64("double")
	c.bodyBool = br.bool("bool")
	c.bodyBytes = br.bin("bytes")
	c.bodySer = br.bin("ser")
	return c, br.err
}

func (e *logsEncoder) encodeLogs(rec arrow.Record, b []byte, limit int) ([]byte, int, error) {
	c, err := logColumns(rec)
	if err != nil {
		return b, 0, err
	}
	w, err := newScopeWalker(rec, &e.resAttrs, &e.scopeAttrs, limit)
	if err != nil {
		return b, 0, err
	}
	n := int(rec.NumRows())
	var logID uint16
	for row := range n {
		if b, err = w.begin(b, row); err != nil {
			return b, 0, err
		}
		if b, err = e.appendLog(b, &c, row, &logID, limit); err != nil {
			return b, 0, err
		}
	}
	return w.end(b), n, nil
}

// appendLog writes row as a LogRecord of the open ScopeLogs.
func (e *logsEncoder) appendLog(b []byte, c *logCols, row int, logID *uint16, limit int) ([]byte, error) {
	tid := c.traceID.at(row)
	if tid != nil && len(tid) != 16 {
		return b, errLogTraceIDLen
	}
	sid := c.spanID.at(row)
	if sid != nil && len(sid) != 8 {
		return b, errLogSpanIDLen
	}
	b, at := pbappend.OpenLen(b, fScopeItems)
	b = pbappend.Fixed64NonZero(b, fLogTime, uint64(c.time.at(row)))
	b = pbappend.VarintNonZero(b, fLogSeverity, uint64(int64(c.severity.at(row))))
	b = pbappend.StringNonEmpty(b, fLogSeverityText, c.severityText.at(row))
	if c.body.present(row) {
		var err error
		if b, err = appendBody(b, c, row); err != nil {
			return b, err
		}
	}
	if c.id.valid(row) {
		*logID += c.id.at(row)
		var err error
		if b, err = e.logAttrs.appendAttrs(b, fLogAttrs, e.logAttrs.rows(uint32(*logID)), limit); err != nil {
			return b, err
		}
	}
	b = pbappend.VarintNonZero(b, fLogDropped, uint64(c.dropped.at(row)))
	b = pbappend.Fixed32NonZero(b, fLogFlags, c.flags.at(row))
	b = appendIDField(b, fLogTraceID, tid, 16)
	b = appendIDField(b, fLogSpanID, sid, 8)
	b = pbappend.Fixed64NonZero(b, fLogObserved, uint64(c.observed.at(row)))
	b = pbappend.StringNonEmpty(b, fLogEventName, c.eventName.at(row))
	b = pbappend.CloseLen(b, at)
	if len(b) > limit {
		return b, errTooLarge{len(b), limit}
	}
	return b, nil
}

// appendBody writes a log record's body, a struct of a type and a column
// per type (a map or slice in CBOR, decoded as otel-arrow decodes it).
func appendBody(b []byte, c *logCols, row int) ([]byte, error) {
	var v scalar
	v.typ = c.bodyType.at(row)
	switch v.typ {
	case vStr:
		v.s = c.bodyStr.at(row)
	case vInt:
		v.u = uint64(c.bodyInt.at(row))
	case vDouble:
		v.u = math.Float64bits(c.bodyDouble.at(row))
	case vBool:
		if c.bodyBool.at(row) {
			v.u = 1
		}
	case vBytes:
		v.bs = c.bodyBytes.at(row)
	case vMap, vSlice:
		pv := pcommon.NewValueEmpty()
		if err := common.Deserialize(c.bodySer.at(row), pv); err != nil {
			return b, fmt.Errorf("cannot decode log body: %w", err)
		}
		return appendValue(b, fLogBody, pv), nil
	default:
		return b, nil // empty (an unknown type is ignored)
	}
	vs := v.size()
	b = pbappend.Varint(pbappend.Tag(b, fLogBody, 2), uint64(vs))
	return v.append(b), nil
}
