package handler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/VictoriaMetrics/easyproto"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
	"github.com/otlp-lite/otlp-lite/otlpjson"
	"github.com/otlp-lite/otlp-lite/storage"
)

// signalKind describes what differs between the three OTLP export services.
type signalKind struct {
	signal storage.Signal
	// request names the request message in error messages.
	request string
	// itemName names one item, plural, in messages ("spans").
	itemName string
	check    func(src []byte, opts *otlpdecode.Options) (otlpdecode.Result, error)
	filter   func(dst, src []byte, opts *otlpdecode.Options) ([]byte, error)
	// jsonRequest and jsonResponse are the OTLP/JSON message types.
	jsonRequest, jsonResponse otlpjson.MessageType
}

var (
	tracesSignal = signalKind{
		signal: storage.Traces, request: "ExportTraceServiceRequest", itemName: "spans",
		check: otlpdecode.CheckTraces, filter: otlpdecode.AppendValidTraces,
		jsonRequest: otlpjson.ExportTraceServiceRequest, jsonResponse: otlpjson.ExportTraceServiceResponse,
	}
	metricsSignal = signalKind{
		signal: storage.Metrics, request: "ExportMetricsServiceRequest", itemName: "data points",
		check: otlpdecode.CheckMetrics, filter: otlpdecode.AppendValidMetrics,
		jsonRequest: otlpjson.ExportMetricsServiceRequest, jsonResponse: otlpjson.ExportMetricsServiceResponse,
	}
	logsSignal = signalKind{
		signal: storage.Logs, request: "ExportLogsServiceRequest", itemName: "log records",
		check: otlpdecode.CheckLogs, filter: otlpdecode.AppendValidLogs,
		jsonRequest: otlpjson.ExportLogsServiceRequest, jsonResponse: otlpjson.ExportLogsServiceResponse,
	}
)

// exportOutcome is what one export request came to.
type exportOutcome struct {
	items    int // items in the request
	rejected int // items refused as invalid (partial success)
	message  string
}

// exportUnary serves one OTLP Export call: read the message, validate it,
// store the valid items, and answer.
//
// OTLP v1.11, "OTLP/gRPC Response": on full success the response has
// partial_success unset (not an empty message — the collector sends an empty
// one; the spec says the server MUST leave the field unset); when some items
// are rejected, partial_success carries their count and a message, and the
// call is still OK so the client does not retry them; a request that cannot
// be decoded at all gets INVALID_ARGUMENT (not retryable).
func (h *Handler) exportUnary(call *grpcwire.Call, kind *signalKind) {
	bufs := h.getBuffers()
	defer h.putBuffers(bufs)
	call.SetBudget(&bufs.ticket)
	var st *grpcwire.Status
	bufs.msg, bufs.scratch, st = call.ReadUnary(bufs.msg, bufs.scratch)
	if st != nil {
		h.m.countRequest(transportGRPC, kind.signal, exportOutcome{}, st)
		h.logRefusal(call.Request(), "grpc", st)
		call.WriteStatus(st)
		return
	}
	h.m.countBytes(transportGRPC, call.LastWireSize(), len(bufs.msg))
	out, st := h.export(call.Context(), transportGRPC, kind, bufs)
	if st != nil {
		h.logRefusal(call.Request(), "grpc", st)
		call.WriteStatus(st)
		return
	}
	bufs.resp = appendExportResponse(bufs.resp[:0], out)
	if err := call.WriteResponse(bufs.resp); err != nil {
		h.log.Debug("cannot write response", "peer", call.Request().RemoteAddr, "err", err)
	}
}

// export validates bufs.msg and stores its valid items. It is shared by every
// transport; the status it returns is translated to each one's form. It
// counts the request in the metrics.
func (h *Handler) export(ctx context.Context, t transport, kind *signalKind, bufs *requestBuffers) (exportOutcome, *grpcwire.Status) {
	out, st := h.validateAndStore(ctx, kind, bufs)
	h.m.countRequest(t, kind.signal, out, st)
	return out, st
}

func (h *Handler) validateAndStore(ctx context.Context, kind *signalKind, bufs *requestBuffers) (exportOutcome, *grpcwire.Status) {
	res, err := h.checks.run(&bufs.check, kind.check, bufs.msg, &h.decodeOpts)
	if err != nil {
		return exportOutcome{}, badRequest(grpcwire.Errorf(grpcwire.InvalidArgument, "cannot decode %s: %v", kind.request, err), err)
	}
	out := exportOutcome{items: res.Items, rejected: res.Rejected}
	data := bufs.msg
	if res.Rejected > 0 {
		out.message = fmt.Sprintf("%d of %d %s rejected; first: %s", res.Rejected, res.Items, kind.itemName, res.FirstRejection)
		bufs.filtered, err = kind.filter(bufs.filtered[:0], bufs.msg, &h.decodeOpts)
		if err != nil {
			// Check accepted the same bytes, so this is our bug.
			return out, grpcwire.Errorf(grpcwire.Internal, "cannot remove rejected %s: %v", kind.itemName, err)
		}
		data = bufs.filtered
	}
	stored := res.Items - res.Rejected
	if stored == 0 {
		// An empty request, or one whose every item was rejected: nothing
		// to store, and nothing for the client to retry.
		return out, nil
	}
	start := time.Now()
	err = h.sink.Write(ctx, kind.signal, data, stored)
	h.m.observeStorage(kind.signal, start)
	if err != nil {
		return out, h.storageStatus(ctx, err)
	}
	return out, nil
}

