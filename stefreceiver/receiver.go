// Package stefreceiver is the STEF/gRPC transport: it serves
// STEFDestination/Stream (splunk/stef go/grpc/proto/destination.proto), the
// Collector's stefexporter's way out, on the receiver's own gRPC
// (grpcwire) and net/http's HTTP/2, beside OTLP on the same ports.
//
// One gRPC stream carries one STEF byte stream. The records are decoded
// with the schema of github.com/splunk/stef/go/otel (otelstef) straight to
// OTLP protobuf (metrics.go; no pdata), one ExportMetricsServiceRequest
// per STEF frame (or per MaxRequestBytes of it), or per run of frames the
// client sent before it was acknowledged that arrived together (up to
// MaxRequestBytes: a frame ending with none waiting is handed on at
// once), and each request goes through the one ingest pipeline (ingest.Pipeline.Export, transport
// ingest.STEF): admission, quotas, the sink. The decoder refuses what the
// pipeline's validation would reject (metrics.go, spans.go), so the
// requests it builds are handed on as validated
// (ingest.Pipeline.ExportValidated; with -validate-utf8 the pipeline
// validates them again). A request's last record id is acknowledged
// (ack_record_id) only once the pipeline stored it; records the decoder
// refused, items the pipeline rejected as invalid (with the rest of their
// request: OTLP's partial success does not say which), and records that
// cannot be decoded are reported in bad_data_record_id_ranges so the
// client does not send them again. A refusal the client can retry (no room, storage
// failing) ends the stream with its status: the client reconnects and
// re-encodes what was not acknowledged.
//
// What a stream can make us hold is bounded (Config): the chunk being
// read (MaxChunkBytes), charged to the admission budget as it arrives
// (nothing is read ahead of the decoder: what the client sends meanwhile
// waits in the connection, within HTTP/2 flow control, its window charged
// to the waiting budget while the stream hands a request on, flush), one request being
// built (MaxRequestBytes), the STEF
// reader's own state (its zstd decoder, ours and window-bounded
// (unzstd.go), StateCostZstd, or StateCostPlain,
// charged to the admission budget for the stream's life with
// ingest.Pipeline.HoldStreamState, as the export stream's stateful zstd
// decoder is), and the stream's dictionaries, which the STEF reader keeps
// without exposing their size: they are measured as they grow (dicts.go)
// and charged the same way, in DictChargeStep steps; past MaxDictMemory, or
// when the budget has no room for more, the stream is rotated
// (acknowledged, then ended with UNAVAILABLE and a zero RetryInfo, as the
// streaming mode rotates), which frees them. The reader's frame buffers
// (its column buffers, each kept at the largest any frame made it, and
// the string columns its dictionaries' entries point into) are measured
// the same way (framebufs.go) and charged beyond frameAllowance
// (frameCharge); each frame's declared size is charged before the reader
// reads it, and a frame over MaxFrameBytes is refused, so what one frame
// makes the reader hold is charged before it is allocated. A stream is rotated too once
// it has decoded MaxStreamBytes. While a stream waits for its client, the
// buffer it builds its requests in is kept only when charged the same way
// (stream.idle). What ended streams leave for the next ones, their zstd
// decoders and request buffers, is kept only charged, at most maxSpares
// of each, and let go when a stream finds no room for its own state
// (spares.go). Within a record the reader bounds its own allocations
// (pkg.RecordAllocLimit, 32 MiB) and its frames (pkg.FrameSizeLimit,
// and MaxFrameBytes here).
package stefreceiver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/VictoriaMetrics/metrics"
	"github.com/klauspost/compress/zstd"
	"github.com/splunk/stef/go/otel/otelstef"
	"github.com/splunk/stef/go/pkg"
	"github.com/splunk/stef/go/pkg/schema"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// Path is the gRPC method this package serves.
//
// A Receiver is an http.Handler for Path only: it does no
// authentication, tenant identification or stream bound of its own, so it
// is mounted behind the handler's gates (handler.Handler.Mount(Path, r)),
// which admit it exactly like the export stream.
const Path = "/STEFDestination/Stream"

// What a stream's reader holds for its life once it has read the
// stream's header: with zstd, the window-bounded decoder (unzstd.go,
// MaxZstdWindow) with its window full, measured at 8.8 MB
// (TestStateCostZstdCoversDecoder; the library's own reader holds the
// same frames uncompressed); without compression the library's reader,
// about 21 KB. The reader's frame buffers beyond frameAllowance are
// charged apart, as they grow (frameCharge). Both cover the body's read buffer (bodyBuffer) besides. The zstd figure is charged before the header is read (the
// client chooses), and lowered to the plain one when the header says the
// stream is not compressed. A frame declaring a larger window than
// MaxZstdWindow is refused before it is allocated.
const (
	StateCostZstd  = 9 << 20
	StateCostPlain = 64 << 10
)

// Defaults of Config.
const (
	// DefaultMaxDictBytes is what clients are told to keep their
	// dictionaries under (STEFDictionaryLimits): the STEF writer's own
	// default (pkg.DefaultMaxTotalDictSize).
	DefaultMaxDictBytes = 4 << 20
	// DefaultMaxChunkBytes bounds one assembled chunk (a STEF header or
	// frame, as sent): twice the writer's default frame
	// (pkg.DefaultMaxFrameSize), which compression only makes smaller.
	DefaultMaxChunkBytes = 8 << 20
	// DefaultMaxRequestBytes is the size at which a request is handed to
	// the pipeline before its frame ends: the STEF writer's frames are
	// about 4 MiB uncompressed, and OTLP is a few times larger.
	DefaultMaxRequestBytes = 4 << 20
	// DefaultMaxStreamBytes is the OTLP a stream may decode before it is
	// rotated, which bounds its dictionaries (they hold only what it
	// decoded); at STEF's 4-15x on metrics a stream carries 17-64 MiB of
	// wire bytes before it rotates, about what the streaming mode's 1000
	// requests carry.
	DefaultMaxStreamBytes = 256 << 20
	// DefaultMaxFrameBytes bounds a STEF frame's uncompressed size, which
	// the library's reader grows its column buffers to and keeps for the
	// stream's life (framebufs.go): four times the writer's default
	// frame (pkg.DefaultMaxFrameSize), since the writer counts only its
	// strings against that limit and a frame of numbers passes it (a
	// 400,000-point frame of its defaults is 4.8 MB; an 8,192-point one,
	// as the Collector's exporter sends, about 100 KB), and a quarter of
	// the library's own limit (pkg.FrameSizeLimit, 64 MiB), which zstd
	// makes a few KB on the wire. A larger frame is refused before the
	// reader reads it.
	DefaultMaxFrameBytes = 16 << 20
	// DefaultMaxDictMemory is what a stream's dictionaries may hold, as
	// the meter counts it (dicts.go), before the stream is rotated: four
	// times what clients are told (DefaultMaxDictBytes), since the writer
	// counts its dictionaries shallowly (a struct's own size, not its
	// strings or nested values) and the meter deeply, so that an honest
	// writer's dictionaries, restarted at its limit, stay under it.
	DefaultMaxDictMemory = 4 * DefaultMaxDictBytes
)

