package compression

import (
	"bytes"
	"errors"
	"testing"
)

// TestStreamReserveDeclared: an honest message is charged to reserve once,
// before any output, for its declared length (and growthRoom more when a
// buffer is allocated for it), and nothing to grow, cold or into a
// buffer with room.
func TestStreamReserveDeclared(t *testing.T) {
	enc, _ := NewStreamEncoder(DefaultStreamWindow)
	defer enc.Close()
	dec, _ := NewStreamDecoder(DefaultStreamWindow)
	defer dec.Close()
	var out []byte
	for i, p := range streamMessages(4) {
		w, err := enc.AppendMessage(nil, p)
		if err != nil {
			t.Fatal(err)
		}
		var reserved []int
		grown := 0
		dst := out[:0]
		if i%2 == 0 {
			dst = nil // cold: a buffer is allocated
		} else {
			dst = make([]byte, 0, 2*len(p)) // room for it
		}
		out, err = dec.DecodeMessageReserve(dst, w, 1<<20,
			func(n int) error { reserved = append(reserved, n); return nil },
			func(n int) error { grown += n; return nil })
		if err != nil || !bytes.Equal(out, p) {
			t.Fatalf("message %d: %v", i, err)
		}
		want := len(p)
		if dst == nil {
			want += len(p) / growthRoom
		}
		if len(reserved) != 1 || reserved[0] != want || grown != 0 {
			t.Fatalf("message %d of %d bytes: reserved %v, grown %d; want %d reserved once, nothing grown", i, len(p), reserved, grown, want)
		}
	}
}

// TestStreamReserveLyingLength: a message declaring far more than
// maxFirstRatio times its bytes has only that reserved; what its output
// would need beyond goes to grow (here refused at once), so a hostile
// stream cannot make its reader wait for what its bytes cannot carry.
func TestStreamReserveLyingLength(t *testing.T) {
	lying, body := lyingMessage(t, 8<<20)
	dec, _ := NewStreamDecoder(DefaultStreamWindow)
	defer dec.Close()
	reserved := 0
	refused := errors.New("no room")
	_, err := dec.DecodeMessageReserve(nil, lying, 8<<20,
		func(n int) error { reserved += n; return nil },
		func(int) error { return refused })
	if bound := max(streamChunk, maxFirstRatio*len(body)); reserved == 0 || reserved > bound {
		t.Fatalf("a %d-byte message declaring 8 MiB reserved %d, want at most %d", len(body), reserved, bound)
	}
	if !errors.Is(err, ErrStreamCorrupt) && !errors.Is(err, refused) {
		t.Fatalf("got %v", err)
	}
}

// TestStreamReserveRefused: reserve's error is returned as it is, before
// any decoding, and the decoder cannot go on.
func TestStreamReserveRefused(t *testing.T) {
	enc, _ := NewStreamEncoder(DefaultStreamWindow)
	defer enc.Close()
	w, _ := enc.AppendMessage(nil, streamMessages(1)[0])
	dec, _ := NewStreamDecoder(DefaultStreamWindow)
	defer dec.Close()
	refused := errors.New("waited too long")
	out, err := dec.DecodeMessageReserve(nil, w, 1<<20, func(int) error { return refused }, nil)
	if !errors.Is(err, refused) || len(out) != 0 {
		t.Fatalf("got %d bytes, %v; want nothing and the reserve's error", len(out), err)
	}
	if _, err := dec.DecodeMessageReserve(nil, w, 1<<20, nil, nil); !errors.Is(err, refused) {
		t.Fatalf("decoder went on after a refused reserve: %v", err)
	}
}
