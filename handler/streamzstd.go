package handler

import (
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
// 1 MiB: nearly all the gain of larger windows on real data, about 1.5 MiB
// of decoder per stream).
const DefaultStreamCompressionWindow = compression.DefaultStreamWindow

// streamCodec is a stream's stateful decompressor and the charge it holds;
// cols, when the client offered columns (otlp.StreamColumns), undoes the
// columnar transform under the zstd.
type streamCodec struct {
	dec  *compression.StreamDecoder
	cols *otlpcolumns.Decoder
	cost int64
	// vouchedN, checkedN count the columns messages the decoder vouched
	// for and those it did not (vouched).
	vouchedN, checkedN *metrics.Counter
}

// negotiateStreamCompression answers a client's offer of stateful stream
// compression (otlp.StreamCompressionHeader) before the response headers
// are written: it accepts when the offer names zstd, the server allows it
// (StreamConfig.CompressionWindow) and the decoder's memory fits the
// admission budget (ingest.Pipeline.HoldStreamState), and then names the
// largest window the client may use in the response header. Otherwise it
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
	if !h.p.HoldStreamState(cost) {
		h.reg.GetOrCreateCounter("otlplite_stream_compression_declined_total").Inc()
		return nil
	}
	dec, err := compression.NewStreamDecoder(window)
	if err != nil {
		h.p.ReleaseStreamState(cost)
		return nil
	}
	h.reg.GetOrCreateCounter("otlplite_stream_compression_accepted_total").Inc()
	c := &streamCodec{dec: dec, cost: cost}
	answer := otlp.StreamZstd + "; window=" + strconv.Itoa(window)
	if sig != otlp.Profiles && otlp.OffersStreamColumns(offer) {
		if h.p.HoldStreamState(otlpcolumns.DecoderCost) {
			c.cols = otlpcolumns.NewDecoder(otlpcolumns.Signal(sig))
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

// close releases the decoder and its charge.
func (c *streamCodec) close(h *Handler) {
	c.dec.Close()
	h.p.ReleaseStreamState(c.cost)
}

// decode turns the stream message in t.Msg into the envelope it carries,
// charged to t as it is produced; t.Scratch keeps the compressed bytes. An
// error ends the stream: the decoder's state cannot go on without the
// message. A message larger than the limit is RESOURCE_EXHAUSTED, as
// grpcwire refuses one; a charge refusal is returned as it is; anything
// else is INVALID_ARGUMENT, counted in
// otlplite_stream_compression_errors_total.
//
// With columns, the zstd output (at most otlpcolumns.MaxEncodedLen of the
// limit) goes to t.Scratch, and the envelope it encodes is rebuilt in
// t.Msg's buffer, whose compressed bytes are no longer needed; both are
// charged to t as they are produced.
func (c *streamCodec) decode(h *Handler, t *ingest.Ticket) *grpcwire.Status {
	limit := h.p.MaxRecvMsgSize()
	if mr := t.MaxRequest(); mr > 0 && mr < int64(limit) {
		limit = int(mr)
	}
	var err error
	if c.cols == nil {
		var plain []byte
		plain, err = c.dec.DecodeMessage(t.Scratch[:0], t.Msg, limit, t.Grow)
		t.Msg, t.Scratch = plain, t.Msg
	} else {
		var cols []byte
		cols, err = c.dec.DecodeMessage(t.Scratch[:0], t.Msg, otlpcolumns.MaxEncodedLen(limit), t.Grow)
		t.Scratch = cols
		if err == nil {
			t.Msg, err = c.cols.Decode(t.Msg[:0], cols, limit, t.Grow)
		}
	}
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