// DictChargeStep is the step in which a stream's dictionaries are charged
// to the budget (an ingest.StateCharge): small beside MaxDictMemory, large
// enough that a growing dictionary asks the budget rarely.
const DictChargeStep = ingest.StateChargeStep

// dictCheckRecords is how often, in records, a frame's dictionaries are
// measured besides at its end: a record adds at most a few entries, and a
// check costs a dozen slice lengths when nothing was added.
const dictCheckRecords = 64

// Config configures a Receiver. The zero value takes the defaults.
type Config struct {
	MaxDictBytes    uint64
	MaxChunkBytes   int
	MaxRequestBytes int
	MaxStreamBytes  int64
	// MaxDictMemory bounds a stream's dictionaries (DefaultMaxDictMemory),
	// with the string columns their entries keep (framebufs.go).
	MaxDictMemory int64
	// MaxFrameBytes bounds a frame's uncompressed size
	// (DefaultMaxFrameBytes).
	MaxFrameBytes int64
	// Metrics receives the receiver's own counters; nil means the
	// pipeline's set.
	Metrics *metrics.Set
}

// Receiver serves STEFDestination/Stream into an ingest pipeline. It is
// safe for concurrent use.
type Receiver struct {
	p   *ingest.Pipeline
	cfg Config
	// The schemas served, serialized, as sent in capabilities.
	metricsSchema, spansSchema []byte
	stop                       chan struct{}
	once                       sync.Once

	open                       *metrics.Gauge   // otlplite_stef_open_streams
	rotations                  *metrics.Counter // otlplite_stef_stream_rotations_total
	badRecords                 *metrics.Counter // otlplite_stef_bad_records_total
	refusedChunk, refusedHdr   *metrics.Counter // otlplite_stef_refusals_total{reason}
	refusedRoot, refusedDecode *metrics.Counter
	refusedState, refusedFrame *metrics.Counter
	dictRotations              *metrics.Counter // otlplite_stef_dictionary_rotations_total
	dictBytes                  atomic.Int64     // otlplite_stef_dictionary_bytes
	streams                    atomic.Int64

	// What ended streams left for the next ones (spares.go): zstd
	// decoders and request buffers, each charged while it waits.
	decoders *ingest.Spares[*zstd.Decoder]
	buffers  *ingest.Spares[[]byte]
	// unreclaim unregisters dropSpares from the budget's reclaimers.
	unreclaim func()

	// waiting, when set (tests), is called by a stream that is about to
	// wait for its client, once idle has charged or let go what it keeps.
	waiting func(*stream)
}

// New returns a Receiver storing into p. Until its Shutdown, p holds it
// (its spares are registered with p.AddReclaimer): a Receiver that is
// never Shut down stays reachable for p's life, its spares still let go
// whenever the budget needs their room, but not collected; an embedding
// that makes Receivers on a long-lived Pipeline must Shut each down.
func New(p *ingest.Pipeline, cfg Config) *Receiver {
	if cfg.MaxDictBytes == 0 {
		cfg.MaxDictBytes = DefaultMaxDictBytes
	}
	if cfg.MaxChunkBytes <= 0 {
		cfg.MaxChunkBytes = DefaultMaxChunkBytes
	}
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	// A request is built up to MaxRequestBytes plus one record, itself
	// bounded by the chunk's size; the pipeline refuses more than its
	// MaxRecvMsgSize.
	cfg.MaxRequestBytes = min(cfg.MaxRequestBytes, p.MaxRecvMsgSize()/2)
	if cfg.MaxStreamBytes <= 0 {
		cfg.MaxStreamBytes = DefaultMaxStreamBytes
	}
	if cfg.MaxDictMemory <= 0 {
		cfg.MaxDictMemory = DefaultMaxDictMemory
	}
	if cfg.MaxFrameBytes <= 0 {
		cfg.MaxFrameBytes = DefaultMaxFrameBytes
	}
	set := cfg.Metrics
	if set == nil {
		set = p.Metrics()
	}
	r := &Receiver{
		p: p, cfg: cfg, stop: make(chan struct{}),
		metricsSchema: serializeSchema(otelstef.MetricsWireSchema),
		spansSchema:   serializeSchema(otelstef.SpansWireSchema),
		open:          set.GetOrCreateGauge("otlplite_stef_open_streams", nil),
		rotations:     set.GetOrCreateCounter("otlplite_stef_stream_rotations_total"),
		badRecords:    set.GetOrCreateCounter("otlplite_stef_bad_records_total"),
		refusedChunk:  set.GetOrCreateCounter(`otlplite_stef_refusals_total{reason="chunk_too_large"}`),
		refusedHdr:    set.GetOrCreateCounter(`otlplite_stef_refusals_total{reason="bad_first_message"}`),
		refusedRoot:   set.GetOrCreateCounter(`otlplite_stef_refusals_total{reason="unsupported_root_struct"}`),
		refusedDecode: set.GetOrCreateCounter(`otlplite_stef_refusals_total{reason="decode_error"}`),
		refusedState:  set.GetOrCreateCounter(`otlplite_stef_refusals_total{reason="no_room_for_state"}`),
		refusedFrame:  set.GetOrCreateCounter(`otlplite_stef_refusals_total{reason="frame_too_large"}`),
		dictRotations: set.GetOrCreateCounter("otlplite_stef_dictionary_rotations_total"),
	}
	set.GetOrCreateGauge("otlplite_stef_dictionary_bytes", func() float64 { return float64(r.dictBytes.Load()) })
	r.decoders, r.buffers = ingest.NewSpares[*zstd.Decoder](p, maxSpares), ingest.NewSpares[[]byte](p, maxSpares)
	// Any request or stream that finds the budget full takes the spares'
	// room back before it waits or is refused.
	r.unreclaim = p.AddReclaimer(r.dropSpares)
	return r
}

