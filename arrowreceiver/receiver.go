//go:build otelarrow

package arrowreceiver

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// The gRPC methods this package serves, one per signal.
//
// A Receiver is an http.Handler for these paths only: it does no
// authentication, tenant identification or stream bound of its own, so it
// is mounted behind the handler's gates (handler.Handler.Mount(path, r)
// for each of Paths), which admit it exactly like the export stream.
// The stream's own headers (authorization, tenant, metadata keys) are what
// those gates read; the per-batch headers a batch may carry (hpack, the
// otelarrowexporter's per-request metadata) are not read.
const (
	TracesPath  = "/opentelemetry.proto.experimental.arrow.v1.ArrowTracesService/ArrowTraces"
	MetricsPath = "/opentelemetry.proto.experimental.arrow.v1.ArrowMetricsService/ArrowMetrics"
	LogsPath    = "/opentelemetry.proto.experimental.arrow.v1.ArrowLogsService/ArrowLogs"
)

// Paths are the methods served, for mounting.
var Paths = []string{TracesPath, MetricsPath, LogsPath}

// Defaults of Config.
const (
	// DefaultMemoryLimit is a stream's Arrow allocator bound
	// (otel-arrow's memory_limit_mib). The Collector's receiver defaults
	// to 128 MiB, its whole request budget; here a stream's state shares
	// half of the admission budget (64 MiB by default) with every other
	// stream's, so one stream may take at most a quarter of it, when an
	// honest producer's stream holds 20 times less: on the demo data
	// (shared/datasets, 10 or 100 resources a request) the allocator's
	// peak is 1.0-1.5 MB for traces and 0.1-0.25 MB for metrics (its
	// schemas, dictionaries and one batch's buffers).
	DefaultMemoryLimit = 32 << 20
	// DefaultMaxBatchRows bounds the Arrow rows one batch may decode
	// (all its payloads: the main record, attributes, events, links,
	// data points, exemplars): each row becomes pdata before it is OTLP,
	// and a record may declare many rows over few bytes (dictionary
	// indexes, compressed buffers). A quarter million rows is hundreds
	// of times an exporter's batch (the Collector's batcher sends 8192
	// items).
	DefaultMaxBatchRows = 256 << 10
	// rowCost is what a row is charged while it is pdata: pdata's
	// structs per item (the span, point or record and its attributes'
	// slots), before the OTLP bytes replace it.
	rowCost = 256
)

// Config configures a Receiver. The zero value takes the defaults.
type Config struct {
	// MemoryLimit bounds one stream's Arrow allocator, in bytes
	// (-otelarrow-memory-limit).
	MemoryLimit uint64
	// MaxBatchRows bounds the rows one batch decodes.
	MaxBatchRows int64
	// Metrics receives the receiver's own counters; nil means the
	// pipeline's set.
	Metrics *metrics.Set
}

// Receiver serves the Arrow*Service streams into an ingest pipeline. It is
// safe for concurrent use.
type Receiver struct {
	p    *ingest.Pipeline
	cfg  Config
	stop chan struct{}
	once sync.Once

	open                           *metrics.Gauge   // otlplite_otelarrow_open_streams
	batches, badBatches            *metrics.Counter // otlplite_otelarrow_batches_total{status}
	refusedMessage, refusedDecode  *metrics.Counter // otlplite_otelarrow_refusals_total{reason}
	refusedLimit, refusedState     *metrics.Counter
	refusedRows, refusedOTLP       *metrics.Counter
	refusedSignal, refusedShutdown *metrics.Counter
}

// New returns a Receiver storing into p.
func New(p *ingest.Pipeline, cfg Config) *Receiver {
	if cfg.MemoryLimit == 0 {
		cfg.MemoryLimit = DefaultMemoryLimit
	}
	if cfg.MaxBatchRows <= 0 {
		cfg.MaxBatchRows = DefaultMaxBatchRows
	}
	set := cfg.Metrics
	if set == nil {
		set = p.Metrics()
	}
	reason := func(r string) *metrics.Counter {
		return set.GetOrCreateCounter(`otlplite_otelarrow_refusals_total{reason="` + r + `"}`)
	}
	return &Receiver{
		p: p, cfg: cfg, stop: make(chan struct{}),
		open:            set.GetOrCreateGauge("otlplite_otelarrow_open_streams", nil),
		batches:         set.GetOrCreateCounter(`otlplite_otelarrow_batches_total{status="ok"}`),
		badBatches:      set.GetOrCreateCounter(`otlplite_otelarrow_batches_total{status="error"}`),
		refusedMessage:  reason("bad_message"),
		refusedDecode:   reason("decode_error"),
		refusedLimit:    reason("memory_limit"),
		refusedState:    reason("no_room_for_state"),
		refusedRows:     reason("too_many_rows"),
		refusedOTLP:     reason("too_large"),
		refusedSignal:   reason("wrong_signal"),
		refusedShutdown: reason("shutdown"),
	}
}

