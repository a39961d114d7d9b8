package interop

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"golang.org/x/net/http2"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/otlp-lite/otlp-lite/storage"
)

// grpcFrame is a gRPC Length-Prefixed-Message (PROTOCOL-HTTP2.md):
// compressed flag, 4-byte big-endian length, message.
func grpcFrame(compressed bool, msg []byte) []byte {
	b := make([]byte, 5, 5+len(msg))
	if compressed {
		b[0] = 1
	}
	binary.BigEndian.PutUint32(b[1:], uint32(len(msg)))
	return append(b, msg...)
}

func gzipBytes(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestWireEdgeCases speaks gRPC's HTTP/2 mapping by hand (h2c, prior
// knowledge) for cases grpc-go never produces but other clients may:
// the per-message compressed flag disagreeing with grpc-encoding, frames cut
// short, a second message, and non-gRPC content types.
func TestWireEdgeCases(t *testing.T) {
	dataDir := t.TempDir()
	srv := startServer(t, dataDir)
	tr := &http2.Transport{
		AllowHTTP: true,
		DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}
	defer tr.CloseIdleConnections()
	msg := func(name string) []byte {
		b, err := proto.Marshal(traceRequest(testSpan(name, 1)))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	const path = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
	for _, c := range []struct {
		name        string
		contentType string
		encoding    string
		body        []byte
		wantHTTP    int        // HTTP status, for non-gRPC refusals
		wantCode    codes.Code // grpc-status otherwise
		stored      string     // span name that must be stored, or ""
	}{
		// "the compressed flag ... 0 means no encoding was applied"; a
		// message may be sent uncompressed even when grpc-encoding is set.
		{"uncompressed message under grpc-encoding gzip", "application/grpc", "gzip", grpcFrame(false, msg("flag0-gzip")), 200, codes.OK, "flag0-gzip"},
		{"gzip message", "application/grpc+proto", "gzip", grpcFrame(true, gzipBytes(t, msg("flag1-gzip"))), 200, codes.OK, "flag1-gzip"},
		// compression.md: compressed flag set without an encoding is a
		// protocol error, INTERNAL.
		{"compressed flag without grpc-encoding", "application/grpc", "", grpcFrame(true, msg("flag1-identity")), 200, codes.Internal, ""},
		{"frame shorter than its length prefix", "application/grpc", "", grpcFrame(false, msg("short"))[:20], 200, codes.Internal, ""},
		{"length prefix cut", "application/grpc", "", []byte{0, 0, 0}, 200, codes.Internal, ""},
		{"gzip flag with corrupt gzip", "application/grpc", "gzip", grpcFrame(true, []byte("not gzip at all")), 200, codes.Internal, ""},
		// PROTOCOL-HTTP2.md: a content-type that is not application/grpc*
		// gets HTTP 415.
		{"content-type text/plain", "text/plain", "", grpcFrame(false, msg("text")), 415, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+srv.addr+path, bytes.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", c.contentType)
			req.Header.Set("TE", "trailers")
			if c.encoding != "" {
				req.Header.Set("grpc-encoding", c.encoding)
			}
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatalf("round trip: %v", err)
			}
			defer resp.Body.Close()
			_, _ = io.Copy(io.Discard, resp.Body) // trailers arrive after the body
			if resp.StatusCode != c.wantHTTP {
				t.Fatalf("HTTP status %d, want %d", resp.StatusCode, c.wantHTTP)
			}
			if c.wantHTTP != 200 {
				return
			}
			st := resp.Trailer.Get("grpc-status")
			if st == "" {
				st = resp.Header.Get("grpc-status") // trailers-only response
			}
			code, err := strconv.Atoi(st)
			if err != nil {
				t.Fatalf("no grpc-status in trailers %v or headers %v", resp.Trailer, resp.Header)
			}
			if codes.Code(code) != c.wantCode {
				t.Errorf("grpc-status %v (%s), want %v", codes.Code(code), resp.Trailer.Get("grpc-message")+resp.Header.Get("grpc-message"), c.wantCode)
			}
		})
	}
	tr.CloseIdleConnections()
	srv.stop()
	var names []string
	for _, req := range scanStore(t, dataDir, storage.Traces, func() *coltracepb.ExportTraceServiceRequest { return new(coltracepb.ExportTraceServiceRequest) }) {
		names = append(names, req.GetResourceSpans()[0].GetScopeSpans()[0].GetSpans()[0].GetName())
	}
	if len(names) != 2 || names[0] != "flag0-gzip" || names[1] != "flag1-gzip" {
		t.Errorf("stored spans %q, want [flag0-gzip flag1-gzip]", names)
	}
}