// Shutdown makes every stream rotate at its next frame boundary: it
// acknowledges what it stored and ends with UNAVAILABLE. What ended
// streams left for the next (spares) is let go, its charge returned, and
// nothing more is kept.
func (r *Receiver) Shutdown() {
	r.once.Do(func() {
		close(r.stop)
		r.unreclaim()
		r.decoders.Close()
		r.buffers.Close()
	})
}

// ServeHTTP serves one STEFDestination/Stream call.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	// The body is read through a buffer once the stream's state is
	// charged (bufferedBody).
	body := &bufferedBody{ReadCloser: req.Body}
	req.Body = body
	// The chunk is assembled from messages, each at most a chunk.
	call, st := grpcwire.StartCall(w, req, grpcwire.Limits{MaxRecvMsgSize: r.cfg.MaxChunkBytes})
	if st != nil {
		r.p.RecordRefusal(req.Context(), ingest.STEF, 0, st, req.URL.Path, req.RemoteAddr)
		return
	}
	defer call.Close()
	r.open.Inc()
	defer r.open.Dec()
	s := &stream{r: r, call: call, ctx: call.Context(), body: body}
	defer s.stop()
	end := s.run()
	if end != nil && end.Code != grpcwire.Unavailable {
		r.p.RecordRefusal(req.Context(), ingest.STEF, 0, end, req.URL.Path, req.RemoteAddr)
	}
	call.WriteStatus(end)
	call.Finish()
}

// bodyBuffer is the buffer a stream's body is read through once its state
// is charged (within StateCostPlain and StateCostZstd): one HTTP/2 DATA
// frame at the default frame size, which holds the few KB an SDK-sized
// STEF frame takes with its gRPC prefix.
const bodyBuffer = 16 << 10

// bufferedBody is a stream's request body, read through a buffer once
// buffer is called. Each read of net/http's HTTP/2 request body tells the
// connection's serve goroutine (a channel send, waking it) what was read;
// grpcwire reads a message's 5-byte prefix and its body apart, so that a
// STEF frame cost two of them; through the buffer a frame that arrived in
// one DATA frame costs one. It is not made before the stream's state is
// charged: a stream that stalls before its first message holds no more
// than it did.
type bufferedBody struct {
	io.ReadCloser
	br *bufio.Reader
}

func (b *bufferedBody) Read(p []byte) (int, error) {
	if b.br != nil {
		return b.br.Read(p)
	}
	return b.ReadCloser.Read(p)
}

// buffer makes the reads that follow go through the buffer.
func (b *bufferedBody) buffer() {
	if b.br == nil {
		b.br = bufio.NewReaderSize(b.ReadCloser, bodyBuffer)
	}
}

// chunkBuffered reports whether the buffer holds the whole messages of a
// chunk, up to one with is_end_of_chunk: reading it will not wait for the
// client. It never reads. The body must be at a message's start (it is
// between chunks). A compressed message, one that cannot be parsed, or a
// first_message reports false: reading them ends the stream, which is
// not more input.
func (b *bufferedBody) chunkBuffered() bool {
	if b.br == nil {
		return false
	}
	buf, _ := b.br.Peek(b.br.Buffered())
	for len(buf) >= 5 && buf[0] == 0 {
		n := uint64(binary.BigEndian.Uint32(buf[1:5]))
		if uint64(len(buf)-5) < n {
			return false
		}
		var m clientMessage
		if parseClientMessage(buf[5:5+n], &m) != nil || m.first {
			return false
		}
		if m.endOfChunk {
			return true
		}
		buf = buf[5+n:]
	}
	return false
}

func rotationStatus() *grpcwire.Status {
	st := grpcwire.Errorf(grpcwire.Unavailable, "STEF stream rotated: reconnect and resend the records that were not acknowledged")
	st.RetryDelay = -1 // RetryInfo with a zero delay
	return st
}

// stream is one STEF stream being served.
type stream struct {
	r    *Receiver
	call *grpcwire.Call
	ctx  context.Context
	body *bufferedBody

	// msg and scratch are the gRPC read buffers of the messages; chunk
	// is the chunk being read and pos how much of it the STEF reader
	// took. A chunk that came in one message is that message's bytes
	// (in msg); one of several is assembled from them in own.
	msg, scratch, chunk, own []byte
	pos                      int
	// chunkTicket charges the chunk being read to the admission budget
	// (its bytes as they arrived), until the next chunk replaces it.
	chunkTicket *ingest.Ticket
	// ended: the input ended, with srcErr (nil: the client half-closed).
	ended  bool
	srcErr *grpcwire.Status
	// frameEnd is the last record of the frames read into the request
	// being built, while the reader goes on to the next frame without
	// handing it on (coalesce).
	frameEnd uint64
	coalesce bool
	// wire counts the STEF bytes since the last request was handed on.
	wire int

	sig     otlp.Signal
	b       builder
	acked   uint64    // the last record id acknowledged
	first   uint64    // the first record id of the request being built
	bad     []idRange // bad records not yet reported
	handled uint64    // the last record id given to the builder: in its request, or bad
	decoded int64     // OTLP bytes decoded by the stream
	state   int64     // the reader's state charged (HoldStreamStateFor)
	resp    []byte

	// dicts measures the reader's dictionaries; dictHeld is what they
	// hold as last measured, dictCharge its charge to the budget.
	dicts      *dictMeter
	dictHeld   int64
	dictCharge *ingest.StateCharge
	// frames measures the reader's frame buffers (framebufs.go), charged
	// to frameCharge: what they hold, the string columns the
	// dictionaries keep (pinned, since the dictionaries last restarted),
	// and, as a frame starts, its declared size (frameStart). pinnedFrame
	// is the last frame whose string columns were added to pinned, and
	// restarts the dictionaries' restarts as last seen.
	frames      *frameMeter
	frameCharge *ingest.StateCharge
	pinned      int64
	pinnedFrame int
	restarts    int
	u           *unzstd
	// frameBound bounds what the frame buffers hold beside pinned: as
	// last measured, plus the declared size of every frame since (a frame
	// grows them by at most its size). They are measured again only when
	// the bound passes what is charged.
	frameBound int64
	// bufCharge charges the builder's buffer while the stream waits for
	// its client (idle).
	bufCharge  *ingest.StateCharge
	sinceCheck int
	maxRequest int // the size at which a request is handed on (requestBound)
}

