package compression

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

func streamMessages(n int) [][]byte {
	var msgs [][]byte
	for i := range n {
		var b bytes.Buffer
		for j := range 200 {
			fmt.Fprintf(&b, "service.name=checkout host=node-%d span=%d attr=http.method:GET;", j%7, i*200+j)
		}
		msgs = append(msgs, b.Bytes())
	}
	return msgs
}

// Each message decodes as soon as it has arrived, in order, and repeating
// earlier messages costs little.
func TestStreamRoundTrip(t *testing.T) {
	enc, err := NewStreamEncoder(DefaultStreamWindow)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	dec, err := NewStreamDecoder(DefaultStreamWindow)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	msgs := streamMessages(20)
	// The first message once more: all of it is in the window, so it
	// costs a fraction of what it cost the first time.
	msgs = append(msgs, msgs[0])
	var first, again int
	for i, m := range msgs {
		wire, err := enc.AppendMessage(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		switch i {
		case 0:
			first = len(wire)
		case len(msgs) - 1:
			again = len(wire)
		}
		charged := 0
		got, err := dec.DecodeMessage(nil, wire, 1<<20, func(n int) error { charged += n; return nil })
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		// The buffer allocated for it is charged, whole: the message
		// and growthRoom for the stream's next ones.
		if !bytes.Equal(got, m) || charged != cap(got) || cap(got) > len(m)+len(m)/growthRoom {
			t.Fatalf("message %d: got %d bytes in %d, charged %d, want %d", i, len(got), cap(got), charged, len(m))
		}
	}
	if again*4 >= first {
		t.Errorf("the first message took %d bytes, sent again %d: the state is not kept", first, again)
	}
}

func TestStreamDecoderRefuses(t *testing.T) {
	enc, _ := NewStreamEncoder(DefaultStreamWindow)
	msgs := streamMessages(2)
	w0, _ := enc.AppendMessage(nil, msgs[0])
	w1, _ := enc.AppendMessage(nil, msgs[1])
	bigEnc, _ := NewStreamEncoder(8 << 20)
	wBig, _ := bigEnc.AppendMessage(nil, msgs[0])
	// A frame header declaring a 2 GiB window, then nothing.
	hugeWindow := binary.AppendUvarint([]byte{0}, 100)
	hugeWindow = append(hugeWindow, 0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xa8) // window descriptor: 2^(10+21)
	// A single-segment frame declaring 1 GiB of content (its window).
	hugeFrame := binary.AppendUvarint([]byte{0}, 100)
	hugeFrame = append(hugeFrame, 0x28, 0xb5, 0x2f, 0xfd, 0xe0)
	hugeFrame = binary.LittleEndian.AppendUint64(hugeFrame, 1<<30)
	_, k := binary.Uvarint(w0[1:])
	bomb := binary.AppendUvarint([]byte{0}, 64<<20)
	bomb = append(bomb, w0[1+k:]...)
	// The first message declaring 10 bytes less than it decodes to: the
	// 10 bytes would begin the next message.
	short := binary.AppendUvarint([]byte{0}, uint64(len(msgs[0])-10))
	short = append(short, w0[1+k:]...)
	for _, tc := range []struct {
		name  string
		msgs  [][]byte
		limit int
		want  error
	}{
		{"window larger than negotiated", [][]byte{wBig}, 1 << 20, ErrStreamWindow},
		{"huge window declared", [][]byte{hugeWindow}, 1 << 20, ErrStreamWindow},
		{"huge frame declared", [][]byte{hugeFrame}, 1 << 20, ErrStreamWindow},
		{"declared length above the limit", [][]byte{bomb}, 4 << 20, ErrTooLarge},
		{"garbage", [][]byte{append([]byte{0, 10}, "not zstd at all"...)}, 1 << 20, ErrStreamCorrupt},
		{"message cut short", [][]byte{w0[:len(w0)-3]}, 1 << 20, ErrStreamCorrupt},
		{"bytes past the end", [][]byte{append(append([]byte{}, w0...), 1, 2, 3)}, 1 << 20, ErrStreamCorrupt},
		{"message out of order", [][]byte{w1}, 1 << 20, ErrStreamCorrupt},
		{"garbage mid-stream", [][]byte{w0, append([]byte{0, 5}, 1, 2, 3, 4, 5, 6)}, 1 << 20, ErrStreamCorrupt},
		{"no length", [][]byte{{0, 0x80}}, 1 << 20, ErrStreamCorrupt},
		{"a message decoding past its declared length", [][]byte{short, w1}, 1 << 20, ErrStreamCorrupt},
		{"no marker", [][]byte{w0[1:]}, 1 << 20, ErrStreamCorrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dec, _ := NewStreamDecoder(DefaultStreamWindow)
			defer dec.Close()
			var err error
			for _, m := range tc.msgs {
				if _, err = dec.DecodeMessage(nil, m, tc.limit, nil); err != nil {
					break
				}
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			// It cannot go on.
			if _, err2 := dec.DecodeMessage(nil, w0, tc.limit, nil); err2 == nil {
				t.Fatal("decoder went on after an error")
			}
		})
	}
}

// A message that expands to the limit from a few bytes of history is
// charged as it is produced, and refused by the charge without producing
// the rest.
func TestStreamBombCharged(t *testing.T) {
	enc, _ := NewStreamEncoder(DefaultStreamWindow)
	dec, _ := NewStreamDecoder(DefaultStreamWindow)
	defer dec.Close()
	zeros := make([]byte, 4<<20)
	w, _ := enc.AppendMessage(nil, zeros)
	if len(w) > 4<<10 {
		t.Fatalf("bomb is %d bytes", len(w))
	}
	refused := errors.New("no room")
	charged := 0
	out, err := dec.DecodeMessage(nil, w, 4<<20, func(n int) error {
		if charged+n > 1<<20 {
			return refused
		}
		charged += n
		return nil
	})
	if !errors.Is(err, refused) || len(out) > 1<<20 || cap(out) > 2<<20 {
		t.Fatalf("err %v, %d bytes out (cap %d)", err, len(out), cap(out))
	}
}

func FuzzStreamDecoder(f *testing.F) {
	enc, _ := NewStreamEncoder(MinStreamWindow * 64)
	var seed, lying []byte
	for i, m := range streamMessages(3) {
		w, _ := enc.AppendMessage(nil, m[:500])
		seed = binary.AppendUvarint(seed, uint64(len(w)))
		seed = append(seed, w...)
		if i == 0 {
			// The first message declaring 200 KiB: a buffer is
			// allocated for it before it is decoded (maxFirstRatio).
			_, k := binary.Uvarint(w[1:])
			l := append(binary.AppendUvarint([]byte{0}, 200<<10), w[1+k:]...)
			lying = append(binary.AppendUvarint(nil, uint64(len(l))), l...)
		}
	}
	f.Add(seed)
	f.Add(lying)
	const limit = 256 << 10
	f.Fuzz(func(t *testing.T, data []byte) {
		dec, err := NewStreamDecoder(MinStreamWindow * 64)
		if err != nil {
			t.Fatal(err)
		}
		defer dec.Close()
		// data is a sequence of uvarint-framed stream messages.
		for len(data) > 0 {
			n, k := binary.Uvarint(data)
			if k <= 0 || n > uint64(len(data)-k) {
				return
			}
			msg := data[k : k+int(n)]
			data = data[k+int(n):]
			charged := 0
			out, err := dec.DecodeMessage(nil, msg, limit, func(n int) error { charged += n; return nil })
			// What it holds is charged, and is at most the buffer
			// allowed before decoding, or a few times the output.
			if len(out) > limit || charged < cap(out) || cap(out) > max(streamChunk, maxFirstRatio*len(msg))+3*len(out) {
				t.Fatalf("%d bytes out in a buffer of %d, %d charged", len(out), cap(out), charged)
			}
			if err != nil {
				if !errors.Is(err, ErrStreamCorrupt) && !errors.Is(err, ErrStreamWindow) && !errors.Is(err, ErrTooLarge) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
		}
	})
}

// TestStreamDecoderCost holds StreamDecoderCost to what a decoder with the
// default window holds once a stream has filled its window: the heap it
// keeps live after a garbage collection.
func TestStreamDecoderCost(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation sizes")
	}
	enc, _ := NewStreamEncoder(DefaultStreamWindow)
	var wire [][]byte
	for _, m := range streamMessages(60) { // 60 × 15 KB: past the window
		w, _ := enc.AppendMessage(nil, m)
		wire = append(wire, w)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	dec, _ := NewStreamDecoder(DefaultStreamWindow)
	var out []byte
	for _, w := range wire {
		var err error
		if out, err = dec.DecodeMessage(out[:0], w, 1<<20, nil); err != nil {
			t.Fatal(err)
		}
	}
	out = nil
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	runtime.KeepAlive(dec)
	t.Logf("a stream decoder with a %d-byte window holds %d bytes (StreamDecoderCost %d)", DefaultStreamWindow, held, StreamDecoderCost(DefaultStreamWindow))
	if held > StreamDecoderCost(DefaultStreamWindow) {
		t.Fatalf("the decoder holds %d bytes, more than the %d charged", held, StreamDecoderCost(DefaultStreamWindow))
	}
	dec.Close()
}

// TestStreamHugeDeclarationsAllocateLittle: a frame declaring a 2 TiB
// window or 1 GiB of content is refused before anything of that size is
// allocated.
func TestStreamHugeDeclarationsAllocateLittle(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation sizes")
	}
	hugeWindow := append(binary.AppendUvarint([]byte{0}, 100), 0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xf8)
	hugeFrame := binary.LittleEndian.AppendUint64(append(binary.AppendUvarint([]byte{0}, 100), 0x28, 0xb5, 0x2f, 0xfd, 0xe0), 1<<30)
	for _, msg := range [][]byte{hugeWindow, hugeFrame} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		dec, _ := NewStreamDecoder(DefaultStreamWindow)
		_, err := dec.DecodeMessage(nil, msg, 1<<20, nil)
		dec.Close()
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrStreamWindow) {
			t.Fatalf("got %v", err)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 256<<10 {
			t.Fatalf("refusing %x allocated %d bytes", msg, n)
		}
	}
}

