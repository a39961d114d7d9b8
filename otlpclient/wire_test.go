package otlpclient

import (
	"encoding/binary"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/VictoriaMetrics/easyproto"
)

// wireLog wraps a handler and records, per stream call, the request ids the
// client put on the wire, by parsing the gRPC frames of the request body as
// the server reads them.
type wireLog struct {
	h       http.Handler
	mu      sync.Mutex
	streams [][]uint64
}

func (w *wireLog) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/otlplite.v1.StreamExporter/") {
		w.mu.Lock()
		idx := len(w.streams)
		w.streams = append(w.streams, nil)
		w.mu.Unlock()
		r.Body = &frameSpy{ReadCloser: r.Body, record: func(id uint64) {
			w.mu.Lock()
			w.streams[idx] = append(w.streams[idx], id)
			w.mu.Unlock()
		}}
	}
	w.h.ServeHTTP(rw, r)
}

func (w *wireLog) snapshot() [][]uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([][]uint64, len(w.streams))
	for i, s := range w.streams {
		out[i] = append([]uint64(nil), s...)
	}
	return out
}

// frameSpy passes reads through and parses the uncompressed frames it sees.
type frameSpy struct {
	io.ReadCloser
	buf    []byte
	record func(id uint64)
}

func (f *frameSpy) Read(p []byte) (int, error) {
	n, err := f.ReadCloser.Read(p)
	f.buf = append(f.buf, p[:n]...)
	for len(f.buf) >= 5 {
		size := int(binary.BigEndian.Uint32(f.buf[1:5]))
		if len(f.buf) < 5+size {
			break
		}
		id, _, _ := easyproto.GetUint64(f.buf[5:5+size], 1)
		f.record(id)
		f.buf = f.buf[5+size:]
	}
	return n, err
}
