package handler

import (
	"context"
	"errors"
	"math/bits"
	"strconv"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpcolumns"
)

// DefaultStreamCompressionWindow is the largest zstd window a stream with
// stateful compression may use by default (compression.DefaultStreamWindow,
// 1 MiB: nearly all the gain of larger windows on real data, about 1.75 MiB
// of decoder per stream).
const DefaultStreamCompressionWindow = compression.DefaultStreamWindow

// streamCodec is a stream's stateful decompressor and the charge it holds;
// cols, when the client offered columns (otlp.StreamColumns), undoes the
// columnar transform under the zstd.
type streamCodec struct {
	dec  *compression.StreamDecoder
	cols *otlpcolumns.Decoder
	cost int64
	// window is dec's (StreamConfig.CompressionWindow), sig the stream's
	// signal: the spares close gives the decoders back to.
	window int
	sig    otlp.Signal
	// vouchedN, checkedN count the columns messages the decoder vouched
	// for and those it did not (vouched).
	vouchedN, checkedN *metrics.Counter
	// t is the ticket of the message being decoded (decode), ctx the
	// stream's context (its call's: the client's deadline, its going
	// away, the handler's return), for reserveFn and growColsFn: method
	// values made once per stream, so that a message's decode allocates
	// no closure. prepaid is what reserveColumns charged for the columns'
	// output that their decode has not drawn yet (growCols).
	t                     *ingest.Ticket
	ctx                   context.Context
	reserveFn, growColsFn func(int) error
	prepaid               int
}

// columnsReserveRatio bounds what a columns message's decode waits for
// before decoding (reserveColumns): its declared length (and an eighth,
// when a buffer is allocated for it), at most this many times the columns
// it sent, or columnsReserveMin. The demo data's messages decode to at
// most 5.7 times their columns at 8,192 items a request and 15 times for
// SDK-sized metrics (a few KiB, under columnsReserveMin); what a message
// declares beyond is charged as its output proves it, at once
// (Ticket.Grow), as before: a message that lies about its length makes
// its stream wait for no more than its bytes can honestly carry.
const (
	columnsReserveRatio = 16
	columnsReserveMin   = 64 << 10
)

// negotiateStreamCompression answers a client's offer of stateful stream
// compression (otlp.StreamCompressionHeader) before the response headers
// are written: it accepts when the offer names zstd, the server allows it
// (StreamConfig.CompressionWindow) and the decoder's memory fits the
// admission budget and the stream's tenant's max_budget_share
// (ingest.Pipeline.HoldStreamStateFor), and then names the largest
// window the client may use in the response header. Otherwise it
// answers nothing, and the client compresses each message alone, as with
// a server that does not know the offer.
//
// An offer with columns (otlp.StreamColumns) is accepted with them, for the
// signals that have a schema (not profiles), when the columns' decoder
// (otlpcolumns.DecoderCost) fits the budget too; the answer then names
// them. Otherwise zstd alone is accepted, as an older server would.
func (h *Handler) negotiateStreamCompression(call *grpcwire.Call, sig otlp.Signal) *streamCodec {
	window := h.stream.CompressionWindow
	offer := call.Request().Header.Get(otlp.StreamCompressionHeader)
	if window <= 0 || !otlp.OffersStreamZstd(offer) {
		return nil
	}
	cost := compression.StreamDecoderCost(window)
	// The stream's state is its tenant's too (max_budget_share).
	ctx := call.Context()
	// A spare is taken with its charge, which becomes the stream's (with
	// the state's half of the budget full of spares, charging the stream
	// first would reclaim them all, the one it would take too).
	dec := h.spares.zstdDecoder(ctx, window, cost)
	if dec == nil {
		if !h.p.HoldStreamStateFor(ctx, cost) {
			h.reg.GetOrCreateCounter("otlplite_stream_compression_declined_total").Inc()
			return nil
		}
		var err error
		if dec, err = compression.NewStreamDecoder(window); err != nil {
			h.p.ReleaseStreamStateFor(ctx, cost)
			return nil
		}
	}
	h.reg.GetOrCreateCounter("otlplite_stream_compression_accepted_total").Inc()
	c := &streamCodec{dec: dec, cost: cost, window: window, sig: sig}
	c.ctx, c.reserveFn, c.growColsFn = ctx, c.reserve, c.growCols
	answer := otlp.StreamZstd + "; window=" + strconv.Itoa(window)
	if sig != otlp.Profiles && otlp.OffersStreamColumns(offer) {
		if c.cols = h.spares.colsDecoder(ctx, sig); c.cols == nil && h.p.HoldStreamStateFor(ctx, otlpcolumns.DecoderCost) {
			c.cols = otlpcolumns.NewDecoder(otlpcolumns.Signal(sig))
		}
		if c.cols != nil {
			c.vouchedN = h.reg.GetOrCreateCounter("otlplite_stream_columns_vouched_total")
			c.checkedN = h.reg.GetOrCreateCounter("otlplite_stream_columns_checked_total")
			c.cost += otlpcolumns.DecoderCost
			answer += "; " + otlp.StreamColumns
			h.reg.GetOrCreateCounter("otlplite_stream_columns_accepted_total").Inc()
		} else {
			h.reg.GetOrCreateCounter("otlplite_stream_compression_declined_total").Inc()
		}
	}
	call.Header().Set(otlp.StreamCompressionHeader, answer)
	return c
}

