package otlpcolumns

import (
	"bytes"
	"fmt"
	"testing"
)

// decodeTrace is what a decoder made of a stream's messages: each one's
// output, error, charges and what it vouched for.
func decodeTrace(d *Decoder, limit int, msgs [][]byte) []string {
	var trace []string
	for _, m := range msgs {
		var charges []int
		out, err := d.Decode(append(make([]byte, 0, 8), "pre"...), m, limit, func(n int) error { charges = append(charges, n); return nil })
		v, ok := d.Vouched()
		trace = append(trace, fmt.Sprintf("%x %v %v %v %v", out, err, charges, v, ok))
	}
	return trace
}

// sameAfterReset fails unless the messages of stream b decode on a decoder
// that decoded stream a before and was Reset as on a new one: output,
// error, charges and what it vouches for, message by message.
func sameAfterReset(t *testing.T, sig Signal, limit int, a, b [][]byte) {
	t.Helper()
	want := decodeTrace(NewDecoder(sig), limit, b)
	d := NewDecoder(sig)
	decodeTrace(d, limit, a)
	d.Reset()
	got := decodeTrace(d, limit, b)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("message %d of the next stream: on a reset decoder\n%.300s\non a new one\n%.300s", i, got[i], want[i])
		}
	}
}

// TestDecoderResetSame: a reset decoder is a new one for the next stream:
// on the golden payloads and random streams, after another stream (whole,
// or ended by an error part way through a message), byte for byte, error
// for error, charge for charge and vouch for vouch. A first message that
// refers to the series the last stream sent (another client's: the
// second message of its stream) is refused as on a new decoder, and the
// tables are cleared, not only cut back.
func TestDecoderResetSame(t *testing.T) {
	withSeries := 0
	for _, s := range signals {
		b := genMessages(t, s)
		// Stream a: the same requests in the opposite order, on an
		// encoder of its own.
		e := NewEncoder(s.sig)
		var a [][]byte
		for i := len(b) - 1; i >= 0; i-- {
			plain, err := NewDecoder(s.sig).Decode(nil, b[i], 64<<20, nil)
			if err != nil {
				continue // a message that refers to the series before it
			}
			a = append(a, e.Append(nil, plain))
		}
		if len(a) < 2 {
			t.Fatalf("%s: %d messages for stream a", s.name, len(a))
		}
		sameAfterReset(t, s.sig, 64<<20, a, b)
		broken := append([]byte(nil), a[1]...)
		broken = broken[:len(broken)/2]
		sameAfterReset(t, s.sig, 64<<20, [][]byte{a[0], broken}, b)
		// The next stream's first message refers to a's series.
		sameAfterReset(t, s.sig, 64<<20, a[:1], a[1:2])

		d := NewDecoder(s.sig)
		decodeTrace(d, 64<<20, a)
		arena := d.sets.arena[:cap(d.sets.arena)]
		if len(arena) > 0 {
			withSeries++
		}
		d.Reset()
		if cap(d.sets.arena) != len(arena) || len(d.sets.arena) != 0 || len(d.sets.offs) != 0 {
			t.Fatalf("%s: Reset kept %d of the arena's %d bytes, %d in use", s.name, cap(d.sets.arena), len(arena), len(d.sets.arena))
		}
		if !bytes.Equal(arena, make([]byte, len(arena))) {
			t.Fatalf("%s: Reset left stream a's series in the arena", s.name)
		}
	}
	if withSeries == 0 {
		t.Fatal("no stream added series: the table's reset is not tested")
	}
}

// FuzzResetSame: on any bytes, a decoder that decoded a stream (prev,
// twice) and was Reset decodes the next (src, twice) as a new one does.
func FuzzResetSame(f *testing.F) {
	for _, s := range signals {
		encs := genMessages(f, s)
		for i := 1; i < len(encs); i++ {
			if len(encs[i-1])+len(encs[i]) < 64<<10 {
				f.Add(encs[i-1], encs[i], uint8(s.sig))
			}
		}
	}
	f.Fuzz(func(t *testing.T, prev, src []byte, sig uint8) {
		sameAfterReset(t, Signal(sig%5), 1<<16, [][]byte{prev, prev}, [][]byte{src, src})
	})
}

// BenchmarkDecoderSetup: a stream's columns decoder and its first
// message (a golden traces payload), made new or reset from an ended
// stream's (the spares the handler keeps).
func BenchmarkDecoderSetup(b *testing.B) {
	var msg []byte
	for _, env := range envelopes(b, "traces") {
		if len(env) > len(msg) {
			msg = env
		}
	}
	enc := NewEncoder(Traces).Append(nil, msg)
	for _, reset := range []bool{false, true} {
		name := "new"
		if reset {
			name = "reset"
		}
		b.Run(name, func(b *testing.B) {
			d := NewDecoder(Traces)
			out := make([]byte, 0, 2*len(msg))
			b.ReportAllocs()
			for b.Loop() {
				if reset {
					d.Reset()
				} else {
					d = NewDecoder(Traces)
				}
				if _, err := d.Decode(out[:0], enc, 64<<20, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