// TestStreamDecodeChargesWhatItAllocates: a message that declares more
// than it holds makes the decoder hold no more than it charged: the
// capacity a growth allocates is charged before it is allocated, not only
// the bytes each read fills.
func TestStreamDecodeChargesWhatItAllocates(t *testing.T) {
	enc, _ := NewStreamEncoder(DefaultStreamWindow)
	defer enc.Close()
	plain := make([]byte, 300<<10)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range plain {
		plain[i] = byte(rng.Uint32())
	}
	wire, err := enc.AppendMessage(nil, plain)
	if err != nil {
		t.Fatal(err)
	}
	_, k := binary.Uvarint(wire[1:])
	lying := append(binary.AppendUvarint(wire[:1:1], 4<<20), wire[1+k:]...)
	dec, _ := NewStreamDecoder(DefaultStreamWindow)
	defer dec.Close()
	charged := 0
	out, err := dec.DecodeMessage(nil, lying, 8<<20, func(n int) error { charged += n; return nil })
	if !errors.Is(err, ErrStreamCorrupt) {
		t.Fatalf("a message shorter than it declares: got %v, want ErrStreamCorrupt", err)
	}
	if cap(out) > charged {
		t.Fatalf("holds a buffer of %d bytes for %d charged (%d decoded)", cap(out), charged, len(out))
	}
}