// close releases the stream's charge, then gives its decoders, reset,
// to the handler's spares for the next stream (streamSpares), or lets
// them go. Its own charge goes first: with room in the budget for one
// stream's state and no more, the spare takes the room the stream had.
func (c *streamCodec) close(h *Handler) {
	h.p.ReleaseStreamStateFor(c.ctx, c.cost)
	h.spares.put(c)
}

// maxStreamSpares bounds what a Handler keeps of ended streams' decoders
// for the next streams, of each kind: zstd decoders
// (compression.StreamDecoderCost, 1.75 MiB at the default window: the
// history ring that a new decoder allocates and clears on its first
// block) and, by signal, columns decoders (otlpcolumns.DecoderCost,
// 2.7 MB at most: the series table and the indices, grown by doublings
// over a stream's first messages). Streams end and start together when
// clients rotate them (-stream-max-requests, -stream-max-age) or
// reconnect: a client's next stream starts milliseconds after its last
// one ended, so a few spares serve the clients that rotate at once, and
// more would only be memory kept for streams that may never come. At
// most 4 zstd decoders (7 MiB) and 4 columns decoders of each signal
// (about 32 MB in all, if every signal's streams use columns) are kept,
// each charged to the admission budget while it waits and let go first
// when anyone finds the budget full (ingest.Spares).
const maxStreamSpares = 4

// streamSpares are the decoders ended streams left for the next streams
// (ingest.Spares: charged while they wait, dropped first under pressure),
// each reset as it is put: a spare carries nothing of one client's stream
// to another's (its zstd history, its series table and reference index:
// compression.StreamDecoder.Reset, otlpcolumns.Decoder.Reset).
type streamSpares struct {
	// window is the zstd decoders' (StreamConfig.CompressionWindow): a
	// decoder of another window is not kept.
	window int
	zstd   *ingest.Spares[*compression.StreamDecoder]
	// cols are the columns decoders by signal (otlp.Traces to
	// otlp.Logs; profiles have no schema).
	cols [otlp.Profiles]*ingest.Spares[*otlpcolumns.Decoder]
	// reused counts the decoders taken from the spares,
	// otlplite_stream_decoders_reused_total{kind}.
	reusedZstd, reusedCols *metrics.Counter
}

// newStreamSpares returns the spares of a Handler storing into p, their
// reclaimer registered with p (the Handler's own pipeline: they live as
// long as it does).
func newStreamSpares(p *ingest.Pipeline, reg *metrics.Set, window int) *streamSpares {
	s := &streamSpares{
		window:     window,
		zstd:       ingest.NewSpares[*compression.StreamDecoder](p, maxStreamSpares),
		reusedZstd: reg.GetOrCreateCounter(`otlplite_stream_decoders_reused_total{kind="zstd"}`),
		reusedCols: reg.GetOrCreateCounter(`otlplite_stream_decoders_reused_total{kind="columns"}`),
	}
	for sig := otlp.Traces; sig < otlp.Profiles; sig++ {
		s.cols[sig] = ingest.NewSpares[*otlpcolumns.Decoder](p, maxStreamSpares)
	}
	p.AddReclaimer(s.dropAll)
	return s
}

