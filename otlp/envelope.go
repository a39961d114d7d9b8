package otlp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/VictoriaMetrics/easyproto"

	"github.com/otlp-lite/otlp-lite/otlppb"
)

// The stream envelope of otlp-lite's StreamService and UnaryEnvelopeService
// (proto/otlplite/v1/stream.proto), in both directions: a client wraps each
// Export*ServiceRequest with AppendEnvelope and reads the answers with
// ParseAck; a server unwraps the request with UnwrapEnvelope and answers
// with AppendAck.

// The field numbers of the streaming mode's messages
// (proto/otlplite/v1/stream.proto), named once. An ExportRequest envelope
// is its Export*ServiceRequest with every top-level field moved up by
// envelopeShift, so that field 1 is free for the id.
const (
	EnvelopeID    = 1 // uint64 id, of an ExportRequest and of its ExportResponse
	envelopeShift = 1 // OTLP's top-level field n is the envelope's field n+1

	ackCode       = 2 // ResultCode code
	ackMessage    = 3 // string message
	ackRetryDelay = 4 // google.protobuf.Duration retry_delay
	ackRejected   = 5 // int64 rejected_items
)

// AppendEnvelope appends the stream envelope of an OTLP export request to
// dst: req is a serialized ExportTraceServiceRequest (or the metrics, logs
// or profiles one), whose fields are
//
//	repeated opentelemetry.proto.trace.v1.ResourceSpans resource_spans = 1;
//	// profiles only:
//	opentelemetry.proto.profiles.v1development.ProfilesDictionary dictionary = 2;
//
// and the result is the proposal's message, each field moved up by one to
// make room for the id:
//
//	message TraceExportRequest {
//	  uint64 id = 1;
//	  repeated opentelemetry.proto.trace.v1.ResourceSpans resource_spans = 2;
//	}
//	message ProfilesExportRequest {
//	  uint64 id = 1;
//	  repeated opentelemetry.proto.profiles.v1development.ResourceProfiles resource_profiles = 2;
//	  opentelemetry.proto.profiles.v1development.ProfilesDictionary dictionary = 3;
//	}
//
// The payload bytes are copied unchanged; only each top-level tag is
// rewritten from field n to field n+1 (same wire type, same length), so the
// cost is one copy and nothing is decoded below the top level. Other fields
// are dropped: no Export*ServiceRequest of OTLP v1.11 has them. An error
// means req is not a valid protobuf message (or field 1 is not a message);
// dst is then returned unchanged.
func AppendEnvelope(dst []byte, id uint64, req []byte) ([]byte, error) {
	start := len(dst)
	if id != 0 {
		dst = append(dst, EnvelopeID<<3|0) // varint
		dst = binary.AppendUvarint(dst, id)
	}
	var fc easyproto.FieldContext
	for src := req; len(src) > 0; {
		tail, err := fc.NextField(src)
		if err != nil {
			return dst[:start], fmt.Errorf("cannot wrap export request: %w", err)
		}
		// The numbers are the same in every signal: the traces and
		// profiles names stand for all.
		if fc.FieldNum == otlppb.ExportTraceServiceRequestResourceSpans || fc.FieldNum == otlppb.ExportProfilesServiceRequestDictionary {
			data, ok := fc.MessageData()
			if !ok {
				if fc.FieldNum == otlppb.ExportProfilesServiceRequestDictionary {
					// Not the dictionary (wrong wire type): an unknown
					// field to protobuf, dropped like the others.
					src = tail
					continue
				}
				return dst[:start], errors.New("cannot wrap export request: field 1 is not a message")
			}
			dst = append(dst, byte(fc.FieldNum+envelopeShift)<<3|2) // LEN
			dst = binary.AppendUvarint(dst, uint64(len(data)))
			dst = append(dst, data...)
		}
		src = tail
	}
	return dst, nil
}

