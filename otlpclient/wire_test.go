package otlpclient

import (
	"encoding/binary"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/VictoriaMetrics/easyproto"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpcolumns"
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
		spy := &frameSpy{ReadCloser: r.Body, record: func(id uint64) {
			w.mu.Lock()
			w.streams[idx] = append(w.streams[idx], id)
			w.mu.Unlock()
		}}
		// The handler accepts columns whenever they are offered (and
		// its budget has room, as in these tests): the stream's zstd
		// messages then carry the columnar transform of the envelope.
		if otlp.OffersStreamColumns(r.Header.Get(otlp.StreamCompressionHeader)) {
			spy.cols = otlpcolumns.NewDecoder(otlpcolumns.Traces)
		}
		r.Body = spy
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

// frameSpy passes reads through and parses the uncompressed frames it sees,
// and the stream messages of stateful compression, which it decodes with a
// decoder of its own.
type frameSpy struct {
	io.ReadCloser
	buf    []byte
	record func(id uint64)
	dec    *compression.StreamDecoder
	cols   *otlpcolumns.Decoder // the stream's columns, when offered
}

func (f *frameSpy) Read(p []byte) (int, error) {
	n, err := f.ReadCloser.Read(p)
	f.buf = append(f.buf, p[:n]...)
	for len(f.buf) >= 5 {
		size := int(binary.BigEndian.Uint32(f.buf[1:5]))
		if len(f.buf) < 5+size {
			break
		}
		msg := f.buf[5 : 5+size]
		if compression.IsStreamMessage(msg) {
			if f.dec == nil {
				f.dec, _ = compression.NewStreamDecoder(compression.MaxStreamWindow)
			}
			msg, _ = f.dec.DecodeMessage(nil, msg, 64<<20, nil)
			if f.cols != nil {
				msg, _ = f.cols.Decode(nil, msg, 64<<20, nil)
			}
		}
		id, _, _ := easyproto.GetUint64(msg, 1)
		f.record(id)
		f.buf = f.buf[5+size:]
	}
	return n, err
}
