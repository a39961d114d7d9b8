package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/metadata"

	"github.com/otlp-lite/otlp-lite/bench/internal/benchnet"
	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/otlpclient"
)

// passthrough is a grpc-go compressor whose Compress copies bytes
// unchanged: the request bytes are compressed once, up front (payload.go),
// so that the client's cost does not depend on the compression and the
// server still receives a real gzip or zstd message with the compressed
// flag set and grpc-encoding named. Decompress is real, for responses.
type passthrough struct{ name string }

func (c passthrough) Name() string { return c.name }

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

func (c passthrough) Compress(w io.Writer) (io.WriteCloser, error) { return nopCloser{w}, nil }

func (c passthrough) Decompress(r io.Reader) (io.Reader, error) {
	if c.name == "gzip" {
		return gzip.NewReader(r)
	}
	d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	return d.IOReadCloser(), nil
}

func init() {
	// This binary sends only pre-compressed messages, so the global
	// registration replaces grpc-go's gzip for it alone.
	encoding.RegisterCompressor(passthrough{"gzip"})
	encoding.RegisterCompressor(passthrough{"zstd"})
}

type grpcClient struct {
	cc   *grpc.ClientConn
	p    payload
	opts []grpc.CallOption
	// ctx carries the -header metadata, built once so that the client's
	// cost per call does not grow with it.
	ctx context.Context
}

func newGRPCClient(cfg config, p payload) (*grpcClient, error) {
	cc, err := grpc.NewClient(cfg.addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(benchnet.RawCodec{})))
	if err != nil {
		return nil, fmt.Errorf("cannot dial: %w", err)
	}
	c := &grpcClient{cc: cc, p: p, ctx: context.Background()}
	if len(cfg.headers) > 0 {
		md := metadata.MD{}
		for _, kv := range cfg.headers {
			md.Append(strings.ToLower(kv[0]), kv[1])
		}
		c.ctx = metadata.NewOutgoingContext(c.ctx, md)
	}
	if p.codec != compression.Identity {
		c.opts = append(c.opts, grpc.UseCompressor(p.codec.String()))
	}
	return c, nil
}

func (c *grpcClient) close() { c.cc.Close() }

// export makes one unary OTLP/gRPC call.
func (c *grpcClient) export(i int64) error {
	src := c.p.at(i).body
	var resp []byte
	return c.cc.Invoke(c.ctx, c.p.grpcMethod, &src, &resp, c.opts...)
}

// stream sends requests requests on one otlplite.v1.StreamExporter stream,
// at most window unacknowledged, and waits for every acknowledgement and
// the stream's OK status. Each request is the payload in the stream
// envelope with a fresh id (stream.proto). Its buffer is reused once the
// request is acknowledged: the server has then read all of it, so gRPC no
// longer holds it.
//
// The server must not rotate the stream during the run
// (-stream-max-requests -1 -stream-max-age -1): resending after a rotation
// is otlpclient.StreamExporter's job, not this load generator's.
func (c *grpcClient) stream(requests, window int) error {
	ctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	desc := &grpc.StreamDesc{StreamName: "Export", ClientStreams: true, ServerStreams: true}
	cs, err := c.cc.NewStream(ctx, desc, c.p.streamMethod)
	if err != nil {
		return fmt.Errorf("cannot open stream: %w", err)
	}
	free := make(chan []byte, window)
	for range window {
		free <- make([]byte, 0, c.p.maxBody()+16)
	}
	var mu sync.Mutex
	pending := make(map[uint64][]byte, window)

	sendErr := make(chan error, 1)
	go func() {
		for id := uint64(1); id <= uint64(requests); id++ {
			var buf []byte
			select {
			case buf = <-free:
			case <-ctx.Done():
				sendErr <- ctx.Err()
				return
			}
			env, err := otlpclient.AppendEnvelope(buf[:0], id, c.p.at(int64(id-1)).body)
			if err != nil {
				sendErr <- err
				return
			}
			mu.Lock()
			pending[id] = env
			mu.Unlock()
			if err := cs.SendMsg(&env); err != nil {
				// The reason is in RecvMsg's status.
				sendErr <- nil
				return
			}
		}
		sendErr <- cs.CloseSend()
	}()

	var resp []byte
	var ack otlpclient.Ack
	for acked := 0; acked < requests; acked++ {
		if err := cs.RecvMsg(&resp); err != nil {
			return fmt.Errorf("stream ended after %d of %d acknowledgements: %w", acked, requests, err)
		}
		if err := otlpclient.ParseAck(resp, &ack); err != nil {
			return err
		}
		if ack.Code != otlpclient.Success {
			return fmt.Errorf("request %d: %s: %s", ack.ID, ack.Code, ack.Message)
		}
		mu.Lock()
		buf, ok := pending[ack.ID]
		delete(pending, ack.ID)
		mu.Unlock()
		if !ok {
			return fmt.Errorf("acknowledgement of unknown request %d", ack.ID)
		}
		free <- buf
	}
	if err := <-sendErr; err != nil {
		return err
	}
	if err := cs.RecvMsg(&resp); !errors.Is(err, io.EOF) {
		return fmt.Errorf("stream did not end with OK after the last acknowledgement: %v", err)
	}
	return nil
}