// CheckExportRequest reports whether AppendEnvelope would accept req,
// without copying it.
func CheckExportRequest(req []byte) error {
	var fc easyproto.FieldContext
	for src := req; len(src) > 0; {
		tail, err := fc.NextField(src)
		if err != nil {
			return fmt.Errorf("cannot wrap export request: %w", err)
		}
		if fc.FieldNum == otlppb.ExportTraceServiceRequestResourceSpans {
			if _, ok := fc.MessageData(); !ok {
				return errors.New("cannot wrap export request: field 1 is not a message")
			}
		}
		src = tail
	}
	return nil
}

// UnwrapEnvelope turns the envelope msg back into the plain
// Export*ServiceRequest, in place, and returns its id and the request, a
// prefix of msg: fields 2 and 3 become fields 1 and 2 (resource_spans,
// resource_metrics, resource_logs or resource_profiles, and the profiles
// dictionary); the id and unknown fields are dropped. Each rewritten tag is
// one byte and no field grows, so writing never overtakes reading. On error
// msg may be partly rewritten, and req is nil. It does not allocate.
func UnwrapEnvelope(msg []byte) (id uint64, req []byte, err error) {
	w := 0
	var fc easyproto.FieldContext
	for rest := msg; len(rest) > 0; {
		tail, err := fc.NextField(rest)
		if err != nil {
			return 0, nil, err
		}
		switch fc.FieldNum {
		case EnvelopeID:
			if v, ok := fc.Uint64(); ok {
				id = v
			}
		case otlppb.ExportTraceServiceRequestResourceSpans + envelopeShift, otlppb.ExportProfilesServiceRequestDictionary + envelopeShift:
			if data, ok := fc.MessageData(); ok {
				// Field n-1, wire type LEN, then the length and the data,
				// moved down to the write position.
				dataStart := len(msg) - len(tail) - len(data)
				w = writeLenField(msg, w, byte(fc.FieldNum-envelopeShift)<<3|2, dataStart, len(data))
			}
		}
		rest = tail
	}
	return id, msg[:w], nil
}

// writeLenField writes the one-byte tag, the varint n and
// src[dataStart:dataStart+n] at src[w:], returning the new write position.
// The caller guarantees the written bytes end no later than dataStart+n.
func writeLenField(src []byte, w int, tag byte, dataStart, n int) int {
	var hdr [binary.MaxVarintLen64 + 1]byte
	hdr[0] = tag
	k := 1 + binary.PutUvarint(hdr[1:], uint64(n))
	w += copy(src[w:], hdr[:k])
	w += copy(src[w:], src[dataStart:dataStart+n])
	return w
}

// ResultCode is the outcome of one streamed request.
type ResultCode int32

// The result codes of ExportResponse (stream.proto).
const (
	// Success: stored (or the invalid items rejected, see Ack.Rejected).
	// Do not resend.
	Success ResultCode = 0
	// FailedNoneRetryable: malformed; resending cannot help.
	FailedNoneRetryable ResultCode = 1
	// FailedRetryable: not stored; resend after Ack.RetryDelay.
	FailedRetryable ResultCode = 2
)

// String returns the proto enum name.
func (c ResultCode) String() string {
	switch c {
	case Success:
		return "Success"
	case FailedNoneRetryable:
		return "FailedNoneRetryable"
	case FailedRetryable:
		return "FailedRetryable"
	}
	return fmt.Sprintf("ResultCode(%d)", int32(c))
}

// Ack is one decoded ExportResponse.
type Ack struct {
	ID   uint64
	Code ResultCode
	// Message is error_message. It aliases the buffer passed to ParseAck,
	// so it is valid only until that buffer is reused.
	Message []byte
	// RetryDelay is retry_delay; HasRetryDelay tells a zero delay from an
	// absent one.
	RetryDelay    time.Duration
	HasRetryDelay bool
	Rejected      int64
}

// MaxRetryDelay bounds a decoded retry_delay: a server cannot make the
// client wait longer than a day, whatever it sends.
const MaxRetryDelay = 24 * time.Hour

var ackMarshalers easyproto.MarshalerPool

