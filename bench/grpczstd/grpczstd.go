// Package grpczstd is a zstd compressor for grpc-go
// (google.golang.org/grpc/encoding.Compressor) built on
// github.com/klauspost/compress/zstd, as the Collector's configgrpc registers
// one: grpc-go ships gzip only, and the side-by-side benchmark's baseline
// must accept grpc-encoding: zstd like the Collector does.
//
// Encoders and decoders are pooled: creating either allocates its window
// buffers (megabytes), which would otherwise dominate a per-message cost.
package grpczstd

import (
	"errors"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
	"google.golang.org/grpc/encoding"
)

// Name is the grpc-encoding value, "zstd".
const Name = "zstd"

// Register registers the compressor with grpc-go under Name. Like
// encoding.RegisterCompressor it must be called during initialisation, and
// it replaces any compressor registered under the same name.
func Register() {
	encoding.RegisterCompressor(&compressor{})
}

type compressor struct {
	encoders sync.Pool // *zstd.Encoder
	decoders sync.Pool // *zstd.Decoder
}

func (c *compressor) Name() string { return Name }

// Compress returns a writer that compresses into w; Close flushes the
// frame and returns the encoder to the pool.
func (c *compressor) Compress(w io.Writer) (io.WriteCloser, error) {
	enc, _ := c.encoders.Get().(*zstd.Encoder)
	if enc == nil {
		var err error
		// One goroutine per encoder: gRPC messages are compressed on the
		// caller's goroutine, and concurrency is across messages.
		if enc, err = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1)); err != nil {
			return nil, err
		}
	}
	enc.Reset(w)
	return &writer{Encoder: enc, c: c}, nil
}

type writer struct {
	*zstd.Encoder
	c *compressor
}

func (w *writer) Close() error {
	if w.Encoder == nil {
		return errors.New("grpczstd: writer closed twice")
	}
	err := w.Encoder.Close()
	w.c.encoders.Put(w.Encoder)
	w.Encoder = nil
	return err
}

// Decompress returns a reader of the decompressed r. The decoder goes back
// to the pool when the reader reaches the end of the data or fails: grpc-go
// reads every message to io.EOF.
func (c *compressor) Decompress(r io.Reader) (io.Reader, error) {
	dec, _ := c.decoders.Get().(*zstd.Decoder)
	if dec == nil {
		var err error
		if dec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1)); err != nil {
			return nil, err
		}
	}
	if err := dec.Reset(r); err != nil {
		c.decoders.Put(dec)
		return nil, err
	}
	return &reader{dec: dec, c: c}, nil
}

type reader struct {
	dec *zstd.Decoder
	c   *compressor
}

func (r *reader) Read(p []byte) (int, error) {
	if r.dec == nil {
		return 0, io.EOF
	}
	n, err := r.dec.Read(p)
	if err != nil {
		// Drop the reference to the source before pooling.
		_ = r.dec.Reset(nil)
		r.c.decoders.Put(r.dec)
		r.dec = nil
	}
	return n, err
}