// maxFreeChunk is the largest chunk buffer a stream reads its next chunk
// into (not charged while empty): an SDK's frames fit many times over,
// and a larger buffer is left to the garbage collector.
const maxFreeChunk = 64 << 10

// assemble reads messages until one ends a chunk and makes it s.chunk,
// appending the messages' bytes to buf (s.own) when there are several;
// end reports the input's end (st nil: the client half-closed). A chunk
// in one message, as clients send them, is read where the message is
// (s.msg, read into again only once the chunk is consumed): the chunk's
// ticket charges the message's bytes, and a copy of them was held
// uncharged beside it.
func (s *stream) assemble(buf []byte) (wire int, end bool, st *grpcwire.Status) {
	s.own, s.chunk = buf, buf
	for {
		s.msg, s.scratch, st = s.call.ReadMessage(s.msg, s.scratch)
		if st != nil {
			if grpcwire.IsEndOfStream(st) {
				st = nil
			}
			return wire, true, st
		}
		var m clientMessage
		if err := parseClientMessage(s.msg, &m); err != nil {
			return wire, true, grpcwire.Errorf(grpcwire.InvalidArgument, "%v", err)
		}
		if m.first {
			return wire, true, grpcwire.Errorf(grpcwire.InvalidArgument, "first_message sent twice: it must be sent once, first")
		}
		if len(buf)+len(m.stefBytes) > s.r.cfg.MaxChunkBytes {
			s.r.refusedChunk.Inc()
			return wire, true, grpcwire.Errorf(grpcwire.ResourceExhausted, "STEF chunk larger than %d bytes: send is_end_of_chunk at least every frame, and frames under that size", s.r.cfg.MaxChunkBytes)
		}
		wire += len(s.msg)
		if len(buf) == 0 && m.endOfChunk {
			s.chunk = m.stefBytes
			return wire, false, nil
		}
		buf = append(buf, m.stefBytes...)
		s.own, s.chunk = buf, buf
		if m.endOfChunk {
			return wire, false, nil
		}
	}
}

// Read implements io.Reader for the STEF reader: the bytes of the stream's
// chunks, assembled from its messages.
func (s *stream) Read(p []byte) (int, error) {
	for s.pos >= len(s.chunk) {
		if s.ended {
			if s.srcErr != nil {
				return 0, errSource
			}
			return 0, io.EOF
		}
		s.nextChunk()
	}
	n := copy(p, s.chunk[s.pos:])
	s.pos += n
	return n, nil
}

var errSource = errors.New("STEF stream ended")

// nextChunk reads the next chunk and makes it the current one. The
// stream reads its chunks itself, in the goroutine that decodes them
// (a goroutine reading ahead cost a hand-off per chunk): when the body's
// buffer does not hold the whole chunk already, reading it may wait for
// the client, and the stream first keeps no more than idle allows.
func (s *stream) nextChunk() {
	waits := !s.body.chunkBuffered()
	if waits {
		if !s.idle() {
			// No room for the request it would hold: the
			// stream ends (Read returns errSource), its records
			// not acknowledged, for the client to send again.
			s.r.refusedState.Inc()
			st := s.r.p.BusyStatus("no room for a STEF request waiting for the rest of a frame: send each frame in one chunk")
			req := s.call.Request()
			s.r.p.RecordRefusal(s.ctx, ingest.STEF, 0, st, req.URL.Path, req.RemoteAddr)
			s.ended, s.srcErr = true, st
			return
		}
		if s.r.waiting != nil {
			s.r.waiting(s)
		}
	}
	s.readChunk()
	if waits {
		// The stream is at work again: the buffer its builder
		// kept is the request's, charged when it is handed on.
		s.bufCharge.Release()
	}
}

// readChunk reads the next chunk into the current one's buffer, charged
// to a ticket of its own as its bytes arrive, the current one's given
// back first (the reader took all of it).
func (s *stream) readChunk() {
	s.releaseChunk()
	// Its charge returned, the last chunk's buffer is reused only when
	// small: a large one is not held, uncharged, while the client is
	// waited for.
	buf := s.own[:0]
	s.own, s.chunk = nil, nil
	if cap(buf) > maxFreeChunk {
		buf = nil
	}
	t := s.r.p.Take(s.ctx)
	// The chunk's ticket only charges it: the request buffers a pooled
	// ticket brings (up to a request each) are not held with it,
	// uncharged, but for a small one (maxIdleBuffer), which the stream's
	// next request is built in (flush) rather than in a new one.
	if cap(t.Msg) > maxIdleBuffer {
		t.Msg = nil
	}
	t.Scratch = nil
	s.call.SetBudget(t)
	wire, end, st := s.assemble(buf)
	s.chunkTicket, s.pos = t, 0
	s.wire += wire
	if end {
		// A chunk the input ended in is not read.
		s.chunk = s.chunk[:0]
		s.ended, s.srcErr = true, st
	}
}

