package grpcwire

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// recordingBudget records what a Call declares and charges.
type recordingBudget struct {
	mu       sync.Mutex
	declared []int
	charged  int
	charges  chan int
	refuseAt int // refuse a charge that would pass this total; 0: never
}

func (b *recordingBudget) Declare(n int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.declared = append(b.declared, n)
	return nil
}

func (b *recordingBudget) Charge(_ context.Context, n int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.refuseAt > 0 && b.charged+n > b.refuseAt {
		return Errorf(Unavailable, "busy")
	}
	b.charged += n
	if b.charges != nil {
		b.charges <- n
	}
	return nil
}

func (b *recordingBudget) Grow(int) error { return nil }

func pipeCall(t *testing.T) (*Call, *io.PipeWriter) {
	t.Helper()
	pr, pw := io.Pipe()
	r := httptest.NewRequest(http.MethodPost, "/svc/Method", pr)
	r.Header.Set("Content-Type", "application/grpc")
	c, st := StartCall(httptest.NewRecorder(), r, Limits{})
	if st != nil {
		t.Fatal(st)
	}
	t.Cleanup(func() { pw.Close() })
	return c, pw
}

// A prefix that claims 64 MiB is declared, but only the bytes that arrive
// are charged, and the buffer does not grow to the claim.
func TestLyingPrefixChargesWhatArrived(t *testing.T) {
	c, pw := pipeCall(t)
	b := &recordingBudget{charges: make(chan int, 16)}
	c.SetBudget(b)
	done := make(chan []byte, 1)
	go func() {
		msg, _, _ := c.ReadMessage(nil, nil)
		done <- msg
	}()
	const claimed = 64 << 20
	pw.Write(frameMsg(nil)[:1])
	pw.Write([]byte{byte(claimed >> 24), byte(claimed >> 16 & 0xff), 0, 0})
	pw.Write([]byte("ten bytes!"))
	if n := <-b.charges; n != 10 {
		t.Fatalf("charged %d for 10 bytes", n)
	}
	pw.CloseWithError(io.ErrUnexpectedEOF)
	msg := <-done
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.declared) != 1 || b.declared[0] != claimed || b.charged != 10 {
		t.Fatalf("declared %v, charged %d", b.declared, b.charged)
	}
	if cap(msg) > firstReadBuffer {
		t.Fatalf("buffer of %d bytes for 10 that arrived", cap(msg))
	}
}

// A refusal part way leaves the call able to skip the rest of the message
// and read the next one; the leading bytes read so far are kept for the
// caller (a stream finds the request id there).
func TestRefusedPartWaySkipsToNextMessage(t *testing.T) {
	c, pw := pipeCall(t)
	c.SetBudget(&recordingBudget{refuseAt: 100})
	first := []byte(strings.Repeat("a", 300))
	go func() {
		pw.Write(frameMsg(first))
		pw.Write(frameMsg([]byte("next")))
		pw.Close()
	}()
	got, _, st := c.ReadMessage(nil, nil)
	if st == nil || st.Code != Unavailable || !c.Skipped() {
		t.Fatalf("status %v, skipped %v", st, c.Skipped())
	}
	prefix, compressed, st := c.SkipRefusedMessage(got)
	if st != nil || compressed || string(prefix) != strings.Repeat("a", 64) {
		t.Fatalf("skip: %q %v %v", prefix, compressed, st)
	}
	c.SetBudget(&recordingBudget{})
	msg, _, st := c.ReadMessage(nil, nil)
	if st != nil || string(msg) != "next" {
		t.Fatalf("next message: %q %v", msg, st)
	}
	if _, _, st := c.ReadMessage(nil, nil); !IsEndOfStream(st) {
		t.Fatalf("end: %v", st)
	}
}

// A partial prefix followed by the end of the body is a truncated message,
// not a clean end of stream.
func TestPartialPrefixIsTruncation(t *testing.T) {
	c, pw := pipeCall(t)
	go func() {
		pw.Write([]byte{0, 0})
		pw.Close()
	}()
	if _, _, st := c.ReadMessage(nil, nil); st == nil || st.Code != Internal {
		t.Fatalf("status %v, want INTERNAL", st)
	}
}

func frameMsg(msg []byte) []byte {
	n := len(msg)
	return append([]byte{0, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, msg...)
}
