package handler

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"os"
	"testing"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
	"github.com/otlp-lite/otlp-lite/storage/discard"
)

// nopResponseWriter is a reusable in-memory ResponseWriter, so the
// benchmark measures the handler, not a network stack.
type nopResponseWriter struct {
	h      http.Header
	status int
	n      int
}

func (w *nopResponseWriter) Header() http.Header         { return w.h }
func (w *nopResponseWriter) WriteHeader(status int)      { w.status = status }
func (w *nopResponseWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }
func (w *nopResponseWriter) Flush()                      {}

func loadPayload(b *testing.B, name string) []byte {
	data, err := os.ReadFile("../testdata/otlp/" + name)
	if err != nil {
		b.Skipf("payload: %v", err)
	}
	return data
}

// benchmarkExport runs full requests through ServeHTTP with a discard sink
// and reports ns and allocations per span. Compare with
// BenchmarkCheckTracesFloor: the difference is everything but decoding.
func benchmarkExport(b *testing.B, path, contentType string, codec compression.Codec, payload []byte) {
	benchmarkExportReads(b, path, contentType, codec, payload, 0)
}

// frameReader returns at most frame bytes per Read, as net/http's HTTP/2
// body does per DATA frame, so per-read costs (admission charges) show.
type frameReader struct {
	r     *bytes.Reader
	frame int
}

func (f *frameReader) Read(p []byte) (int, error) {
	if f.frame > 0 && len(p) > f.frame {
		p = p[:f.frame]
	}
	return f.r.Read(p)
}

// benchmarkExportReads is benchmarkExport with the body read readSize
// bytes at a time (0: at once).
func benchmarkExportReads(b *testing.B, path, contentType string, codec compression.Codec, payload []byte, readSize int) {
	benchmarkExportWith(b, Config{}, nil, path, contentType, codec, payload, readSize)
}

// benchmarkExportWith is benchmarkExportReads with cfg (Logger is set
// here, and Sink, to a discard sink, unless Sink or Items is) and extra
// request headers hdr.
func benchmarkExportWith(b *testing.B, cfg Config, hdr map[string]string, path, contentType string, codec compression.Codec, payload []byte, readSize int) {
	res, err := otlpdecode.CheckTraces(payload, nil)
	if err != nil {
		b.Fatal(err)
	}
	body := payload
	if codec != compression.Identity {
		body, _ = compression.Compress(nil, codec, payload)
	}
	if contentType == "application/grpc" {
		body = frameCompressed(body, codec != compression.Identity)
	}
	if cfg.Sink == nil && cfg.Items == nil {
		cfg.Sink = &discard.Sink{}
	}
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	h := New(cfg)
	rd := bytes.NewReader(body)
	req, _ := http.NewRequest("POST", "http://x"+path, io.NopCloser(&frameReader{rd, readSize}))
	req.ProtoMajor = 2
	req.Header.Set("Content-Type", contentType)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if codec != compression.Identity {
		req.Header.Set("Grpc-Encoding", codec.String())
		req.Header.Set("Content-Encoding", codec.String())
	}
	w := &nopResponseWriter{h: http.Header{}}
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		rd.Reset(body)
		clear(w.h)
		h.ServeHTTP(w, req)
		if w.status != 0 && w.status != 200 {
			b.Fatalf("status %d", w.status)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*res.Items), "ns/span")
}

func frameCompressed(msg []byte, compressed bool) []byte {
	f := frame(msg)
	if compressed {
		f[0] = 1
	}
	return f
}

// 16 KiB reads: HTTP/2's default frame size, what most clients send.
func BenchmarkExportGRPC500x10Frames16K(b *testing.B) {
	benchmarkExportReads(b, traceExport, "application/grpc", compression.Identity, loadPayload(b, "traces_500x10.pb"), 16<<10)
}

func BenchmarkExportGRPC500x10(b *testing.B) {
	benchmarkExport(b, traceExport, "application/grpc", compression.Identity, loadPayload(b, "traces_500x10.pb"))
}

func BenchmarkExportGRPC500x10Gzip(b *testing.B) {
	benchmarkExport(b, traceExport, "application/grpc", compression.Gzip, loadPayload(b, "traces_500x10.pb"))
}

func BenchmarkExportHTTPProtobuf500x10(b *testing.B) {
	benchmarkExport(b, "/v1/traces", "application/x-protobuf", compression.Identity, loadPayload(b, "traces_500x10.pb"))
}

func BenchmarkCheckTracesFloor(b *testing.B) {
	payload := loadPayload(b, "traces_500x10.pb")
	res, _ := otlpdecode.CheckTraces(payload, nil)
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for range b.N {
		otlpdecode.CheckTraces(payload, nil)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*res.Items), "ns/span")
}