// idle is called as the stream waits for its client. The buffer its
// builder keeps for the next request, once the last was handed on, is
// kept while it waits only when it is charged to the budget (bufCharge,
// returned as the next chunk arrives); with no room, or when it is no
// larger than maxIdleBuffer (within the stream's state charge), it is
// let go and the next request's is made at its first record. Kept, a
// stream of large requests (8,192-point frames, about a megabyte of OTLP
// each, its client encoding the next while the stream waits) builds each
// in the same buffer: made anew, each was cleared by the allocator and
// brought a collection every few requests (the collector's slack follows
// the garbage, service/gcpercent.go), about a quarter of the server's CPU.
//
// A stream may also wait with a request under way: the frames before
// the one it reads, coalesced, when a client cut that frame across
// chunks (the library's client sends a chunk per frame). That request,
// up to MaxRequestBytes and a record, from a few KB of STEF whose records
// repeat a large attribute, cannot be let go (its records are not
// acknowledged): it is charged (the budget lets the spares go for it if
// need be), and without room idle reports false and the stream ends, its
// records sent again by the client on its next.
//
// The buffers the stream reads its chunks through (the last gRPC message,
// its compressed bytes, the chunk) are kept the same way: up to
// maxIdleBuffer each as they are, a larger one only charged with the
// request's buffer, and let go first when there is no room. A chunk's
// ticket charges its bytes only until the chunk is read: its message's
// buffer, up to MaxChunkBytes (twice with grpc compression), was kept
// uncharged while the stream waited, however long. A waiting stream holds
// no more than its charges cover.
func (s *stream) idle() bool {
	if cap(s.own) > maxFreeChunk {
		// Not read into again (readChunk): not kept. The chunk is
		// consumed (idle is called between chunks).
		s.own, s.chunk, s.pos = nil, nil, 0
	}
	var req int64 // the request buffer, when idle keeps it only charged
	underWay := false
	var buf *[]byte
	if s.b != nil {
		buf = s.b.buf()
		if cap(*buf) > maxIdleBuffer {
			req = int64(cap(*buf))
			underWay = len(*buf) != 0
		}
	}
	if s.bufCharge.Resize(req + s.largeReadBuffers()) {
		return true
	}
	s.dropReadBuffers()
	if s.bufCharge.Resize(req) {
		return true
	}
	if underWay {
		return false
	}
	*buf = nil
	return true
}

// largeReadBuffers returns the capacity of the stream's read buffers
// larger than maxIdleBuffer (idle).
func (s *stream) largeReadBuffers() int64 {
	var n int64
	for _, b := range [...][]byte{s.msg, s.scratch, s.own} {
		if cap(b) > maxIdleBuffer {
			n += int64(cap(b))
		}
	}
	return n
}

// dropReadBuffers lets go of the read buffers larger than maxIdleBuffer.
// The chunk is consumed (idle is called between chunks).
func (s *stream) dropReadBuffers() {
	if cap(s.msg) > maxIdleBuffer {
		s.msg = nil
	}
	if cap(s.scratch) > maxIdleBuffer {
		s.scratch = nil
	}
	if cap(s.own) > maxIdleBuffer {
		s.own = nil
	}
	s.chunk, s.pos = nil, 0 // consumed, perhaps a message let go
}

// spareBuffer keeps the buffer the stream built its requests in for the
// next stream (Receiver.buffers), when it is larger than the ones a
// stream keeps anyway (maxIdleBuffer).
func (s *stream) spareBuffer() {
	if s.b == nil {
		return
	}
	buf := s.b.buf()
	if cap(*buf) > maxIdleBuffer {
		s.r.buffers.Put((*buf)[:0], int64(cap(*buf)))
	}
	*buf = nil
}

// dropSpares lets go of what ended streams left (spares), so that their
// charge makes room for any request or stream state (it is the Receiver's
// reclaimer, Pipeline.AddReclaimer), and reports whether anything was
// kept.
func (r *Receiver) dropSpares() bool {
	d := r.decoders.DropAll()
	b := r.buffers.DropAll()
	return d || b
}

// moreInput reports whether the STEF reader can go on without waiting for
// the client: what it read of the stream is not all consumed, or the next
// chunk (a STEF frame, as clients send them: the library's gRPC client
// sends a chunk per frame) is whole in the body's buffer (bodyBuffer:
// SDK-sized frames, a few hundred bytes, fit dozens of times; a chunk
// larger than it is never found waiting, and a frame that large is
// worth its own request). It never waits itself. A
// client that cuts a frame across chunks may see its acknowledgements
// wait for the rest of the frame it is sending.
func (s *stream) moreInput(u *unzstd) bool {
	if s.pos < len(s.chunk) || u.buffered() {
		return true
	}
	return !s.ended && s.body.chunkBuffered()
}

// run serves the stream and returns its final status (nil: OK).
func (s *stream) run() *grpcwire.Status {
	if s.call.Context().Err() != nil {
		return ingest.DeadlineStatus(s.ctx, "on the STEF stream")
	}
	// The headers go first, so that a client waiting for them before
	// it sends (as HTTP clients do) sees the stream open.
	s.call.WriteHeaders()
	s.call.Flush()
	// The first message names the root struct; it is small.
	var st *grpcwire.Status
	s.msg, s.scratch, st = s.call.ReadMessage(s.msg, s.scratch)
	if st != nil {
		if grpcwire.IsEndOfStream(st) {
			return nil
		}
		return st
	}
	var m clientMessage
	if err := parseClientMessage(s.msg, &m); err != nil || !m.first || m.rootStruct == "" {
		s.r.refusedHdr.Inc()
		return grpcwire.Errorf(grpcwire.InvalidArgument, "the first STEFClientMessage must have first_message with root_struct_name, and nothing else")
	}
	var schema []byte
	switch m.rootStruct {
	case otelstef.MetricsStructName:
		s.sig, schema = otlp.Metrics, s.r.metricsSchema
	case otelstef.SpansStructName:
		s.sig, schema = otlp.Traces, s.r.spansSchema
	default:
		s.r.refusedRoot.Inc()
		return grpcwire.Errorf(grpcwire.Unimplemented, "STEF root struct %q is not served: only %q (metrics) and %q (traces)", m.rootStruct, otelstef.MetricsStructName, otelstef.SpansStructName)
	}
	s.resp = appendCapabilities(s.resp[:0], s.r.cfg.MaxDictBytes, schema)
	if err := s.call.WriteMessage(s.resp); err != nil {
		return grpcwire.Errorf(grpcwire.Unavailable, "cannot write capabilities: %v", err)
	}
	s.call.Flush()
	s.wire = 0
	// The reader's state is charged before the reader is made (it
	// reads the header, choosing its decoder, on its first Read), and
	// returned before the stream's status is written.
	// Charged to the stream's tenant's share too (HoldStreamStateFor).
	if !s.r.p.HoldStreamStateFor(s.ctx, StateCostZstd) {
		s.r.refusedState.Inc()
		st := s.r.p.BusyStatus("no room for another STEF stream's decoder state")
		req := s.call.Request()
		s.r.p.RecordRefusal(s.ctx, ingest.STEF, 0, st, req.URL.Path, req.RemoteAddr)
		return st
	}
	s.state = StateCostZstd
	s.body.buffer()
	s.dictCharge = s.r.p.NewStateCharge(s.ctx)
	s.bufCharge = s.r.p.NewStateCharge(s.ctx)
	s.frameCharge = s.r.p.NewStateCharge(s.ctx)
	defer func() {
		s.r.p.ReleaseStreamStateFor(s.ctx, s.state)
		s.dictCharge.Release()
		s.bufCharge.Release()
		s.frameCharge.Release()
		s.r.dictBytes.Add(-s.dictHeld)
	}()
	return s.records()
}

