package stefreceiver

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"

	"github.com/otlp-lite/otlp-lite/internal/pbappend"
)

// FuzzChunkBuffered holds chunkBuffered, the peek that lets a stream put
// frames that arrived together in one request, to its promise whatever
// the body's bytes: it never panics, never reads, and when it reports a
// chunk waiting, the messages up to one with is_end_of_chunk are whole in
// the buffer: reading them does not reach the end of what arrived (the
// body here ends there, where a connection would wait for its client).
func FuzzChunkBuffered(f *testing.F) {
	msg := func(stef []byte, end bool) []byte {
		var m []byte
		m = pbappend.BytesField(m, 2, stef)
		if end {
			m = pbappend.VarintField(m, 3, 1)
		}
		var hdr [5]byte
		binary.BigEndian.PutUint32(hdr[1:], uint32(len(m)))
		return append(hdr[:], m...)
	}
	f.Add(msg([]byte("frame"), true))
	f.Add(append(msg([]byte("part"), false), msg([]byte("rest"), true)...))
	f.Add(msg([]byte("cut"), true)[:7])
	f.Add(append(msg([]byte("a"), true), msg([]byte("b"), false)...))
	// A chunk's first message whole, the one that ends it cut: not
	// waiting (a peek that stopped at the first whole message said it
	// was, and the stream then waited for its client without idle).
	f.Add(append(msg([]byte("part"), false), msg([]byte("rest"), true)[:7]...))
	// The message that ends it not sent yet.
	f.Add(msg([]byte("part"), false))
	f.Add([]byte{1, 0, 0, 0, 2, 0x18, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		b := &bufferedBody{ReadCloser: io.NopCloser(bytes.NewReader(data))}
		b.buffer()
		b.br.Peek(min(len(data), bodyBuffer)) // what a read of the connection buffered
		buffered := b.br.Buffered()
		if !b.chunkBuffered() {
			return
		}
		if b.br.Buffered() != buffered {
			t.Fatalf("chunkBuffered read: %d bytes buffered, then %d", buffered, b.br.Buffered())
		}
		for {
			var hdr [5]byte
			if _, err := io.ReadFull(b, hdr[:]); err != nil {
				t.Fatalf("a chunk reported waiting, its prefix: %v", err)
			}
			body := make([]byte, binary.BigEndian.Uint32(hdr[1:]))
			if _, err := io.ReadFull(b, body); err != nil {
				t.Fatalf("a chunk reported waiting, its message of %d bytes: %v", len(body), err)
			}
			var m clientMessage
			if err := parseClientMessage(body, &m); err != nil || m.first || hdr[0] != 0 {
				t.Fatalf("a chunk reported waiting holds a message that ends the stream (%v)", err)
			}
			if m.endOfChunk {
				return
			}
		}
	})
}
