package handler

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"testing"

	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
	"github.com/otlp-lite/otlp-lite/storage/discard"
)

// BenchmarkExportGRPC500x10Keyed is BenchmarkExportGRPC500x10 with an
// idempotency key on every request, a new one each time (the window
// fingerprints the body, holds the key in flight, settles it and evicts
// past its bound): the difference is a key's cost per span.
func BenchmarkExportGRPC500x10Keyed(b *testing.B) {
	payload := loadPayload(b, "traces_500x10.pb")
	res, err := otlpdecode.CheckTraces(payload, nil)
	if err != nil {
		b.Fatal(err)
	}
	body := frame(payload)
	h := New(Config{Sink: &discard.Sink{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	rd := bytes.NewReader(body)
	req, _ := http.NewRequest("POST", "http://x"+traceExport, io.NopCloser(rd))
	req.ProtoMajor = 2
	req.Header.Set("Content-Type", "application/grpc")
	w := &nopResponseWriter{h: http.Header{}}
	key := []byte("bench-client/")
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		rd.Reset(body)
		clear(w.h)
		req.Header[otlp.IdempotencyKeyHeader] = []string{string(strconv.AppendInt(key, int64(i), 10))}
		h.ServeHTTP(w, req)
		if w.status != 0 && w.status != 200 {
			b.Fatalf("status %d", w.status)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*res.Items), "ns/span")
}