// lowerState lowers the stream's state charge to what its reader holds,
// once the header says how its frames are compressed.
func (s *stream) lowerState(compressed bool) {
	if !compressed && s.state > StateCostPlain {
		s.r.p.ReleaseStreamStateFor(s.ctx, s.state-StateCostPlain)
		s.state = StateCostPlain
	}
}

// recordReader is what records() needs of a generated STEF reader.
type recordReader interface {
	Read(pkg.ReadOptions) error
	RecordCount() uint64
}

// builder is what records() needs of a signal's OTLP builder: reset
// starts a request in buf, add appends the reader's current record.
type builder interface {
	reset(buf []byte)
	add() error
	finish() []byte
	items() int
	size() int
	// buf is the buffer the request is built in: nil, an empty buffer
	// is made at the request's first record (firstBuffer).
	buf() *[]byte
	// setMaxRecord bounds what one record may write (recordLimit).
	setMaxRecord(n int)
}

// open returns the reader of the stream's signal, its builder and the
// unzstd it reads through. The reader reads the stream through unzstd, which decompresses zstd frames
// with a bounded window.
func (s *stream) open() (recordReader, builder, *unzstd, error) {
	u := newUnzstd(s)
	u.decoders = s.r.decoders
	u.onFrame = s.frameStart
	s.u = u
	if s.sig == otlp.Traces {
		rd, err := otelstef.NewSpansReader(u)
		if err != nil {
			return nil, nil, u, err
		}
		s.lowerState(u.compressed)
		s.dicts, s.frames = newDictMeter(rd), newFrameMeter(rd)
		return rd, &spansBuilder{rec: &rd.Record}, u, nil
	}
	rd, err := otelstef.NewMetricsReader(u)
	if err != nil {
		return nil, nil, u, err
	}
	s.lowerState(u.compressed)
	s.dicts, s.frames = newDictMeter(rd), newFrameMeter(rd)
	return rd, &metricsBuilder{rec: &rd.Record}, u, nil
}

// records reads the stream's records, hands them to the pipeline a frame
// at a time, and returns the stream's final status.
func (s *stream) records() (end *grpcwire.Status) {
	var u *unzstd
	defer func() {
		// The STEF library is not ours: whatever hostile input makes it
		// do, one stream ends, not the process.
		if v := recover(); v != nil {
			s.r.refusedDecode.Inc()
			end = grpcwire.Errorf(grpcwire.InvalidArgument, "cannot decode STEF stream: the decoder failed: %v", v)
			return // the zstd decoder, in a state not known, is not reused
		}
		// The stream's own state is given back first (run's defer then
		// has nothing left to return): where it was is room for what it
		// leaves for the next stream.
		s.r.p.ReleaseStreamStateFor(s.ctx, s.state)
		s.state = 0
		s.dictCharge.Release()
		s.bufCharge.Release()
		s.frameCharge.Release()
		if u != nil {
			u.close()
		}
		s.spareBuffer()
	}()
	// Record ids start at 1, also for a stream that ends before its
	// header (decodeFailed).
	s.first = 1
	rd, b, u, err := s.open()
	if err != nil {
		return s.decodeFailed(0, err)
	}
	s.b = b
	// The buffer an ended stream built its requests in, if one is
	// kept: a stream's first requests otherwise grow theirs by
	// doublings, up to MaxRequestBytes.
	buf, _ := s.r.buffers.Get()
	s.b.reset(buf)
	t := s.r.p.Take(s.ctx)
	s.requestBound(t)
	s.r.p.Done(t)
	for {
		// Within a frame the records are there already; at its end,
		// what was built goes to the pipeline before the stream is
		// read again, unless the next frame is there already too
		// (coalesce).
		err := rd.Read(pkg.ReadOptions{TillEndOfFrame: s.first <= rd.RecordCount() && !s.coalesce})
		if errors.Is(err, pkg.ErrEndOfFrame) {
			// The frame's dictionaries are charged before its records
			// are acknowledged: what a client is told is stored, its
			// state is accounted for.
			if st := s.chargeDicts(rd.RecordCount()); st != nil {
				return st
			}
			// The client sent the next frame before this one was
			// acknowledged: it goes in the same request, up to
			// MaxRequestBytes, so that a stream of small frames costs
			// one request and one acknowledgement per batch of frames
			// that arrived together, not per frame. Nothing decoded
			// waits for input that is not there: with none waiting,
			// the request is handed on now.
			if s.b.size() < s.maxRequest && !s.rotating() && s.moreInput(u) {
				s.frameEnd, s.coalesce = rd.RecordCount(), true
				continue
			}
			if st := s.flush(rd.RecordCount()); st != nil {
				return st
			}
			if st := s.rotateNow(); st != nil {
				return st
			}
			continue
		}
		if err != nil {
			if s.coalesce {
				// The next frame cannot be read: the frames read before
				// it are stored and acknowledged first.
				s.coalesce = false
				if st := s.flush(s.frameEnd); st != nil {
					return st
				}
			}
			return s.decodeFailed(rd.RecordCount(), err)
		}
		s.coalesce = false
		id := rd.RecordCount()
		s.handled = id
		before := s.b.size()
		if err := s.b.add(); err != nil {
			// The record decoded but cannot be OTLP: it alone is bad.
			s.r.badRecords.Inc()
			s.addBad(id)
			continue
		}
		s.decoded += int64(s.b.size() - before)
		if s.b.size() >= s.maxRequest {
			if st := s.flush(id); st != nil {
				return st
			}
		}
		if s.sinceCheck++; s.sinceCheck >= dictCheckRecords {
			if st := s.chargeDicts(id); st != nil {
				return st
			}
		}
	}
}

