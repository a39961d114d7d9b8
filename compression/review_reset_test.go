package compression

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// The review of streamspares and streamalloc (session 13): a reset
// decoder, after any stream a client can send, decodes the next stream as
// a new decoder does, and holds no more than StreamDecoderCost while it
// waits as a spare.

// frameMessage wraps a whole zstd frame as a stream message declaring n
// bytes: what a hostile client can send in place of the encoder's
// streaming frame (a single-segment frame, its content size declared, or
// several frames in a row).
func frameMessage(z []byte, n int) []byte {
	return append(binary.AppendUvarint([]byte{streamMarker}, uint64(n)), z...)
}

// oneFrame is the stream message of plain compressed alone by EncodeAll
// (rawFrame): a single-segment frame whose window is its content size.
func oneFrame(t testing.TB, plain []byte, opts ...zstd.EOption) []byte {
	return frameMessage(rawFrame(t, plain, opts...), len(plain))
}

// rawFrame is plain compressed alone by EncodeAll.
func rawFrame(t testing.TB, plain []byte, opts ...zstd.EOption) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll(plain, nil)
}

// noisy is n bytes that compress to about half: a decoder's history and
// block buffers fill with them.
func noisy(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + r.IntN(16))
	}
	return b
}

// hostileStreams are streams a client may send before it ends its stream
// (each to its end or its first error), whose decoder is then reset and
// kept as a spare.
func hostileStreams(t testing.TB) map[string][][]byte {
	t.Helper()
	big := noisy(DefaultStreamWindow, 1)
	honest := encodeStream(t, streamMessages(80)) // past the window
	twoFrames := frameMessage(append(rawFrame(t, big[:300<<10]), rawFrame(t, big[300<<10:700<<10])...), 700<<10)
	var rough [][]byte // ids and numbers: what compresses to half
	for i := range 12 {
		rough = append(rough, noisy(100<<10, uint64(10+i)))
	}
	return map[string][][]byte{
		"honest, past its window":                honest,
		"honest, of bytes that compress little":  encodeStream(t, rough),
		"single-segment frame of the window":     {oneFrame(t, big)},
		"single-segment frames, then streaming":  append([][]byte{oneFrame(t, big[:512<<10]), oneFrame(t, big[512<<10:])}, honest[:3]...),
		"streaming, then a single-segment frame": append(append([][]byte(nil), honest[:40]...), oneFrame(t, big)),
		"a frame with a checksum and no size":    {oneFrame(t, big[:200<<10], zstd.WithEncoderCRC(true), zstd.WithSingleSegment(false))},
		"two frames in one message":              {twoFrames},
		"a window over the negotiated":           {oneFrame(t, noisy(2*DefaultStreamWindow, 2), zstd.WithWindowSize(2*DefaultStreamWindow), zstd.WithSingleSegment(false))},
		"declared over the limit":                {frameMessage([]byte{0x28, 0xb5, 0x2f, 0xfd}, 8<<20)},
		"cut in the middle of a block":           {honest[0][:len(honest[0])/2]},
		"a message that declares less":           {frameMessage(oneFrame(t, big[:64<<10])[4:], 1000)},
	}
}

// traceStream is what a decoder made of a stream: each message's output
// (hashed by its bytes), charges and error, to the first error.
func traceStream(dec *StreamDecoder, wire [][]byte, limit int) []string {
	var trace []string
	for _, w := range wire {
		var charges []int
		out, err := dec.DecodeMessage(make([]byte, 0, 16), w, limit, func(n int) error { charges = append(charges, n); return nil })
		trace = append(trace, fmt.Sprintf("%d %x %v %v", len(out), out[:min(len(out), 64)], charges, err))
		if err != nil {
			break
		}
	}
	return trace
}

