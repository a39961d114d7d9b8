package interop

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/otlp-lite/otlp-lite/storage"
)

// unsupportedCodec is a grpc-encoding the receiver does not implement.
const unsupportedCodec = "x-interop-unknown"

func init() {
	encoding.RegisterCompressor(compressor{name: unsupportedCodec,
		newWriter: func(w io.Writer) (io.WriteCloser, error) { return nopWriteCloser{w}, nil },
		newReader: func(r io.Reader) (io.Reader, error) { return r, nil },
	})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// rawCodec sends pre-encoded bytes as the request message, to put
// malformed protobuf on the wire through grpc-go.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) ([]byte, error) { return v.([]byte), nil }

func (rawCodec) Unmarshal(data []byte, v any) error {
	return proto.Unmarshal(data, v.(proto.Message))
}

// TestRefusals covers requests the receiver must refuse without storing
// anything, each answered with the status the specs name, on a server that
// keeps serving afterwards.
func TestRefusals(t *testing.T) {
	dataDir := t.TempDir()
	srv := startServer(t, dataDir)
	conn := srv.dial(t)
	client := coltracepb.NewTraceServiceClient(conn)
	const export = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"

	t.Run("UnsupportedEncoding", func(t *testing.T) {
		// grpc compression.md: a message compressed with an algorithm
		// the server does not support "will result in an UNIMPLEMENTED
		// error status", with grpc-accept-encoding listing what it accepts.
		var header, trailer metadata.MD
		_, err := client.Export(callCtx(t), traceRequest(testSpan("unsupported", 1)),
			grpc.UseCompressor(unsupportedCodec), grpc.Header(&header), grpc.Trailer(&trailer))
		if status.Code(err) != codes.Unimplemented {
			t.Errorf("Export with grpc-encoding %s: %v, want code Unimplemented", unsupportedCodec, err)
		}
		accept := strings.Join(append(header.Get("grpc-accept-encoding"), trailer.Get("grpc-accept-encoding")...), ",")
		for _, c := range []string{"gzip", "zstd", "snappy", "deflate"} {
			if !strings.Contains(accept, c) {
				t.Errorf("grpc-accept-encoding %q lacks %s", accept, c)
			}
		}
	})

	t.Run("MalformedProtobuf", func(t *testing.T) {
		// A length-delimited field 1 claiming more bytes than follow.
		for _, body := range [][]byte{{0x0a, 0x7f, 0x01}, {0xff, 0xff, 0xff, 0xff}, {0x0a, 0x02, 0x0a}} {
			err := conn.Invoke(callCtx(t), export, body, new(coltracepb.ExportTraceServiceResponse), grpc.ForceCodec(rawCodec{}))
			if status.Code(err) != codes.InvalidArgument {
				t.Errorf("Export of malformed protobuf %x: %v, want code InvalidArgument", body, err)
			}
		}
	})

	t.Run("AllSpansInvalid", func(t *testing.T) {
		a, b := testSpan("bad-a", 1), testSpan("bad-b", 2)
		a.TraceId = make([]byte, 15)
		b.SpanId = []byte{1}
		resp, err := client.Export(callCtx(t), traceRequest(a, b))
		if err != nil {
			t.Fatalf("Export of only invalid spans: %v, want OK with partial_success", err)
		}
		if ps := resp.GetPartialSuccess(); ps.GetRejectedSpans() != 2 || ps.GetErrorMessage() == "" {
			t.Errorf("partial_success = %v, want rejected_spans=2 and a message", ps)
		}
	})

	t.Run("TwoMessagesOnUnary", func(t *testing.T) {
		// A unary method takes exactly one request message
		// (PROTOCOL-HTTP2.md); a second one is a protocol violation.
		ctx := callCtx(t)
		stream, err := conn.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}, export)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			if err := stream.SendMsg(traceRequest(testSpan(fmt.Sprintf("twice-%d", i), byte(i)))); err != nil && err != io.EOF {
				t.Fatalf("SendMsg #%d: %v", i, err)
			}
		}
		_ = stream.CloseSend()
		err = stream.RecvMsg(new(coltracepb.ExportTraceServiceResponse))
		if err == nil {
			err = stream.RecvMsg(new(coltracepb.ExportTraceServiceResponse))
		}
		if code := status.Code(err); code == codes.OK {
			t.Errorf("two request messages on unary Export: answered OK, want an error status")
		} else {
			t.Logf("two request messages on unary Export: %v", err)
		}
	})

	if _, err := client.Export(callCtx(t), traceRequest(testSpan("still-serving", 9))); err != nil {
		t.Errorf("Export after the refusals: %v", err)
	}
	srv.stop()
	for _, req := range scanStore(t, dataDir, storage.Traces, func() *coltracepb.ExportTraceServiceRequest { return new(coltracepb.ExportTraceServiceRequest) }) {
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					switch s.GetName() {
					case "still-serving", "twice-0", "twice-1":
					default:
						t.Errorf("refused span %q was stored", s.GetName())
					}
				}
			}
		}
	}
}

// TestGracefulShutdownUnderLoad sends SIGTERM while clients are exporting:
// the server must finish in-flight requests, exit 0 within stopTimeout, and
// every request it acknowledged, before or during shutdown, must be stored
// (storage.Sink: Close flushes).
func TestGracefulShutdownUnderLoad(t *testing.T) {
	dataDir := t.TempDir()
	srv := startServer(t, dataDir)
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		sent     = map[string]*coltracepb.ExportTraceServiceRequest{}
		acked    = map[string]bool{}
		statuses = map[codes.Code]int{}
	)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for c := 0; c < crashClients; c++ {
		client := coltracepb.NewTraceServiceClient(srv.dial(t))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := 0; ctx.Err() == nil; seq++ {
				id := fmt.Sprintf("graceful-c%d-%d", c, seq)
				req := crashRequest(id, seq)
				cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
				_, err := client.Export(cctx, req)
				ccancel()
				mu.Lock()
				sent[id] = req
				statuses[status.Code(err)]++
				if err == nil {
					acked[id] = true
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-srv.done:
	case <-time.After(stopTimeout):
		t.Fatalf("otlp-lite did not exit within %s of SIGTERM under load", stopTimeout)
	}
	if srv.waitErr != nil {
		t.Errorf("otlp-lite exited with %v after SIGTERM under load, want status 0", srv.waitErr)
	}
	cancel()
	wg.Wait()
	t.Logf("exited %s after SIGTERM; %d requests acknowledged; status codes seen: %v", time.Since(start).Round(time.Millisecond), len(acked), statuses)
	if len(acked) == 0 {
		t.Fatalf("no request was acknowledged in 500 ms")
	}

	seen := map[string]bool{}
	for _, req := range scanStore(t, dataDir, storage.Traces, func() *coltracepb.ExportTraceServiceRequest { return new(coltracepb.ExportTraceServiceRequest) }) {
		id := crashID(req)
		if want, ok := sent[id]; !ok || !proto.Equal(want, req) {
			t.Errorf("stored request %q was not sent like this", id)
		}
		seen[id] = true
	}
	lost := 0
	for id := range acked {
		if !seen[id] {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged requests are not stored after a graceful shutdown", lost, len(acked))
	}
}