// chargeDicts measures the reader's dictionaries after record last and
// charges what they grew by (or returns what they shrank by), and the
// reader's frame buffers with them (frameCharge). Past MaxDictMemory
// (the dictionaries and the string columns they keep), or with no room in
// the budget for them, the records read so far are stored and
// acknowledged and the stream is rotated: a new one starts with empty
// dictionaries and no frame buffers.
func (s *stream) chargeDicts(last uint64) *grpcwire.Status {
	s.sinceCheck = 0
	s.measureDicts()
	ok := s.dicts == nil || s.dictHeld+s.pinned <= s.r.cfg.MaxDictMemory && s.dictCharge.Resize(s.dictHeld)
	if ok && s.frames != nil {
		ok = s.chargeFrames(0)
	}
	if ok {
		return nil
	}
	// Too large, or no room: what was read is stored, and the stream
	// ends, its dictionaries with it. The client's next stream starts
	// them anew.
	if st := s.flush(last); st != nil {
		return st
	}
	s.r.dictRotations.Inc()
	return rotationStatus()
}

// measureDicts measures the dictionaries (dictHeld). When they grew
// during the current frame, its string columns are kept with them
// (pinned): their entries' strings point into them (framebufs.go). A
// restart lets go of what the entries kept.
func (s *stream) measureDicts() {
	if s.dicts == nil {
		return
	}
	held := s.dicts.measure()
	grew := held > s.dictHeld
	if s.dicts.restarts != s.restarts {
		s.restarts, s.pinned, s.pinnedFrame = s.dicts.restarts, 0, 0
		grew = held > 0
	}
	if grew && s.frames != nil && s.pinnedFrame != s.u.frames {
		s.pinned += s.frames.strings()
		s.pinnedFrame = s.u.frames
	}
	s.r.dictBytes.Add(held - s.dictHeld)
	s.dictHeld = held
}

// frameAllowance is what a reader's frame buffers may hold within the
// stream's state charge (StateCostPlain, StateCostZstd) before they are
// charged beside it: the reader's state, measured at about 21 KB after
// small frames, leaves 27 KiB of StateCostPlain beside it and the body's
// buffer, so that an SDK's streams (frames of a few KB) take no step of
// the budget more than they did.
const frameAllowance = 16 << 10

// frameHeld is what the reader's frame buffers hold: its columns, the
// current frame's string columns, and the earlier frames' kept by the
// dictionaries (the current frame's counted once).
func (s *stream) frameHeld() int64 {
	n := s.frames.columns() + s.pinned
	if s.pinnedFrame != s.u.frames {
		n += s.frames.strings()
	}
	return n
}

// chargeFrames charges the frame buffers and next more bytes (a frame
// about to be read), and reports whether they fit. While frameBound and
// pinned are within what is charged nothing is measured: a frame costs
// an addition, not a walk of the reader's buffers; past it they are
// measured and the charge resized (grown, or returned beyond a step).
func (s *stream) chargeFrames(next int64) bool {
	s.frameBound += next
	if s.frameBound+s.pinned-frameAllowance <= s.frameCharge.Held() {
		return true
	}
	held := s.frameHeld() + next
	s.frameBound = held - s.pinned
	return s.frameCharge.Resize(held - frameAllowance)
}

// frameStart is told of each frame (unzstd.onFrame) before the reader
// reads it, growing its buffers by up to its size: a frame larger than
// MaxFrameBytes is refused (RESOURCE_EXHAUSTED), and its size is charged
// (frameCharge) beside what the buffers hold already, or the stream ends
// for want of room (no_room_for_state), before any of it is read. The
// frames read before it are stored and acknowledged (records). The
// charge comes down to what the buffers hold when they are next measured
// (chargeFrames).
func (s *stream) frameStart(size uint64) error {
	if size > uint64(s.r.cfg.MaxFrameBytes) {
		s.r.refusedFrame.Inc()
		s.srcErr = grpcwire.Errorf(grpcwire.ResourceExhausted, "STEF frame of %d bytes uncompressed is larger than %d: send smaller frames (the STEF writer's MaxUncompressedFrameByteSize)", size, s.r.cfg.MaxFrameBytes)
		return errSource
	}
	if s.frames == nil {
		// The stream's header frame, read as the reader is made (at
		// most pkg.VarHdrContentSizeLimit, read into a buffer of its
		// own and let go).
		return nil
	}
	if s.sinceCheck > 0 {
		// Records were decoded since the dictionaries were last
		// measured: what they added keeps the frame that ends.
		s.measureDicts()
	}
	if !s.chargeFrames(int64(size)) {
		s.r.refusedState.Inc()
		st := s.r.p.BusyStatus("no room for a STEF frame's buffers: send smaller frames")
		req := s.call.Request()
		s.r.p.RecordRefusal(s.ctx, ingest.STEF, 0, st, req.URL.Path, req.RemoteAddr)
		s.srcErr = st
		return errSource
	}
	return nil
}

// rotateNow ends the stream, everything read being acknowledged, when it
// decoded MaxStreamBytes or the receiver shuts down.
func (s *stream) rotateNow() *grpcwire.Status {
	if !s.rotating() {
		return nil
	}
	s.r.rotations.Inc()
	return rotationStatus()
}

// rotating reports whether the stream is to be rotated at this frame's end.
func (s *stream) rotating() bool {
	select {
	case <-s.r.stop:
		return true
	default:
		return s.decoded >= s.r.cfg.MaxStreamBytes
	}
}