// TestStreamDecodeOneBuffer: a message larger than the buffer it is
// decoded into gets one buffer of its declared length, allocated before it
// is decoded, not a chain of growths each copying what was decoded so far
// (which, for a stream of messages each a little larger than the last,
// reallocated and copied nearly every message whole).
func TestStreamDecodeOneBuffer(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	enc, _ := NewStreamEncoder(DefaultStreamWindow)
	defer enc.Close()
	dec, _ := NewStreamDecoder(DefaultStreamWindow)
	defer dec.Close()
	var wire [][]byte
	var plain [][]byte
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 6 {
		// 150 KiB and more, half random (a ratio of about 2, as real
		// requests have at least), each larger than the last by more
		// than the growth room (an eighth) of the last one's buffer.
		p := make([]byte, 150<<10+i*40<<10)
		for j := range p {
			if j%2 == 0 {
				p[j] = byte(rng.Uint32())
			}
		}
		w, err := enc.AppendMessage(nil, p)
		if err != nil {
			t.Fatal(err)
		}
		wire, plain = append(wire, w), append(plain, p)
	}
	// The first message starts the frame (the decoder's own buffers).
	out, err := dec.DecodeMessage(nil, wire[0], 1<<20, nil)
	if err != nil || !bytes.Equal(out, plain[0]) {
		t.Fatal(err)
	}
	i := 1
	allocs := testing.AllocsPerRun(4, func() {
		charges, charged := 0, 0
		var err error
		// Into the last message's buffer, a little too small (as a
		// pooled buffer is), then (cold) into none.
		dst := out[:0]
		if i%2 == 0 {
			dst = nil
		}
		out, err = dec.DecodeMessage(dst, wire[i], 1<<20, func(n int) error { charges++; charged += n; return nil })
		if err != nil || !bytes.Equal(out, plain[i]) {
			t.Fatalf("message %d: %v", i, err)
		}
		if want := len(plain[i]) + len(plain[i])/growthRoom; cap(out) != want || charged != want || charges != 1 {
			t.Fatalf("message %d: %d bytes in a buffer of %d, %d charged in %d charges, want one buffer of %d charged once before decoding", i, len(out), cap(out), charged, charges, want)
		}
		i++
	})
	if allocs > 1 {
		t.Fatalf("%.1f allocations per message, want 1", allocs)
	}
}