// zstdDecoder returns a kept zstd decoder of this window with its charge,
// which the caller now holds as the stream's cost, its tenant's (that of
// ctx) too (ingest.Spares.Take), or nil.
func (s *streamSpares) zstdDecoder(ctx context.Context, window int, cost int64) *compression.StreamDecoder {
	if window == s.window {
		if d, ok := s.zstd.Take(ctx, cost); ok {
			s.reusedZstd.Inc()
			return d
		}
	}
	return nil
}

// colsDecoder returns a kept columns decoder of sig (not profiles) with
// its charge, which the caller now holds as otlpcolumns.DecoderCost of
// the stream's cost (its tenant's too, as zstdDecoder's), or nil.
func (s *streamSpares) colsDecoder(ctx context.Context, sig otlp.Signal) *otlpcolumns.Decoder {
	if sig < otlp.Profiles {
		if d, ok := s.cols[sig].Take(ctx, otlpcolumns.DecoderCost); ok {
			s.reusedCols.Inc()
			return d
		}
	}
	return nil
}

// put resets c's decoders and keeps them for the next streams, or lets
// them go (the bound reached, no room in the budget, another window).
func (s *streamSpares) put(c *streamCodec) {
	if c.window != s.window || c.dec.Reset() != nil || !s.zstd.Put(c.dec, compression.StreamDecoderCost(c.window)) {
		c.dec.Close()
	}
	c.dec = nil
	if c.cols != nil && c.sig < otlp.Profiles {
		c.cols.Reset()
		s.cols[c.sig].Put(c.cols, otlpcolumns.DecoderCost)
	}
	c.cols = nil
}

// dropAll lets every spare go, its charge returned (the Handler's
// reclaimer, ingest.Pipeline.AddReclaimer; Shutdown), and reports whether
// any was kept.
func (s *streamSpares) dropAll() bool {
	dropped := s.zstd.DropAll()
	for _, c := range s.cols[otlp.Traces:] {
		dropped = c.DropAll() || dropped
	}
	return dropped
}

// held returns how many spares are kept and what they are charged.
func (s *streamSpares) held() (n int, cost int64) {
	n, cost = s.zstd.Held()
	for _, c := range s.cols[otlp.Traces:] {
		k, b := c.Held()
		n, cost = n+k, cost+b
	}
	return n, cost
}

// decode turns the stream message in t.Msg into the envelope it carries,
// charged to t as it is produced; t.Scratch keeps the compressed bytes. An
// error ends the stream: the decoder's state cannot go on without the
// message. A message larger than the limit is RESOURCE_EXHAUSTED, as
// grpcwire refuses one; a charge refusal is returned as it is; anything
// else is INVALID_ARGUMENT, counted in
// otlplite_stream_compression_errors_total.
//
// The message's declared decoded length (and an eighth, for a buffer
// allocated for it) is charged before it is decoded with Ticket.Reserve,
// which waits for room as the wire bytes' Charge does, within the
// stream's context and the admission's MaxWait and waiting budget: a budget full
// for a moment makes the stream wait, not end (its client would resend
// every pending request on a new stream, its compression cold). What the
// output needs beyond an honest message's ratio of its bytes is charged as
// it is produced, at once (Ticket.Grow). When the wait runs out the
// stream ends, as when the charge was refused at once before.
//
// With columns, the zstd output (at most otlpcolumns.MaxEncodedLen of the
// limit) goes to t.Scratch, and the envelope it encodes is rebuilt in
// t.Msg's buffer, whose compressed bytes are no longer needed; both are
// charged to t, reserved before each is decoded.
func (c *streamCodec) decode(h *Handler, t *ingest.Ticket) *grpcwire.Status {
	limit := h.p.MaxRecvMsgSize()
	if mr := t.MaxRequest(); mr > 0 && mr < int64(limit) {
		limit = int(mr)
	}
	if c.reserveFn == nil {
		// A codec made without negotiateStreamCompression (a
		// benchmark's): the stream has no context of its own.
		c.ctx, c.reserveFn, c.growColsFn = context.Background(), c.reserve, c.growCols
	}
	c.t = t
	var err error
	if c.cols == nil {
		var plain []byte
		plain, err = c.dec.DecodeMessageReserve(t.Scratch[:0], t.Msg, limit, c.reserveFn, t.Grow)
		t.Msg, t.Scratch = plain, t.Msg
	} else {
		var cols []byte
		cols, err = c.dec.DecodeMessageReserve(t.Scratch[:0], t.Msg, otlpcolumns.MaxEncodedLen(limit), c.reserveFn, t.Grow)
		t.Scratch = cols
		if err == nil {
			err = c.reserveColumns(cols, cap(t.Msg), limit)
		}
		if err == nil {
			t.Msg, err = c.cols.Decode(t.Msg[:0], cols, limit, c.growColsFn)
		}
	}
	c.t, c.prepaid = nil, 0
	if err == nil {
		return nil
	}
	if st, ok := errors.AsType[*grpcwire.Status](err); ok {
		return st
	}
	if errors.Is(err, compression.ErrTooLarge) || errors.Is(err, otlpcolumns.ErrTooLarge) {
		return grpcwire.Errorf(grpcwire.ResourceExhausted, "grpc: received message after decompression larger than max %d", limit)
	}
	h.reg.GetOrCreateCounter("otlplite_stream_compression_errors_total").Inc()
	return grpcwire.Errorf(grpcwire.InvalidArgument, "cannot decompress stream request: %v", err)
}

