package grpcwire

import (
	"encoding/base64"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/VictoriaMetrics/easyproto"

	"github.com/otlp-lite/otlp-lite/otlppb"
)

// Code is a gRPC status code (grpc/doc/statuscodes.md).
type Code uint32

// The gRPC status codes.
const (
	OK                 Code = 0
	Canceled           Code = 1
	Unknown            Code = 2
	InvalidArgument    Code = 3
	DeadlineExceeded   Code = 4
	NotFound           Code = 5
	AlreadyExists      Code = 6
	PermissionDenied   Code = 7
	ResourceExhausted  Code = 8
	FailedPrecondition Code = 9
	Aborted            Code = 10
	OutOfRange         Code = 11
	Unimplemented      Code = 12
	Internal           Code = 13
	Unavailable        Code = 14
	DataLoss           Code = 15
	Unauthenticated    Code = 16
)

var codeNames = [...]string{
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
	"ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
	"UNAUTHENTICATED",
}

// String returns the code's canonical upper-case name, e.g. "UNAVAILABLE".
func (c Code) String() string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "CODE(" + strconv.Itoa(int(c)) + ")"
}

// HTTPStatus maps the code to the HTTP status of the canonical mapping in
// google/rpc/code.proto, which OTLP/HTTP uses for its error responses.
func (c Code) HTTPStatus() int {
	switch c {
	case OK:
		return http.StatusOK
	case Canceled:
		return 499 // client closed request
	case InvalidArgument, FailedPrecondition, OutOfRange:
		return http.StatusBadRequest
	case DeadlineExceeded:
		return http.StatusGatewayTimeout
	case NotFound:
		return http.StatusNotFound
	case AlreadyExists, Aborted:
		return http.StatusConflict
	case PermissionDenied:
		return http.StatusForbidden
	case ResourceExhausted:
		return http.StatusTooManyRequests
	case Unimplemented:
		return http.StatusNotImplemented
	case Unavailable:
		return http.StatusServiceUnavailable
	case Unauthenticated:
		return http.StatusUnauthorized
	}
	return http.StatusInternalServerError
}

// Status is a gRPC status: a code, a human-readable message and, optionally,
// a retry delay carried as google.rpc.RetryInfo in grpc-status-details-bin.
// A *Status is also an error.
type Status struct {
	Code    Code
	Message string
	// RetryDelay, when positive, is sent to the client as a
	// google.rpc.RetryInfo detail: how long to wait before retrying. OTLP
	// v1.11 "Failures" section: throttled servers SHOULD send it with
	// UNAVAILABLE or RESOURCE_EXHAUSTED. A negative value sends RetryInfo
	// with a zero delay ("retry now, elsewhere"), used when a stream is
	// rotated.
	RetryDelay time.Duration
	// Violations, when set, are sent as a google.rpc.BadRequest detail:
	// where the request is bad and why (OTLP v1.11 "Bad Data": the Status
	// "SHOULD contain a BadRequest that describes the bad data").
	Violations []FieldViolation
}

// FieldViolation is a google.rpc.BadRequest.FieldViolation: Field is the
// path of the bad field inside the request (for OTLP, e.g.
// "resource_spans[0].scope_spans[0].spans[2].attributes[1]"), Description
// what is wrong with it.
type FieldViolation struct {
	Field       string
	Description string
}

// Errorf returns a Status with the given code and a formatted message,
// cut to MaxMessage bytes (BoundMessage). Arguments that are input a
// client sent are quoted with package internal/quote, which quotes a
// short prefix of each.
func Errorf(c Code, format string, args ...any) *Status {
	return &Status{Code: c, Message: BoundMessage(fmt.Sprintf(format, args...))}
}