// Shutdown makes every stream end after the batch it is serving, with
// UNAVAILABLE: the exporter reconnects elsewhere or later.
func (r *Receiver) Shutdown() { r.once.Do(func() { close(r.stop) }) }

// ServeHTTP serves one Arrow*Service call.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var sig otlp.Signal
	switch req.URL.Path {
	case TracesPath:
		sig = otlp.Traces
	case MetricsPath:
		sig = otlp.Metrics
	case LogsPath:
		sig = otlp.Logs
	default:
		http.NotFound(w, req)
		return
	}
	call, st := grpcwire.StartCall(w, req, grpcwire.Limits{MaxRecvMsgSize: r.p.MaxRecvMsgSize()})
	if st != nil {
		r.p.RecordRefusal(req.Context(), ingest.OTelArrow, 0, st, req.URL.Path, req.RemoteAddr)
		return
	}
	defer call.Close()
	r.open.Inc()
	defer r.open.Dec()
	s := &stream{r: r, call: call, ctx: call.Context(), sig: sig,
		dec: newDecoder(call.Context(), r.p, r.cfg.MemoryLimit, r.cfg.MaxBatchRows)}
	end := s.run()
	s.dec.close()
	if end != nil && end.Code != grpcwire.Unavailable {
		r.p.RecordRefusal(req.Context(), ingest.OTelArrow, 0, end, req.URL.Path, req.RemoteAddr)
	}
	call.WriteStatus(end)
	call.Finish()
}

// stream is one Arrow stream being served: batches are read, decoded,
// stored and answered one at a time, in order.
type stream struct {
	r    *Receiver
	call *grpcwire.Call
	ctx  context.Context
	sig  otlp.Signal
	dec  *decoder

	msg, scratch, resp []byte
	b                  batch
}

// run serves the stream and returns its final status (nil: OK).
func (s *stream) run() *grpcwire.Status {
	if s.ctx.Err() != nil {
		return ingest.DeadlineStatus(s.ctx, "on the OTel-Arrow stream")
	}
	// The headers go first, so that a client waiting for them before
	// it sends sees the stream open.
	s.call.WriteHeaders()
	s.call.Flush()
	for {
		select {
		case <-s.r.stop:
			s.r.refusedShutdown.Inc()
			st := grpcwire.Errorf(grpcwire.Unavailable, "OTel-Arrow stream ended: the server is shutting down; reconnect and resend what was not acknowledged")
			st.RetryDelay = -1
			return st
		default:
		}
		if end := s.one(); end != nil {
			if end == errEnd {
				return nil
			}
			return end
		}
	}
}

// errEnd is one's report that the client half-closed.
var errEnd = &grpcwire.Status{}

// one reads, stores and answers one batch. It returns the stream's final
// status when the stream ends.
func (s *stream) one() *grpcwire.Status {
	t := s.r.p.Take(s.ctx)
	defer s.r.p.Done(t)
	// The message is charged to the batch's ticket as its bytes arrive.
	s.call.SetBudget(t)
	var st *grpcwire.Status
	s.msg, s.scratch, st = s.call.ReadMessage(s.msg, s.scratch)
	s.call.SetBudget(nil)
	if st != nil {
		if grpcwire.IsEndOfStream(st) {
			return errEnd
		}
		if s.call.Skipped() {
			// Refused by admission part way: the stream is given up (the
			// rest of the message is not read).
			s.r.p.Refused(t, ingest.OTelArrow, s.sig, st)
		}
		return st
	}
	wire := s.call.LastWireSize()
	if err := parseBatch(s.msg, &s.b); err != nil {
		s.r.refusedMessage.Inc()
		st := grpcwire.Errorf(grpcwire.InvalidArgument, "%v", err)
		s.r.p.Refused(t, ingest.OTelArrow, s.sig, st)
		return st
	}
	id := s.b.bar.BatchId
	code, msg, end := s.store(t, wire)
	if code == 0 {
		s.r.batches.Inc()
	} else {
		s.r.badBatches.Inc()
	}
	s.resp = appendBatchStatus(s.resp[:0], id, uint32(code), msg)
	if err := s.call.WriteMessage(s.resp); err != nil {
		return grpcwire.Errorf(grpcwire.Unavailable, "cannot write BatchStatus: %v", err)
	}
	s.call.Flush()
	return end
}