// lyingMessage is a stream's first message, honestly compressed, whose
// header declares declared bytes instead of its own length, and its
// compressed body.
func lyingMessage(t *testing.T, declared uint64) (msg, body []byte) {
	t.Helper()
	enc, _ := NewStreamEncoder(DefaultStreamWindow)
	defer enc.Close()
	w, _ := enc.AppendMessage(nil, streamMessages(1)[0])
	_, k := binary.Uvarint(w[1:])
	body = w[1+k:]
	return append(binary.AppendUvarint([]byte{0}, declared), body...), body
}

// TestStreamLyingLengthHeldToRatio: a message that declares far more than
// it holds is given a buffer of at most maxFirstRatio times its bytes
// before its output proves more, charged before it is allocated.
func TestStreamLyingLengthHeldToRatio(t *testing.T) {
	lying, body := lyingMessage(t, 8<<20)
	dec, _ := NewStreamDecoder(DefaultStreamWindow)
	defer dec.Close()
	charged := 0
	out, err := dec.DecodeMessage(nil, lying, 8<<20, func(n int) error { charged += n; return nil })
	if !errors.Is(err, ErrStreamCorrupt) {
		t.Fatalf("got %v, want ErrStreamCorrupt", err)
	}
	if bound := max(streamChunk, maxFirstRatio*len(body)); cap(out) > bound || cap(out) > charged {
		t.Fatalf("a %d-byte message declaring 8 MiB got a buffer of %d (bound %d), %d charged", len(body), cap(out), bound, charged)
	}
}