// The bounds of what a Status puts in a response, whatever it was given.
// OTLP v1.11 caps a response at 4 MiB ("OTLP/gRPC Response", "OTLP/HTTP
// Response"); a message that says what is wrong and where needs a line,
// not megabytes, and the Status also travels in gRPC trailers
// (grpc-message, and grpc-status-details-bin in base64), which a peer
// limits with its SETTINGS_MAX_HEADER_LIST_SIZE. So a Status encodes to
// at most MaxMessage + MaxViolations*2*MaxMessage bytes plus a few dozen
// of framing (36 KiB; 48 KiB as base64), far below the response cap.
const (
	// MaxMessage is the most bytes of a message, and of each field and
	// description of a violation, that a Status sends.
	MaxMessage = 4 << 10
	// MaxViolations is the most BadRequest violations a Status sends:
	// the receiver reports the first bad item of a request.
	MaxViolations = 4
)

// BoundMessage cuts msg to MaxMessage bytes, at a UTF-8 boundary, marking
// the cut. Every message a response carries passes through it: a Status's
// when it is encoded, a partial success's error_message.
func BoundMessage(msg string) string {
	if len(msg) <= MaxMessage {
		return msg
	}
	const suffix = " ... (truncated)"
	cut := MaxMessage - len(suffix)
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + suffix
}

// Error implements error.
func (s *Status) Error() string {
	return "grpc status " + s.Code.String() + ": " + s.Message
}

// HasDetails reports whether the status carries details to be sent in
// grpc-status-details-bin.
func (s *Status) HasDetails() bool { return s.RetryDelay != 0 || len(s.Violations) > 0 }

var marshalerPool easyproto.MarshalerPool

// AppendProto appends the google.rpc.Status encoding of s to dst (the
// field numbers are otlppb's RPCStatus*, Any*, RetryInfo*, Duration* and
// BadRequest*):
//
//	message Status {
//	  int32 code = 1;
//	  string message = 2;
//	  repeated google.protobuf.Any details = 3;
//	}
//	message Any { string type_url = 1; bytes value = 2; }
//	message RetryInfo { google.protobuf.Duration retry_delay = 1; }
//	message Duration { int64 seconds = 1; int32 nanos = 2; }
//	message BadRequest {
//	  message FieldViolation { string field = 1; string description = 2; }
//	  repeated FieldViolation field_violations = 1;
//	}
func (s *Status) AppendProto(dst []byte) []byte {
	m := marshalerPool.Get()
	mm := m.MessageMarshaler()
	if s.Code != OK {
		mm.AppendInt32(otlppb.RPCStatusCode, int32(s.Code))
	}
	if s.Message != "" {
		mm.AppendString(otlppb.RPCStatusMessage, BoundMessage(s.Message))
	}
	if s.RetryDelay != 0 {
		any := mm.AppendMessage(otlppb.RPCStatusDetails)
		any.AppendString(otlppb.AnyTypeURL, otlppb.RetryInfoTypeURL)
		// The Any value is itself a serialized RetryInfo message.
		var buf [32]byte
		any.AppendBytes(otlppb.AnyValue, appendRetryInfo(buf[:0], s.RetryDelay))
	}
	if len(s.Violations) > 0 {
		any := mm.AppendMessage(otlppb.RPCStatusDetails)
		any.AppendString(otlppb.AnyTypeURL, otlppb.BadRequestTypeURL)
		br := marshalerPool.Get()
		brm := br.MessageMarshaler()
		for _, v := range s.Violations[:min(len(s.Violations), MaxViolations)] {
			fv := brm.AppendMessage(otlppb.BadRequestFieldViolations)
			if v.Field != "" {
				fv.AppendString(otlppb.BadRequestFieldViolationField, BoundMessage(v.Field))
			}
			if v.Description != "" {
				fv.AppendString(otlppb.BadRequestFieldViolationDescription, BoundMessage(v.Description))
			}
		}
		any.AppendBytes(otlppb.AnyValue, br.Marshal(nil))
		marshalerPool.Put(br)
	}
	dst = m.Marshal(dst)
	marshalerPool.Put(m)
	return dst
}

