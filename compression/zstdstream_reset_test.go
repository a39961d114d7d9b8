package compression

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// encodeStream returns the stream messages carrying msgs, one encoder's.
func encodeStream(t testing.TB, msgs [][]byte) [][]byte {
	t.Helper()
	enc, err := NewStreamEncoder(DefaultStreamWindow)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	var wire [][]byte
	for _, m := range msgs {
		w, err := enc.AppendMessage(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		wire = append(wire, w)
	}
	return wire
}

// decodeAll decodes a stream's messages on dec and returns what each
// decoded to and was charged, or the first error.
func decodeAll(dec *StreamDecoder, wire [][]byte) (outs [][]byte, charges []int, err error) {
	for _, w := range wire {
		charged := 0
		got, err := dec.DecodeMessage(nil, w, 1<<20, func(n int) error { charged += n; return nil })
		if err != nil {
			return outs, charges, err
		}
		outs, charges = append(outs, got), append(charges, charged)
	}
	return outs, charges, nil
}

// A reset decoder is a new one for the next stream: stream B decodes on a
// decoder that decoded stream A before (whole, or to an error) as on a new
// decoder, byte for byte and charge for charge.
func TestStreamDecoderResetSame(t *testing.T) {
	msgs := streamMessages(12)
	a, b := encodeStream(t, msgs[:6]), encodeStream(t, msgs[6:])
	fresh, _ := NewStreamDecoder(DefaultStreamWindow)
	defer fresh.Close()
	want, wantCharges, err := decodeAll(fresh, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []struct {
		name string
		a    [][]byte
	}{
		{"a whole stream before", a},
		{"a stream that ended in an error before", [][]byte{a[0], a[2]}},
		{"nothing before", nil},
	} {
		dec, _ := NewStreamDecoder(DefaultStreamWindow)
		_, _, errA := decodeAll(dec, cut.a)
		if err := dec.Reset(); err != nil {
			t.Fatalf("%s: Reset: %v", cut.name, err)
		}
		got, charges, err := decodeAll(dec, b)
		if err != nil {
			t.Fatalf("%s (its error %v): stream b: %v", cut.name, errA, err)
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) || charges[i] != wantCharges[i] {
				t.Fatalf("%s: message %d: %d bytes charged %d, a new decoder's %d charged %d", cut.name, i, len(got[i]), charges[i], len(want[i]), wantCharges[i])
			}
		}
		dec.Close()
	}
}

// frameHeaderLen returns the length of the zstd frame header at the start
// of z (magic, descriptor, window, dictionary id, content size).
func frameHeaderLen(t *testing.T, z []byte) int {
	t.Helper()
	if len(z) < 6 || !bytes.Equal(z[:4], []byte{0x28, 0xb5, 0x2f, 0xfd}) {
		t.Fatalf("not a zstd frame: % x", z[:min(len(z), 8)])
	}
	fhd := z[4]
	n := 5
	single := fhd&0x20 != 0
	if !single {
		n++
	}
	n += []int{0, 1, 2, 4}[fhd&3]
	fcs := []int{0, 2, 4, 8}[fhd>>6]
	if fhd>>6 == 0 && single {
		fcs = 1
	}
	return n + fcs
}

// A reset decoder forgets its stream: a client whose first message is a
// frame header followed by a block that refers to the previous stream's
// bytes (the second message of a stream whose first message carried
// another client's secret) gets the error a new decoder gives, never the
// secret.
func TestStreamDecoderResetForgets(t *testing.T) {
	secret := bytes.Repeat([]byte("tenant-a-secret-0123456789abcdef;"), 64)
	a := encodeStream(t, [][]byte{secret, secret})
	// a[0] = marker, uvarint length, frame header, block; a[1] = marker,
	// uvarint length, a block repeating a[0]'s bytes.
	_, k := binary.Uvarint(a[0][1:])
	z0 := a[0][1+k:]
	hdr := z0[:frameHeaderLen(t, z0)]
	_, k1 := binary.Uvarint(a[1][1:])
	forged := append([]byte{0}, binary.AppendUvarint(nil, uint64(len(secret)))...)
	forged = append(append(forged, hdr...), a[1][1+k1:]...)

	fresh, _ := NewStreamDecoder(DefaultStreamWindow)
	defer fresh.Close()
	out, errFresh := fresh.DecodeMessage(nil, forged, 1<<20, nil)
	if errFresh == nil || bytes.Contains(out, secret[:32]) {
		t.Fatalf("a new decoder decodes the forged message: %v, %d bytes", errFresh, len(out))
	}

	dec, _ := NewStreamDecoder(DefaultStreamWindow)
	defer dec.Close()
	if got, err := dec.DecodeMessage(nil, a[0], 1<<20, nil); err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("stream a: %v", err)
	}
	if err := dec.Reset(); err != nil {
		t.Fatal(err)
	}
	out, err := dec.DecodeMessage(nil, forged, 1<<20, nil)
	if err == nil || bytes.Contains(out, secret[:32]) {
		t.Fatalf("a reset decoder decodes the next stream from the last one's history: %v, %d bytes", err, len(out))
	}
	t.Logf("the forged message on a reset decoder: %v", err)
	if !errors.Is(err, ErrStreamCorrupt) || err.Error() != errFresh.Error() {
		t.Fatalf("a reset decoder: %v; a new one: %v", err, errFresh)
	}
}

// BenchmarkStreamDecoderSetup: a stream's decoder and its first message,
// made new or reset from an ended stream's (the spares the handler keeps).
func BenchmarkStreamDecoderSetup(b *testing.B) {
	wire := encodeStream(b, streamMessages(1))
	for _, reset := range []bool{false, true} {
		name := "new"
		if reset {
			name = "reset"
		}
		b.Run(name, func(b *testing.B) {
			dec, _ := NewStreamDecoder(DefaultStreamWindow)
			out := make([]byte, 0, 64<<10)
			b.ReportAllocs()
			for b.Loop() {
				if reset {
					if err := dec.Reset(); err != nil {
						b.Fatal(err)
					}
				} else {
					dec, _ = NewStreamDecoder(DefaultStreamWindow)
				}
				if _, err := dec.DecodeMessage(out[:0], wire[0], 1<<20, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