// store decodes the batch and hands it to the pipeline. It returns the
// batch's status (code 0: stored) and, when the stream's Arrow state can
// no longer be trusted, the stream's final status.
func (s *stream) store(t *ingest.Ticket, wire int) (grpcwire.Code, string, *grpcwire.Status) {
	bar := &s.b.bar
	if len(bar.ArrowPayloads) == 0 {
		return 0, "", nil // an empty batch, as the Collector's receiver has it
	}
	if sig, ok := signalOf(bar.ArrowPayloads[0].Type); !ok || sig != s.sig {
		// The stream's readers did not read it: their state stays
		// whole, but the client's producer took it as read.
		s.r.refusedSignal.Inc()
		st := grpcwire.Errorf(grpcwire.InvalidArgument, "cannot decode OTel-Arrow batch: its first payload is of type %v, not the main record of %v", bar.ArrowPayloads[0].Type, s.sig)
		s.r.p.Refused(t, ingest.OTelArrow, s.sig, st)
		return st.Code, st.Message, st
	}
	s.r.p.StartLog(s.ctx, t, s.call.Request().RemoteAddr, ingest.OTelArrow, s.sig)
	body, items, err := s.dec.decode(bar, s.sig, t.Msg[:0])
	t.Msg = body
	if err != nil {
		return s.decodeFailed(t, err)
	}
	// The OTLP, and the pdata it was made from (its rows bounded by
	// MaxBatchRows while they were made), are charged before it goes on.
	n := len(body)
	if err := t.Grow(n + items*rowCost); err != nil {
		st := statusOf(err)
		s.r.p.Refused(t, ingest.OTelArrow, s.sig, st)
		return st.Code, st.Message, nil
	}
	// Until the pipeline stored it the stream is not read: what its
	// client sends meanwhile, up to the stream's window, waits in
	// net/http's flow-control buffers. The window is charged to the
	// waiting budget for the wait, as an export stream's
	// (Pipeline.ParkWindow); when it does not fit the batch is answered
	// UNAVAILABLE now (retryable: the exporter sends it again) and the
	// stream reads on, rather than wait with a window no budget sees.
	if !s.r.p.ParkWindow() {
		st := s.r.p.BusyStatus("no room in the waiting budget for the OTel-Arrow stream's unread window")
		s.r.p.Refused(t, ingest.OTelArrow, s.sig, st)
		return st.Code, st.Message, nil
	}
	out, err := s.r.p.Export(s.ctx, ingest.Request{
		Transport: ingest.OTelArrow, Signal: s.sig, Body: body,
		WireSize: wire, Size: n, Ticket: t,
	})
	s.r.p.UnparkWindow()
	if err != nil {
		st := statusOf(err)
		return st.Code, st.Message, nil
	}
	if out.Rejected > 0 {
		// BatchStatus has no partial success: the batch is answered
		// INVALID_ARGUMENT (not to be sent again), its valid items
		// being stored.
		return grpcwire.InvalidArgument, out.Message, nil
	}
	return 0, "", nil
}

// decodeFailed answers a batch that could not be decoded. Where the Arrow
// readers read part of it, the stream's state is lost: the stream ends
// after the batch's status, as the Collector's receiver ends it, and the
// exporter starts a new one.
func (s *stream) decodeFailed(t *ingest.Ticket, err error) (grpcwire.Code, string, *grpcwire.Status) {
	var st *grpcwire.Status
	var rows errRows
	var large errTooLarge
	switch {
	case isNoRoom(err):
		s.r.refusedState.Inc()
		st = s.r.p.BusyStatus("no room for the OTel-Arrow stream's Arrow state")
	case isLimit(err):
		s.r.refusedLimit.Inc()
		st = grpcwire.Errorf(grpcwire.ResourceExhausted, "OTel-Arrow stream over its memory limit of %d bytes (-otelarrow-memory-limit): %v", s.r.cfg.MemoryLimit, err)
	case errors.As(err, &rows):
		s.r.refusedRows.Inc()
		st = grpcwire.Errorf(grpcwire.InvalidArgument, "cannot decode OTel-Arrow batch: %v", err)
	case errors.As(err, &large):
		// Read whole: the stream's state is intact, only the batch
		// is refused.
		s.r.refusedOTLP.Inc()
		st = grpcwire.Errorf(grpcwire.InvalidArgument, "cannot store OTel-Arrow batch: %v", err)
		s.r.p.Refused(t, ingest.OTelArrow, s.sig, st)
		return st.Code, st.Message, nil
	default:
		s.r.refusedDecode.Inc()
		st = grpcwire.Errorf(grpcwire.InvalidArgument, "%v", err)
	}
	s.r.p.Refused(t, ingest.OTelArrow, s.sig, st)
	return st.Code, st.Message, st
}

func statusOf(err error) *grpcwire.Status {
	if st, ok := err.(*grpcwire.Status); ok {
		return st
	}
	return grpcwire.Errorf(grpcwire.Unavailable, "%v", err)
}