// ParseStatusProto decodes a google.rpc.Status, extracting RetryInfo and
// BadRequest if present. It is used by the client side and by tests.
func ParseStatusProto(src []byte) (*Status, error) {
	st := &Status{}
	var fc easyproto.FieldContext
	for len(src) > 0 {
		var err error
		if src, err = fc.NextField(src); err != nil {
			return nil, fmt.Errorf("cannot decode google.rpc.Status: %w", err)
		}
		switch fc.FieldNum {
		case otlppb.RPCStatusCode:
			if v, ok := fc.Int64(); ok {
				st.Code = Code(uint32(v))
			}
		case otlppb.RPCStatusMessage:
			if v, ok := fc.String(); ok {
				st.Message = v
			}
		case otlppb.RPCStatusDetails:
			data, ok := fc.MessageData()
			if !ok {
				continue
			}
			if d, ok, err := parseRetryInfoAny(data); err != nil {
				return nil, err
			} else if ok {
				st.RetryDelay = d
				if d == 0 {
					st.RetryDelay = -1
				}
			}
			if err := parseBadRequestAny(data, st); err != nil {
				return nil, err
			}
		}
	}
	return st, nil
}

func parseRetryInfoAny(src []byte) (time.Duration, bool, error) {
	typeURL, _, err := easyproto.GetString(src, otlppb.AnyTypeURL)
	if err != nil {
		return 0, false, fmt.Errorf("cannot decode google.protobuf.Any: %w", err)
	}
	if typeURL != otlppb.RetryInfoTypeURL {
		return 0, false, nil
	}
	value, _, err := easyproto.GetBytes(src, otlppb.AnyValue)
	if err != nil {
		return 0, false, fmt.Errorf("cannot decode google.protobuf.Any: %w", err)
	}
	dur, _, err := easyproto.GetMessageData(value, otlppb.RetryInfoRetryDelay)
	if err != nil {
		return 0, false, fmt.Errorf("cannot decode google.rpc.RetryInfo: %w", err)
	}
	sec, _, err := easyproto.GetInt64(dur, otlppb.DurationSeconds)
	if err != nil {
		return 0, false, fmt.Errorf("cannot decode google.protobuf.Duration: %w", err)
	}
	ns, _, err := easyproto.GetInt64(dur, otlppb.DurationNanos)
	if err != nil {
		return 0, false, fmt.Errorf("cannot decode google.protobuf.Duration: %w", err)
	}
	// Saturated, not wrapped: a hostile 9223372036 s must stay the
	// longest delay (which clients cut to otlp.MaxServerDelay), not
	// become a negative one ("reconnect now").
	const maxSec = math.MaxInt64 / int64(time.Second)
	if sec >= maxSec {
		return math.MaxInt64, true, nil
	}
	if sec <= -maxSec {
		return math.MinInt64, true, nil
	}
	return time.Duration(sec)*time.Second + time.Duration(int32(ns)), true, nil
}

// appendRetryInfo appends a serialized google.rpc.RetryInfo of delay d
// (negative: zero).
func appendRetryInfo(dst []byte, d time.Duration) []byte {
	info := marshalerPool.Get()
	d = max(d, 0)
	dur := info.MessageMarshaler().AppendMessage(otlppb.RetryInfoRetryDelay)
	if sec := int64(d / time.Second); sec != 0 {
		dur.AppendInt64(otlppb.DurationSeconds, sec)
	}
	if ns := int32(d % time.Second); ns != 0 {
		dur.AppendInt32(otlppb.DurationNanos, ns)
	}
	dst = info.Marshal(dst)
	marshalerPool.Put(info)
	return dst
}

