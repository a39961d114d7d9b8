package ingest

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// The request log: at debug level, one line per export request once it is
// answered (for a stream, per request message), with what an operator
// needs to follow one client without a packet capture:
//
//	level=DEBUG msg=request peer=10.0.0.7:51234 transport=grpc signal=traces
//	  items=500 rejected=0 wire_bytes=21034 bytes=98311 result=OK duration=1.2ms
//
// transport is the otlplite_requests_total label (grpc, grpc_stream, http),
// so a line can be matched with its series; HTTP lines add encoding
// (protobuf or json) and http_status. A request answered from the window
// of idempotency keys (dedup.go) adds duplicate=true. A request that is
// not OK adds reason (the otlplite_refusals_total label) and the message
// its client got.
// Requests refused before their signal is known (unknown path, method,
// content type, failed authentication) have no request line: they have the
// rate-limited "request refused" line of refuse.go.
//
// Cost when debug is off: one Logger.Enabled call per request (startLog)
// and a few stores; no clock read, no allocation (BenchmarkExport* in
// handler/handler_timing_test.go report allocs/op; TestRequestLogOffAllocs pins it).

// requestLog is the debug record of one request, kept in its pooled
// Ticket so that it costs no allocation.
type requestLog struct {
	on    bool // debug logging was enabled when the request started
	done  bool // countRequest recorded an outcome
	json  bool // OTLP/JSON body (HTTP)
	t     Transport
	sig   otlp.Signal
	ctx   context.Context
	peer  string
	start time.Time
	// tenant is the request's tenant, logged when not empty. Requests
	// carry no tenant yet; whatever resolves one (the authenticator, a
	// header) sets it here, and the line shows it with no other change.
	tenant      string
	wire, bytes int
	out         Result
	st          *grpcwire.Status
	httpStatus  int
	// duplicate says the request's idempotency key was in the window:
	// answered as its first request, not stored again (dedup.go).
	duplicate bool
}

// StartLog begins the request log record of t, if debug logging is on: the
// only cost of the request log when it is off is this Enabled check. peer
// is the client's address; the request's duration starts now.
func (p *Pipeline) StartLog(ctx context.Context, t *Ticket, peer string, tr Transport, sig otlp.Signal) {
	if !p.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	t.rlog = requestLog{on: true, t: tr, sig: sig, ctx: ctx, peer: peer, start: time.Now()}
}

// LogJSON marks the request of t, in its request log line, as OTLP/JSON
// (HTTP lines show the encoding).
func (t *Ticket) LogJSON(json bool) { t.rlog.json = json }

// LogHTTPStatus records the HTTP status a transport answered with when it
// is not the one the request's status maps to (HTTPStatus).
func (t *Ticket) LogHTTPStatus(status int) { t.rlog.httpStatus = status }

// countBytes counts a request's bytes, on the wire and decompressed, in the
// metrics and its request log.
func (p *Pipeline) countBytes(t *Ticket, tr Transport, wire, decompressed int) {
	p.m.countBytes(tr, wire, decompressed)
	if t.rlog.on {
		t.rlog.wire, t.rlog.bytes = wire, decompressed
	}
}

// countRequest counts one export request's outcome in the metrics and
// records it in its request log, which Done then writes. out is read, not
// kept.
func (p *Pipeline) countRequest(t *Ticket, tr Transport, sig otlp.Signal, out *Result, st *grpcwire.Status) {
	p.m.countRequest(tr, sig, out, st)
	p.countTenant(t, out, st)
	if t.rlog.on {
		t.rlog.done, t.rlog.out, t.rlog.st = true, *out, st
	}
}

// writeRequestLog writes the line of a request that has an outcome, and
// clears the record (it must not keep the request reachable from the pool).
func (p *Pipeline) writeRequestLog(l *requestLog) {
	if l.done {
		p.logRequestLine(l)
	}
	*l = requestLog{}
}

func (p *Pipeline) logRequestLine(l *requestLog) {
	attrs := make([]slog.Attr, 0, 16)
	attrs = append(attrs,
		slog.String("peer", l.peer),
		slog.String("transport", transportNames[l.t]),
		slog.String("signal", l.sig.String()))
	if l.tenant != "" {
		attrs = append(attrs, slog.String("tenant", l.tenant))
	}
	if l.t == HTTP {
		enc := "protobuf"
		if l.json {
			enc = "json"
		}
		attrs = append(attrs, slog.String("encoding", enc))
	}
	attrs = append(attrs,
		slog.Int("items", l.out.Items),
		slog.Int("rejected", l.out.Rejected),
		slog.Int("wire_bytes", l.wire),
		slog.Int("bytes", l.bytes))
	result := "OK"
	if l.st != nil {
		result = l.st.Code.String()
	}
	attrs = append(attrs, slog.String("result", result))
	if l.duplicate {
		attrs = append(attrs, slog.Bool("duplicate", true))
	}
	if l.t == HTTP {
		status := l.httpStatus
		if status == 0 {
			status = http.StatusOK
			if l.st != nil {
				status = HTTPStatus(l.st)
			}
		}
		attrs = append(attrs, slog.Int("http_status", status))
	}
	if l.st != nil {
		attrs = append(attrs,
			slog.String("reason", reasonNames[reasonOf(l.httpStatus, l.st)]),
			slog.String("message", l.st.Message))
	} else if l.out.Rejected > 0 {
		attrs = append(attrs, slog.String("message", l.out.Message))
	}
	attrs = append(attrs, slog.Duration("duration", time.Since(l.start)))
	p.log.LogAttrs(l.ctx, slog.LevelDebug, "request", attrs...)
}