// badRequest adds to st, an INVALID_ARGUMENT for undecodable data, the
// google.rpc.BadRequest detail OTLP asks for ("Bad Data": the Status
// "SHOULD contain a BadRequest that describes the bad data"): the position
// of the bad data inside the request, when the decoder knows it, and what
// is wrong there.
func badRequest(st *grpcwire.Status, err error) *grpcwire.Status {
	v := grpcwire.FieldViolation{Description: err.Error()}
	if field, desc, ok := otlpdecode.ErrorPosition(err); ok {
		v = grpcwire.FieldViolation{Field: field, Description: desc}
	}
	st.Violations = []grpcwire.FieldViolation{v}
	return st
}

// storageStatus maps a Sink error to the status the client gets. Storage
// failures are retryable — the data was not stored and the client still has
// it (OTLP v1.11 "Failures": UNAVAILABLE is retryable, with RetryInfo telling
// when) — except ErrRejected, which no retry can fix.
func (h *Handler) storageStatus(ctx context.Context, err error) *grpcwire.Status {
	if ctxErr := ctx.Err(); ctxErr != nil {
		// The sink stopped waiting, not necessarily writing: a record
		// already handed to the disk log is still written. Say so, as a
		// retry may then store it twice (OTLP allows duplicates; it does
		// not allow claiming a loss that did not happen).
		if errors.Is(ctxErr, context.DeadlineExceeded) {
			return grpcwire.Errorf(grpcwire.DeadlineExceeded, "deadline exceeded before storage confirmed the data (it may still be stored; a retry can duplicate it)")
		}
		return grpcwire.Errorf(grpcwire.Canceled, "request canceled before storage confirmed the data (it may still be stored)")
	}
	if errors.Is(err, storage.ErrRejected) {
		// Retrying the same request cannot succeed: INVALID_ARGUMENT,
		// HTTP 400, stream FailedNoneRetryable.
		return grpcwire.Errorf(grpcwire.InvalidArgument, "storage cannot accept this request as sent: %v", err)
	}
	st := grpcwire.Errorf(grpcwire.Unavailable, "cannot store data, retry later: %v", err)
	st.RetryDelay = h.retryDelay
	return st
}

// appendExportResponse encodes the Export*ServiceResponse. The three
// responses share one shape:
//
//	message ExportTraceServiceResponse {
//	  ExportTracePartialSuccess partial_success = 1;
//	}
//	message ExportTracePartialSuccess {
//	  int64 rejected_spans = 1;  // rejected_data_points, rejected_log_records
//	  string error_message = 2;
//	}
func appendExportResponse(dst []byte, out exportOutcome) []byte {
	if out.rejected == 0 && out.message == "" {
		return dst
	}
	m := responseMarshalers.Get()
	ps := m.MessageMarshaler().AppendMessage(1)
	if out.rejected != 0 {
		ps.AppendInt64(1, int64(out.rejected))
	}
	if out.message != "" {
		ps.AppendString(2, out.message)
	}
	dst = m.Marshal(dst)
	responseMarshalers.Put(m)
	return dst
}

var responseMarshalers easyproto.MarshalerPool

// logRefusal logs a request that did not end in OK. Refusals are what an
// operator needs to see; successes are not logged (except at debug level).
// Lines are rate-limited so that a flood of bad requests cannot flood the
// log: what is dropped is counted in the next line that is written.
func (h *Handler) logRefusal(r *http.Request, transport string, st *grpcwire.Status) {
	level := slog.LevelWarn
	if st.Code == grpcwire.Canceled {
		level = slog.LevelDebug
	}
	if !h.log.Enabled(r.Context(), level) {
		return
	}
	ok, suppressed := h.logLimit.allow(time.Now())
	if !ok {
		return
	}
	attrs := []any{"transport", transport, "path", r.URL.Path, "peer", r.RemoteAddr,
		"code", st.Code.String(), "reason", st.Message}
	if suppressed > 0 {
		attrs = append(attrs, "suppressed_since_last", suppressed)
	}
	h.log.Log(r.Context(), level, "request refused", attrs...)
}

// logLimiter allows logRefusalBurst lines at once, refilled at
// logRefusalRate per second.
type logLimiter struct {
	mu         sync.Mutex
	tokens     float64
	last       time.Time
	suppressed int
}

const (
	logRefusalRate  = 10
	logRefusalBurst = 50
)

func (l *logLimiter) allow(now time.Time) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last.IsZero() {
		l.tokens = logRefusalBurst
	} else {
		l.tokens = min(logRefusalBurst, l.tokens+now.Sub(l.last).Seconds()*logRefusalRate)
	}
	l.last = now
	if l.tokens < 1 {
		l.suppressed++
		return false, 0
	}
	l.tokens--
	n := l.suppressed
	l.suppressed = 0
	return true, n
}