// retryInfoHeaderValue is the google.rpc.retryinfo-bin metadata value of
// s's retry delay: a serialized RetryInfo, base64 as every -bin value.
func (s *Status) retryInfoHeaderValue() string {
	var buf [32]byte
	return base64.RawStdEncoding.EncodeToString(appendRetryInfo(buf[:0], s.RetryDelay))
}

// detailsHeaderValue returns the grpc-status-details-bin value: the
// google.rpc.Status, base64 without padding (PROTOCOL-HTTP2.md, "-bin"
// headers: senders SHOULD omit padding).
func (s *Status) detailsHeaderValue() string {
	var buf [128]byte
	return base64.RawStdEncoding.EncodeToString(s.AppendProto(buf[:0]))
}

// encodeGRPCMessage percent-encodes msg, cut to MaxMessage bytes, for the
// grpc-message header: bytes outside the printable ASCII range 0x20-0x7E,
// and '%' itself, become %XX (PROTOCOL-HTTP2.md, "Status-Message"). Invalid
// UTF-8 is passed through as bytes, which the receiver decodes back.
func encodeGRPCMessage(msg string) string {
	msg = BoundMessage(msg)
	clean := true
	for i := 0; i < len(msg); i++ {
		if c := msg[i]; c < ' ' || c > '~' || c == '%' {
			clean = false
			break
		}
	}
	if clean {
		return msg
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(msg)+16)
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if c < ' ' || c > '~' || c == '%' {
			b = append(b, '%', hex[c>>4], hex[c&15])
		} else {
			b = append(b, c)
		}
	}
	return string(b)
}

// DecodeGRPCMessage reverses the percent-encoding of a grpc-message header.
// Malformed escapes are kept literally, as the spec asks.
func DecodeGRPCMessage(s string) string {
	if !containsByte(s, '%') {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b = append(b, byte(v))
				i += 2
				continue
			}
		}
		b = append(b, s[i])
	}
	return string(b)
}

func containsByte(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}

// parseBadRequestAny appends the violations of a google.rpc.BadRequest Any
// to st; other types are ignored.
func parseBadRequestAny(src []byte, st *Status) error {
	typeURL, _, err := easyproto.GetString(src, otlppb.AnyTypeURL)
	if err != nil {
		return fmt.Errorf("cannot decode google.protobuf.Any: %w", err)
	}
	if typeURL != otlppb.BadRequestTypeURL {
		return nil
	}
	value, _, err := easyproto.GetBytes(src, otlppb.AnyValue)
	if err != nil {
		return fmt.Errorf("cannot decode google.protobuf.Any: %w", err)
	}
	var fc easyproto.FieldContext
	for len(value) > 0 {
		if value, err = fc.NextField(value); err != nil {
			return fmt.Errorf("cannot decode google.rpc.BadRequest: %w", err)
		}
		data, ok := fc.MessageData()
		if fc.FieldNum != otlppb.BadRequestFieldViolations || !ok {
			continue
		}
		var v FieldViolation
		if v.Field, _, err = easyproto.GetString(data, otlppb.BadRequestFieldViolationField); err != nil {
			return fmt.Errorf("cannot decode google.rpc.BadRequest.FieldViolation: %w", err)
		}
		if v.Description, _, err = easyproto.GetString(data, otlppb.BadRequestFieldViolationDescription); err != nil {
			return fmt.Errorf("cannot decode google.rpc.BadRequest.FieldViolation: %w", err)
		}
		v.Field, v.Description = strings.Clone(v.Field), strings.Clone(v.Description) // they alias src
		st.Violations = append(st.Violations, v)
	}
	return nil
}

// GRPCCode returns the status code's number; with HasRetryInfo it is what
// package otlp's retry rules read.
func (s *Status) GRPCCode() uint32 { return uint32(s.Code) }

// HasRetryInfo reports whether the status carries a google.rpc.RetryInfo
// detail: RetryDelay is not zero (-1 stands for an explicit zero delay).
func (s *Status) HasRetryInfo() bool { return s.RetryDelay != 0 }