// reserve is the zstd decode's reserve (DecodeMessageReserve): the
// message's declared length, waited for.
func (c *streamCodec) reserve(n int) error { return c.t.Reserve(c.ctx, n) }

// reserveColumns charges, waiting for room (Ticket.Reserve), what the
// columns' decode of cols into a buffer with capacity free will charge
// (otlpcolumns.Decoder.Decode: the declared length, and an eighth within
// limit when it allocates a buffer for it), at most columnsReserveRatio
// times cols's bytes, as c.prepaid for growCols. A declared length over
// limit, or one it cannot read, is left to Decode, which refuses it.
func (c *streamCodec) reserveColumns(cols []byte, free, limit int) error {
	n, ok := otlpcolumns.DeclaredLen(cols)
	if !ok || n > limit {
		return nil
	}
	declared := n
	if free < n {
		n = max(n, min(n+n/8, limit))
	}
	most := max(columnsReserveMin, columnsReserveRatio*len(cols))
	n, declared = min(n, most), min(declared, most)
	if err := c.t.Reserve(c.ctx, n); err != nil {
		// The eighth is room for the stream's next messages: a message
		// that fits the budget without it is decoded (the decoder then
		// allocates what it declares, otlpcolumns.Decoder.more;
		// TestReviewGrowthRoomHonestStream).
		if n <= declared || c.t.Reserve(c.ctx, declared) != nil {
			return err
		}
		n = declared
	}
	c.prepaid = n
	return nil
}

// growCols is the columns' decode's grow: drawn from what reserveColumns
// charged, then charged at once (Ticket.Grow).
func (c *streamCodec) growCols(n int) error {
	if n <= c.prepaid {
		c.prepaid -= n
		return nil
	}
	n -= c.prepaid
	c.prepaid = 0
	return c.t.Grow(n)
}

// vouched is what the columns' decoder vouches for in the request the
// last decode wrote (otlpcolumns.Decoder.Vouched), for
// ingest.Pipeline.ExportValidated: the zero Validated, which vouches for
// nothing (the request is validated as Export does), without columns or
// when it does not vouch. The decoder does not look at strings' UTF-8:
// with -validate-utf8 the pipeline validates every request.
func (c *streamCodec) vouched() ingest.Validated {
	if c.cols == nil {
		return ingest.Validated{}
	}
	v, ok := c.cols.Vouched()
	if !ok {
		c.checkedN.Inc()
		return ingest.Validated{}
	}
	c.vouchedN.Inc()
	return ingest.Validated{Items: v.Items, MaxAnyValueDepth: v.MaxAnyValueDepth}
}

// streamWindowOf returns the power of two at most w within
// compression.MinStreamWindow and compression.MaxStreamWindow.
func streamWindowOf(w int) int {
	w = min(max(w, compression.MinStreamWindow), compression.MaxStreamWindow)
	return 1 << (bits.Len(uint(w)) - 1)
}
