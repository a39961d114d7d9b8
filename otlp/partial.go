package otlp

import (
	"fmt"

	"github.com/VictoriaMetrics/easyproto"

	"github.com/otlp-lite/otlp-lite/otlppb"
)

// PartialSuccess is the partial_success of an Export*ServiceResponse: the
// items the server rejected as invalid (and will not store, whatever the
// client does) and why.
type PartialSuccess struct {
	// Rejected is rejected_spans, rejected_data_points or
	// rejected_log_records.
	Rejected int64
	// Message is error_message.
	Message string
}

// ParsePartialSuccess decodes the partial_success of resp, an
// Export{Trace,Metrics,Logs}ServiceResponse; the three share one layout:
//
//	message ExportTraceServiceResponse {
//	  ExportTracePartialSuccess partial_success = 1;
//	}
//	message ExportTracePartialSuccess {
//	  int64 rejected_spans = 1; // rejected_data_points, rejected_log_records
//	  string error_message = 2;
//	}
//
// An unset partial_success (full success) gives the zero PartialSuccess.
// As protobuf decoders do, a partial_success sent more than once is merged
// and a repeated scalar's last value wins. Unknown fields are skipped. On
// error the result is zero.
func ParsePartialSuccess(resp []byte) (PartialSuccess, error) {
	var ps PartialSuccess
	var fc easyproto.FieldContext
	for len(resp) > 0 {
		var err error
		if resp, err = fc.NextField(resp); err != nil {
			return PartialSuccess{}, fmt.Errorf("cannot decode export response: %w", err)
		}
		if fc.FieldNum != otlppb.ExportTraceServiceResponsePartialSuccess { // the same number in every signal's response
			continue
		}
		data, ok := fc.MessageData()
		if !ok {
			return PartialSuccess{}, fmt.Errorf("cannot decode export response: partial_success has the wrong wire type")
		}
		for len(data) > 0 {
			if data, err = fc.NextField(data); err != nil {
				return PartialSuccess{}, fmt.Errorf("cannot decode export response partial_success: %w", err)
			}
			ok := true
			switch fc.FieldNum {
			case otlppb.ExportTracePartialSuccessRejectedSpans: // rejected_data_points, _log_records, _profiles
				ps.Rejected, ok = fc.Int64()
			case otlppb.ExportTracePartialSuccessErrorMessage:
				ps.Message, ok = fc.String()
			}
			if !ok {
				return PartialSuccess{}, fmt.Errorf("cannot decode export response partial_success: field %d has the wrong wire type", fc.FieldNum)
			}
		}
	}
	if ps.Message != "" {
		ps.Message = string([]byte(ps.Message)) // it aliases resp
	}
	return ps, nil
}