// TestReviewResetAfterHostileStreams: whatever stream a client sent on a
// decoder (single-segment frames, several frames in a message, checksums,
// a window over the negotiated one, a message cut short, over the limit),
// the decoder, reset, decodes the next client's stream (honest, or the
// hostile ones) as a new decoder does: output, charges and error, message
// by message.
func TestReviewResetAfterHostileStreams(t *testing.T) {
	streams := hostileStreams(t)
	next := map[string][][]byte{"honest": encodeStream(t, streamMessages(6))}
	for name, s := range streams {
		next[name] = s
	}
	for prevName, prev := range streams {
		for nextName, n := range next {
			fresh, _ := NewStreamDecoder(DefaultStreamWindow)
			want := traceStream(fresh, n, 4<<20)
			fresh.Close()
			dec, _ := NewStreamDecoder(DefaultStreamWindow)
			traceStream(dec, prev, 4<<20)
			if err := dec.Reset(); err != nil {
				t.Fatalf("after %q: Reset: %v", prevName, err)
			}
			got := traceStream(dec, n, 4<<20)
			dec.Close()
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%q after %q on a reset decoder:\n%.400v\na new decoder:\n%.400v", nextName, prevName, got, want)
			}
		}
	}
}

// TestReviewResetRepeatTables: a next stream's first message that is a
// frame header and then a block of the last stream that reuses its
// entropy tables (treeless literals, repeated FSE tables) or its repeat
// offsets, with none of its history bytes, is refused as on a new decoder,
// error for error: Reset forgets the tables, not only the history.
func TestReviewResetRepeatTables(t *testing.T) {
	// Messages that differ byte by byte (no long matches into the
	// previous message) but share their statistics: the encoder's second
	// block reuses the first's Huffman table.
	r := rand.New(rand.NewPCG(7, 7))
	msg := func() []byte {
		b := make([]byte, 20<<10)
		for i := range b {
			b[i] = "etaoinshrdlu"[min(r.IntN(16), 11)]
		}
		return b
	}
	a := encodeStream(t, [][]byte{msg(), msg(), msg()})
	_, k := binary.Uvarint(a[0][1:])
	z0 := a[0][1+k:]
	hdr := z0[:frameHeaderLen(t, z0)]
	for i := 1; i < len(a); i++ {
		n, k := binary.Uvarint(a[i][1:])
		forged := append(binary.AppendUvarint([]byte{streamMarker}, n), hdr...)
		forged = append(forged, a[i][1+k:]...)
		fresh, _ := NewStreamDecoder(DefaultStreamWindow)
		want := traceStream(fresh, [][]byte{forged}, 1<<20)
		fresh.Close()
		dec, _ := NewStreamDecoder(DefaultStreamWindow)
		if got := traceStream(dec, a[:i], 1<<20); bytes.Contains([]byte(fmt.Sprint(got)), []byte("corrupt")) {
			t.Fatalf("stream a: %v", got)
		}
		if err := dec.Reset(); err != nil {
			t.Fatal(err)
		}
		got := traceStream(dec, [][]byte{forged}, 1<<20)
		dec.Close()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("message %d of stream a as the next stream's first: on a reset decoder %.300v, a new one %.300v", i, got, want)
		}
		if !bytes.Contains([]byte(want[0]), []byte("corrupt")) {
			t.Logf("message %d forged decodes on a new decoder too: %.200s", i, want[0])
		}
	}
}

// TestReviewResetHoldsWithinCost: a decoder reset after any of the
// hostile streams, waiting as a spare (charged StreamDecoderCost), holds
// no more than that; and once it decodes an honest stream again, no more
// either.
func TestReviewResetHoldsWithinCost(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation sizes")
	}
	honest := encodeStream(t, streamMessages(80))
	for name, prev := range hostileStreams(t) {
		var before, reset, again runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		dec, _ := NewStreamDecoder(DefaultStreamWindow)
		traceStream(dec, prev, 4<<20)
		if err := dec.Reset(); err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&reset)
		var out []byte
		for _, w := range honest {
			var err error
			if out, err = dec.DecodeMessage(out[:0], w, 1<<20, nil); err != nil {
				t.Fatalf("after %q: %v", name, err)
			}
		}
		out = nil
		if err := dec.Reset(); err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&again)
		runtime.KeepAlive(dec)
		heldReset := int64(reset.HeapAlloc) - int64(before.HeapAlloc)
		heldAgain := int64(again.HeapAlloc) - int64(before.HeapAlloc)
		t.Logf("%s: reset %d, after an honest stream %d (StreamDecoderCost %d)", name, heldReset, heldAgain, StreamDecoderCost(DefaultStreamWindow))
		if max(heldReset, heldAgain) > StreamDecoderCost(DefaultStreamWindow) {
			t.Errorf("after %q the reset decoder holds %d bytes, then %d, more than the %d a spare is charged", name, heldReset, heldAgain, StreamDecoderCost(DefaultStreamWindow))
		}
		dec.Close()
	}
}

