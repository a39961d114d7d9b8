package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
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

// TestLargeAndConcurrent pushes HTTP/2 flow control and stream handling:
// requests of many megabytes (far beyond the 64 KiB initial window, under
// the default 64 MiB limit), plain and gzip, and 64 concurrent streams on
// one connection. Every request must be acknowledged and stored unchanged.
func TestLargeAndConcurrent(t *testing.T) {
	dataDir := t.TempDir()
	srv := startServer(t, dataDir)
	capt := newCapture()
	client := coltracepb.NewTraceServiceClient(srv.dial(t, capt.dialOptions()...))

	pad := make([]byte, 24<<20)
	for i := range pad {
		pad[i] = byte(i*7919 + i>>11)
	}
	for i, opts := range [][]grpc.CallOption{nil, {grpc.UseCompressor("gzip")}, {grpc.UseCompressor("zstd")}} {
		req := traceRequest(testSpan(fmt.Sprintf("large-%d", i), byte(i), kv("pad", bytesV(pad[i:]))))
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		_, err := client.Export(ctx, req, opts...)
		cancel()
		if err != nil {
			t.Errorf("Export of %d MiB (%v): %v", proto.Size(req)>>20, opts, err)
		}
	}

	var wg sync.WaitGroup
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				req := crashRequest(fmt.Sprintf("concurrent-%d-%d", g, i), g*10+i)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				_, err := client.Export(ctx, req)
				cancel()
				if err != nil {
					t.Errorf("concurrent Export %d/%d: %v", g, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	srv.stop()
	stored := scanStore(t, dataDir, storage.Traces, func() *coltracepb.ExportTraceServiceRequest { return new(coltracepb.ExportTraceServiceRequest) })
	matchMessages(t, "large and concurrent traces", capt.traces, stored)
}

// TestShutdownEndsWatch: a health Watch stream is open-ended, so SIGTERM
// must end it (ideally after sending NOT_SERVING, as grpc-go's
// health.Server.Shutdown does) instead of holding the graceful shutdown
// until its timeout.
func TestShutdownEndsWatch(t *testing.T) {
	srv := startServer(t, t.TempDir())
	hc := healthpb.NewHealthClient(srv.dial(t))
	ctx, cancel := context.WithTimeout(context.Background(), 2*stopTimeout)
	defer cancel()
	stream, err := hc.Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	if resp, err := stream.Recv(); err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Watch first message = %v, %v; want SERVING", resp, err)
	}
	start := time.Now()
	srv.stop() // fails the test if the server is not gone within stopTimeout
	var statuses []healthpb.HealthCheckResponse_ServingStatus
	for {
		resp, err := stream.Recv()
		if err != nil {
			t.Logf("Watch ended %s after SIGTERM with %v, having sent %v", time.Since(start).Round(time.Millisecond), err, statuses)
			break
		}
		statuses = append(statuses, resp.GetStatus())
	}
	if elapsed := time.Since(start); elapsed > stopTimeout {
		t.Errorf("the Watch stream outlived the server by %s", elapsed)
	}
}

// TestCanceledUploads cancels large Exports at varying points of their
// upload (RST_STREAM from grpc-go): the server must keep serving, never
// store a truncated request, and store every request it acknowledged.
func TestCanceledUploads(t *testing.T) {
	dataDir := t.TempDir()
	srv := startServer(t, dataDir)
	client := coltracepb.NewTraceServiceClient(srv.dial(t))
	pad := make([]byte, 4<<20)
	for i := range pad {
		pad[i] = byte(i*7919 + i>>11)
	}
	sent := map[string]*coltracepb.ExportTraceServiceRequest{}
	acked := map[string]bool{}
	canceled := 0
	for i := 0; i < 20; i++ {
		id := fmt.Sprintf("cancel-%d", i)
		req := traceRequest(testSpan(id, byte(i), kv(crashIDKey, strV(id)), kv("pad", bytesV(pad[i:]))))
		sent[id] = req
		ctx, cancel := context.WithCancel(context.Background())
		timer := time.AfterFunc(time.Duration(i)*3*time.Millisecond, cancel)
		_, err := client.Export(ctx, req)
		timer.Stop()
		cancel()
		switch status.Code(err) {
		case codes.OK:
			acked[id] = true
		case codes.Canceled:
			canceled++
		default:
			t.Errorf("Export %s: %v, want OK or Canceled", id, err)
		}
	}
	t.Logf("%d of 20 uploads canceled", canceled)
	if _, err := client.Export(callCtx(t), traceRequest(testSpan("after-cancels", 1, kv(crashIDKey, strV("after-cancels"))))); err != nil {
		t.Errorf("Export after canceled uploads: %v", err)
	}
	srv.stop()
	for _, req := range scanStore(t, dataDir, storage.Traces, func() *coltracepb.ExportTraceServiceRequest { return new(coltracepb.ExportTraceServiceRequest) }) {
		id := crashID(req)
		if id == "after-cancels" {
			continue
		}
		if want, ok := sent[id]; !ok || !proto.Equal(want, req) {
			t.Errorf("stored request %q is not one that was sent (truncated?)", id)
		}
		delete(acked, id)
	}
	for id := range acked {
		t.Errorf("acknowledged request %q is not stored", id)
	}
}

// TestExportWhileServing reads a live store, as an operator would with
// `otlp-lite export` or a program with disk.Scan, while clients write to
// it: a record being appended must be skipped cleanly, never reported as
// an error or printed half, and the count of complete records only grows.
func TestExportWhileServing(t *testing.T) {
	dataDir := t.TempDir()
	srv := startServer(t, dataDir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for c := 0; c < crashClients; c++ {
		client := coltracepb.NewTraceServiceClient(srv.dial(t))
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Small requests, paced, so the store stays small enough
			// for every read to take milliseconds even under -race.
			for seq := 0; ctx.Err() == nil && seq < 2000; seq++ {
				id := fmt.Sprintf("live-%d-%d", c, seq)
				_, _ = client.Export(ctx, traceRequest(testSpan(id, byte(seq), kv(crashIDKey, strV(id)))))
				time.Sleep(time.Millisecond)
			}
		}()
	}
	lastLines, lastRecords := 0, 0
	for i := 0; i < 5; i++ {
		time.Sleep(100 * time.Millisecond)
		cctx, ccancel := context.WithTimeout(context.Background(), 20*time.Second)
		out, err := exec.CommandContext(cctx, serverBin, "export", "-data-dir", dataDir, "-signal", "traces", "-format", "json").Output()
		ccancel()
		if err != nil {
			t.Errorf("export #%d of a live store: %v", i, err)
			continue
		}
		lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		for j, l := range lines {
			if !json.Valid([]byte(l)) {
				t.Errorf("export #%d line %d of a live store is not JSON: %.100s…", i, j+1, l)
				break
			}
		}
		if len(lines) < lastLines {
			t.Errorf("export #%d printed %d records, fewer than the %d before", i, len(lines), lastLines)
		}
		lastLines = len(lines)

		records := 0
		err = disk.Scan(dataDir, storage.Traces, func(r disk.Record) error {
			records++
			return proto.Unmarshal(r.Data, new(coltracepb.ExportTraceServiceRequest))
		})
		if err != nil {
			t.Errorf("disk.Scan #%d of a live store, after %d records: %v", i, records, err)
		}
		if records < lastRecords {
			t.Errorf("disk.Scan #%d found %d records, fewer than the %d before", i, records, lastRecords)
		}
		lastRecords = records
	}
	cancel()
	wg.Wait()
	srv.stop()
	if lastRecords == 0 {
		t.Errorf("no record was written while reading")
	}
}
