package main

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// exportRequest is what the three pdata Export*Request types share.
type exportRequest interface {
	UnmarshalProto([]byte) error
	UnmarshalJSON([]byte) error
}

// exportResponse is what the three pdata Export*Response types share.
type exportResponse interface {
	MarshalProto() ([]byte, error)
	MarshalJSON() ([]byte, error)
}

// newHTTPHandler serves the OTLP/HTTP paths the way the Collector's
// otlpreceiver does (receiver/otlpreceiver/otlphttp.go): POST only, the
// body decompressed and read whole, unmarshalled into pdata, counted, and
// answered with an empty Export*Response in the request's content type.
func newHTTPHandler(c *counters) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST /v1/traces", exportHandler(func() (exportRequest, func(), exportResponse) {
		req := ptraceotlp.NewExportRequest()
		return req, func() { c.spans.Add(int64(req.Traces().SpanCount())) }, ptraceotlp.NewExportResponse()
	}))
	mux.Handle("POST /v1/metrics", exportHandler(func() (exportRequest, func(), exportResponse) {
		req := pmetricotlp.NewExportRequest()
		return req, func() { c.points.Add(int64(req.Metrics().DataPointCount())) }, pmetricotlp.NewExportResponse()
	}))
	mux.Handle("POST /v1/logs", exportHandler(func() (exportRequest, func(), exportResponse) {
		req := plogotlp.NewExportRequest()
		return req, func() { c.records.Add(int64(req.Logs().LogRecordCount())) }, plogotlp.NewExportResponse()
	}))
	return mux
}

func exportHandler(newReq func() (exportRequest, func(), exportResponse)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		isJSON := ct == "application/json"
		if !isJSON && ct != "application/x-protobuf" {
			http.Error(w, fmt.Sprintf("unsupported media type %q", ct), http.StatusUnsupportedMediaType)
			return
		}
		body, err := readBody(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		req, consume, resp := newReq()
		if isJSON {
			err = req.UnmarshalJSON(body)
		} else {
			err = req.UnmarshalProto(body)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		consume()
		var out []byte
		if isJSON {
			out, err = resp.MarshalJSON()
		} else {
			out, err = resp.MarshalProto()
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(out)
	}
}

var (
	gzipReaders sync.Pool // *gzip.Reader
	zstdReaders sync.Pool // *zstd.Decoder
)

// readBody returns the whole request body, decompressed per
// Content-Encoding as confighttp's decompressor does (klauspost gzip and
// zstd; here with pooled readers, which only flatters the baseline).
func readBody(r *http.Request) ([]byte, error) {
	defer r.Body.Close()
	switch enc := r.Header.Get("Content-Encoding"); enc {
	case "", "identity":
		return io.ReadAll(r.Body)
	case "gzip":
		zr, _ := gzipReaders.Get().(*gzip.Reader)
		var err error
		if zr == nil {
			zr, err = gzip.NewReader(r.Body)
		} else {
			err = zr.Reset(r.Body)
		}
		if err != nil {
			return nil, err
		}
		defer gzipReaders.Put(zr)
		return io.ReadAll(zr)
	case "zstd":
		zr, _ := zstdReaders.Get().(*zstd.Decoder)
		var err error
		if zr == nil {
			zr, err = zstd.NewReader(r.Body, zstd.WithDecoderConcurrency(1))
		} else {
			err = zr.Reset(r.Body)
		}
		if err != nil {
			return nil, err
		}
		defer func() { _ = zr.Reset(nil); zstdReaders.Put(zr) }()
		return io.ReadAll(zr)
	default:
		return nil, fmt.Errorf("unsupported Content-Encoding %q", enc)
	}
}
