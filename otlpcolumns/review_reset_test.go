package otlpcolumns

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// The review of streamspares (session 13): a decoder Reset after any end
// of its last stream decodes the next as a new one, into whatever buffer
// the next stream's tickets bring.

var errRefused = errors.New("refused")

// traceInto is decodeTrace with the next message's dst of capacity
// dstCap (a pooled ticket's buffer: none, too small, exact, larger) and
// grow refusing after refuseAfter charges (-1: never).
func traceInto(d *Decoder, msgs [][]byte, dstCap func(i int) int, refuseAfter int) []string {
	var trace []string
	charges := 0
	for i, m := range msgs {
		var got []int
		dst := make([]byte, 0, dstCap(i))
		out, err := d.Decode(dst, m, 64<<20, func(n int) error {
			if refuseAfter >= 0 && charges >= refuseAfter {
				return errRefused
			}
			charges++
			got = append(got, n)
			return nil
		})
		v, ok := d.Vouched()
		trace = append(trace, fmt.Sprintf("%x cap-grown=%v %v %v %v %v", out, cap(out) != cap(dst), err, got, v, ok))
	}
	return trace
}

// TestReviewResetAfterChargeRefused: a stream that ended in a charge
// refused part way through a message (the budget full: a message decoded
// part way, its series partly added) leaves a decoder that, reset,
// decodes the next stream as a new one; with every kind of buffer the
// next stream's requests bring (nil, smaller than the message, exactly
// it, larger), output, charges, errors and vouching alike.
func TestReviewResetAfterChargeRefused(t *testing.T) {
	caps := map[string]func(i int) int{
		"none":    func(int) int { return 0 },
		"small":   func(int) int { return 100 },
		"varying": func(i int) int { return []int{0, 1 << 20, 64 << 10, 8}[i%4] },
	}
	for _, s := range signals {
		b := genMessages(t, s)
		a := b[:min(len(b), 6)]
		for refuse := range 4 {
			for name, dstCap := range caps {
				want := traceInto(NewDecoder(s.sig), b, dstCap, -1)
				d := NewDecoder(s.sig)
				prev := traceInto(d, a, func(int) int { return 0 }, refuse)
				if !strings.Contains(strings.Join(prev, " "), errRefused.Error()) {
					t.Fatalf("%s: stream a was never refused a charge (%d)", s.name, refuse)
				}
				d.Reset()
				got := traceInto(d, b, dstCap, -1)
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("%s, buffers %s, after a stream refused at its charge %d (%.200s): message %d on a reset decoder\n%.300s\non a new one\n%.300s",
							s.name, name, refuse, prev[len(prev)-1], i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestReviewResetTwice: Reset on a reset decoder, and on a new one, is a
// new decoder still, and the next stream's first message referring to
// the series of any earlier stream is refused as on a new one.
func TestReviewResetTwice(t *testing.T) {
	for _, s := range signals {
		b := genMessages(t, s)
		want := traceInto(NewDecoder(s.sig), b, func(int) int { return 8 }, -1)
		d := NewDecoder(s.sig)
		d.Reset()
		traceInto(d, b[:3], func(int) int { return 8 }, -1)
		d.Reset()
		d.Reset()
		got := traceInto(d, b, func(int) int { return 8 }, -1)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: message %d on a twice reset decoder\n%.300s\non a new one\n%.300s", s.name, i, got[i], want[i])
			}
		}
		// b[1] alone, after streams that sent b[0] (its series).
		wantAlone := traceInto(NewDecoder(s.sig), b[1:2], func(int) int { return 8 }, -1)
		traceInto(d, b[:1], func(int) int { return 8 }, -1)
		d.Reset()
		if got := traceInto(d, b[1:2], func(int) int { return 8 }, -1); got[0] != wantAlone[0] {
			t.Fatalf("%s: a first message after a reset: %.300s, on a new decoder %.300s", s.name, got[0], wantAlone[0])
		}
	}
}

// TestReviewRoomNeverRefuses: the growth room (an eighth over the
// declared length, for the stream's next messages) is never a reason to
// refuse a message: one whose output fits what the budget has left, but
// not with the room, is decoded into a buffer no larger than its charge.
func TestReviewRoomNeverRefuses(t *testing.T) {
	for _, s := range signals {
		e := NewEncoder(s.sig)
		d := NewDecoder(s.sig)
		for i, plain := range envelopes(t, s.name) {
			msg := e.Append(nil, plain)
			charged := 0
			out, err := d.Decode(nil, msg, 64<<20, func(c int) error {
				if charged+c > len(plain) {
					return errRefused
				}
				charged += c
				return nil
			})
			if err != nil {
				t.Fatalf("%s: message %d of %d bytes, with room for exactly that: %v", s.name, i, len(plain), err)
			}
			if cap(out) > charged {
				t.Fatalf("%s: message %d: a buffer of %d, %d charged", s.name, i, cap(out), charged)
			}
		}
	}
}