// decodeFailed ends the stream after a record that cannot be read: the
// reader's state is lost with it. Records before it are stored and
// acknowledged; the failing one is reported bad. A source error (the
// client went away, half-closed, or a refused chunk) is the stream's end
// instead.
func (s *stream) decodeFailed(count uint64, err error) *grpcwire.Status {
	if s.srcErr != nil || errors.Is(err, errSource) {
		return s.srcErr
	}
	if errors.Is(err, io.EOF) && count < s.first {
		// Half-closed between frames: the stream is done.
		return nil
	}
	s.r.refusedDecode.Inc()
	// The records read so far are in the request or reported bad; the
	// failing one is the next id. (Counting the request's items would
	// miss the bad records among them: a stored record would be
	// reported bad, the failing one not.)
	last := max(s.first-1, s.handled)
	if last >= s.first {
		if st := s.flush(last); st != nil {
			return st
		}
	}
	bad := max(s.acked, last) + 1
	s.r.badRecords.Inc()
	s.bad = append(s.bad, idRange{bad, bad})
	s.resp = appendDataResponse(s.resp[:0], bad, s.bad)
	_ = s.call.WriteMessage(s.resp)
	s.call.Flush()
	return grpcwire.Errorf(grpcwire.InvalidArgument, "cannot decode STEF record %d: %v", bad, err)
}

func (s *stream) addBad(id uint64) {
	if n := len(s.bad); n > 0 && s.bad[n-1].to+1 == id {
		s.bad[n-1].to = id
		return
	}
	s.bad = append(s.bad, idRange{id, id})
}

// flush hands the request built from records s.first..last to the
// pipeline and acknowledges last once it is stored. A refusal ends the
// stream with its status; the client resends from s.first.
func (s *stream) flush(last uint64) *grpcwire.Status {
	if last < s.first {
		return nil
	}
	if s.b.items() > 0 {
		ctx := s.ctx
		t := s.r.p.Take(ctx)
		defer s.r.p.Done(t)
		s.requestBound(t) // for the next (the tenant's quotas may be reloaded)
		s.r.p.StartLog(ctx, t, s.call.Request().RemoteAddr, ingest.STEF, s.sig)
		// The request is charged before it is handed on. The pipeline
		// does not retain it (ingest.Request.Body): its buffer is the
		// builder's again for the next request (reset below), not the
		// pooled ticket's, whose buffers readChunk lets go.
		body, items := s.b.finish(), s.b.items()
		n := len(body)
		if err := t.Declare(n); err != nil {
			return s.refused(t, err)
		}
		// From here until the pipeline stored it (waiting for room,
		// then for the sink), the stream is not read: what its client
		// sends meanwhile, up to the stream's window, waits in net/http's
		// flow-control buffers. The window is charged to the waiting
		// budget for the wait, as an export stream's (ParkWindow), and
		// when it does not fit the stream ends now, its records not
		// acknowledged (its client sends them again), rather than wait
		// with a window no budget sees. A client that half-closed has
		// nothing more to send.
		parked := !s.ended
		if parked && !s.r.p.ParkWindow() {
			return s.refused(t, s.r.p.BusyStatus("no room in the waiting budget for the STEF stream's unread window"))
		}
		if err := t.Charge(ctx, n); err != nil {
			if parked {
				s.r.p.UnparkWindow()
			}
			return s.refused(t, err)
		}
		// The builders write well-formed OTLP and refuse, as bad
		// records, what the pipeline's validation would reject
		// (metrics.go, spans.go): the pipeline need not walk the
		// request again, unless it validates more (UTF-8).
		out, err := s.r.p.ExportValidated(ctx, ingest.Request{
			Transport: ingest.STEF, Signal: s.sig, Body: body,
			WireSize: s.wire, Size: n, Ticket: t,
		}, ingest.Validated{Items: items, MaxAnyValueDepth: maxAnyValueDepth})
		if parked {
			s.r.p.UnparkWindow()
		}
		s.wire = 0
		s.b.reset(body)
		if err != nil {
			return err.(*grpcwire.Status)
		}
		if out.Rejected > 0 {
			// OTLP's partial success does not say which items; the
			// request's records are reported bad, which they partly are,
			// and the valid ones are stored: none is to be sent again.
			// The range covers the records the decoder refused in
			// it: reported once, ranges in order.
			s.r.badRecords.Add(out.Rejected)
			s.bad = append(s.bad[:0], idRange{s.first, last})
		}
	}
	s.b.reset(s.b.finish())
	s.first = last + 1
	s.acked = last
	s.resp = appendDataResponse(s.resp[:0], last, s.bad)
	s.bad = s.bad[:0]
	if err := s.call.WriteMessage(s.resp); err != nil {
		return grpcwire.Errorf(grpcwire.Unavailable, "cannot write acknowledgement: %v", err)
	}
	s.call.Flush()
	return nil
}

// requestBound sets the size at which the stream hands a request on:
// Config.MaxRequestBytes, and half the max_request_bytes of the stream's
// tenant (t is a ticket of the stream's context), as MaxRecvMsgSize is
// halved (a request passes the bound by a record). The requests are the
// receiver's to size, not the client's: one over the tenant's bound would
// be refused as never acceptable, ending the stream, and the client would
// send the same records again on the next, forever.
// A record is held to the same bound (the request is then within twice
// it): a record that writes more is refused as bad.
func (s *stream) requestBound(t *ingest.Ticket) {
	s.maxRequest = s.r.cfg.MaxRequestBytes
	if mr := t.MaxRequest(); mr > 0 {
		s.maxRequest = max(min(s.maxRequest, int(mr/2)), 1)
	}
	s.b.setMaxRecord(s.maxRequest)
}

// refused ends the stream when admission refuses a request's charge.
func (s *stream) refused(t *ingest.Ticket, err error) *grpcwire.Status {
	st, ok := err.(*grpcwire.Status)
	if !ok {
		st = grpcwire.Errorf(grpcwire.ResourceExhausted, "%v", err)
	}
	s.r.p.Refused(t, ingest.STEF, s.sig, st)
	return st
}

// serializeSchema returns a generated schema in its wire form.
func serializeSchema(f func() (schema.WireSchema, error)) []byte {
	ws, err := f()
	if err != nil {
		panic("stefreceiver: the otelstef schema: " + err.Error())
	}
	var buf bytes.Buffer
	if err := ws.Serialize(&buf); err != nil {
		panic("stefreceiver: the otelstef schema: " + err.Error())
	}
	return buf.Bytes()
}

// releaseChunk gives the chunk's ticket back: its charge, and the request
// log line the chunk had none of.
func (s *stream) releaseChunk() {
	if s.chunkTicket != nil {
		s.r.p.Done(s.chunkTicket)
		s.chunkTicket = nil
	}
}

// stop gives back the chunk the stream holds.
func (s *stream) stop() {
	s.releaseChunk()
}