// AppendAck appends the ExportResponse of request id to dst:
//
//	message ExportResponse {
//	  uint64 id = 1;
//	  ResultCode result_code = 2;
//	  string error_message = 3;
//	  google.protobuf.Duration retry_delay = 4;
//	  int64 rejected_items = 5;
//	}
//	message Duration { int64 seconds = 1; int32 nanos = 2; }
//
// Zero fields are left out, except retry_delay: it is written exactly when
// code is FailedRetryable (a negative delay as zero). ParseAck is its
// inverse. It does not allocate once dst has room.
func AppendAck(dst []byte, id uint64, code ResultCode, message string, retryDelay time.Duration, rejected int64) []byte {
	m := ackMarshalers.Get()
	mm := m.MessageMarshaler()
	if id != 0 {
		mm.AppendUint64(EnvelopeID, id)
	}
	if code != Success {
		mm.AppendInt32(ackCode, int32(code))
	}
	if message != "" {
		mm.AppendString(ackMessage, message)
	}
	if code == FailedRetryable {
		d := max(retryDelay, 0)
		dur := mm.AppendMessage(ackRetryDelay)
		if sec := int64(d / time.Second); sec != 0 {
			dur.AppendInt64(otlppb.DurationSeconds, sec)
		}
		if ns := int32(d % time.Second); ns != 0 {
			dur.AppendInt32(otlppb.DurationNanos, ns)
		}
	}
	if rejected != 0 {
		mm.AppendInt64(ackRejected, rejected)
	}
	dst = m.Marshal(dst)
	ackMarshalers.Put(m)
	return dst
}

// ParseAck decodes an ExportResponse (see AppendAck) into a, overwriting
// every field. Unknown fields are skipped, so a server that sends only the
// proposal's fields 1 and 2 is understood. A retry_delay is clamped to
// [0, MaxRetryDelay]. It does not allocate.
func ParseAck(src []byte, a *Ack) error {
	*a = Ack{}
	var fc easyproto.FieldContext
	for len(src) > 0 {
		tail, err := fc.NextField(src)
		if err != nil {
			return fmt.Errorf("cannot decode ExportResponse: %w", err)
		}
		ok := true
		switch fc.FieldNum {
		case EnvelopeID:
			a.ID, ok = fc.Uint64()
		case ackCode:
			var c int32
			c, ok = fc.Int32()
			a.Code = ResultCode(c)
		case ackMessage:
			a.Message, ok = fc.MessageData() // bytes of a string field
		case ackRetryDelay:
			var data []byte
			if data, ok = fc.MessageData(); ok {
				a.RetryDelay, err = parseDuration(data)
				if err != nil {
					return fmt.Errorf("cannot decode ExportResponse.retry_delay: %w", err)
				}
				a.HasRetryDelay = true
			}
		case ackRejected:
			a.Rejected, ok = fc.Int64()
		}
		if !ok {
			return fmt.Errorf("cannot decode ExportResponse: field %d has the wrong wire type", fc.FieldNum)
		}
		src = tail
	}
	return nil
}

// parseDuration decodes a google.protobuf.Duration, clamped to
// [0, MaxRetryDelay]: a negative delay means "now".
func parseDuration(src []byte) (time.Duration, error) {
	var sec, ns int64
	var fc easyproto.FieldContext
	for len(src) > 0 {
		tail, err := fc.NextField(src)
		if err != nil {
			return 0, err
		}
		ok := true
		switch fc.FieldNum {
		case otlppb.DurationSeconds:
			sec, ok = fc.Int64()
		case otlppb.DurationNanos:
			var n int32
			n, ok = fc.Int32()
			ns = int64(n)
		}
		if !ok {
			return 0, fmt.Errorf("field %d has the wrong wire type", fc.FieldNum)
		}
		src = tail
	}
	if sec < 0 || ns < 0 {
		return 0, nil
	}
	if sec >= int64(MaxRetryDelay/time.Second) {
		return MaxRetryDelay, nil
	}
	return min(time.Duration(sec)*time.Second+time.Duration(ns), MaxRetryDelay), nil
}