// TestReviewGrowthRoomCharged: the buffer DecodeMessage allocates for a
// message is charged whole before it is allocated, its growth room
// included, never more than it allocates, and a message that lies about
// its length (few bytes declaring many) gets no growth room: at most
// maxFirstRatio times its bytes.
func TestReviewGrowthRoomCharged(t *testing.T) {
	wire := encodeStream(t, streamMessages(4))
	dec, _ := NewStreamDecoder(DefaultStreamWindow)
	defer dec.Close()
	for i, w := range wire {
		charged := 0
		out, err := dec.DecodeMessage(nil, w, 1<<20, func(n int) error { charged += n; return nil })
		if err != nil {
			t.Fatal(err)
		}
		if charged != cap(out) {
			t.Fatalf("message %d: %d bytes allocated, %d charged", i, cap(out), charged)
		}
		if want := len(out) + len(out)/growthRoom; cap(out) != want {
			t.Fatalf("message %d: a buffer of %d for %d bytes, want %d", i, cap(out), len(out), want)
		}
	}
	// A lie: 4 MiB declared by a frame header and a few bytes.
	_, k := binary.Uvarint(wire[0][1:])
	lie := frameMessage(wire[0][1+k:][:16], 4<<20)
	liar, _ := NewStreamDecoder(DefaultStreamWindow)
	defer liar.Close()
	charged := 0
	_, err := liar.DecodeMessage(nil, lie, 8<<20, func(n int) error { charged += n; return nil })
	if err == nil {
		t.Fatal("a lie decoded")
	}
	if charged > max(streamChunk, maxFirstRatio*(len(lie))) {
		t.Fatalf("a %d-byte message declaring 4 MiB was charged %d", len(lie), charged)
	}
	if errors.Is(err, ErrTooLarge) {
		t.Fatal(err)
	}
}

// TestReviewGrowthRoomHeldToRatio: a message of n bytes declaring 256 n
// (maxFirstRatio, within the limit) gets a buffer of the declared length,
// and its growth room only within the same ratio: docs/streaming.md's "at
// most 256 times the message's bytes" (streamalloc gave it 288 n).
func TestReviewGrowthRoomHeldToRatio(t *testing.T) {
	wire := encodeStream(t, streamMessages(1))
	_, k := binary.Uvarint(wire[0][1:])
	for _, n := range []int{4 << 10, 16 << 10} {
		msg := frameMessage(append(wire[0][1+k:][:16], make([]byte, n-16)...), maxFirstRatio*n)
		liar, _ := NewStreamDecoder(DefaultStreamWindow)
		charged := 0
		out, err := liar.DecodeMessage(nil, msg, 64<<20, func(c int) error { charged += c; return nil })
		held := cap(out)
		liar.Close()
		if err == nil {
			t.Fatal("garbage decoded")
		}
		if charged > maxFirstRatio*n || held > maxFirstRatio*n {
			t.Errorf("a message of %d bytes declaring %d: %d charged, %d allocated, over %d times its bytes", n, maxFirstRatio*n, charged, held, maxFirstRatio)
		}
	}
}

// TestReviewGrowthRoomNeverRefuses: the growth room is a convenience for
// the stream's next messages, never a reason to refuse this one: a
// message whose output fits what the budget (or the tenant's share) has
// left, but not with an eighth more, is decoded in a buffer of its own
// length, as before streamalloc, not refused (an honest client would be
// told to retry a request that always fails the same way, while the
// budget has room for it).
func TestReviewGrowthRoomNeverRefuses(t *testing.T) {
	wire := encodeStream(t, streamMessages(3))
	dec, _ := NewStreamDecoder(DefaultStreamWindow)
	defer dec.Close()
	refused := errors.New("no room")
	for i, w := range wire {
		n, _ := binary.Uvarint(w[1:])
		charged := 0
		out, err := dec.DecodeMessage(nil, w, 1<<20, func(c int) error {
			if charged+c > int(n) {
				return refused
			}
			charged += c
			return nil
		})
		if err != nil {
			t.Fatalf("message %d of %d bytes, with room for exactly that: %v", i, n, err)
		}
		if cap(out) > charged {
			t.Fatalf("message %d: a buffer of %d, %d charged", i, cap(out), charged)
		}
	}
}
