package disk

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/storage"
)

// writeN writes n 200-byte traces records, each enough to fill a 1 KiB
// segment after a few.
func writeN(t *testing.T, s *Store, n int) {
	t.Helper()
	payload := make([]byte, 200)
	for range n {
		if err := s.Write(context.Background(), storage.Traces, payload, 1); err != nil {
			t.Fatal(err)
		}
	}
}

func readAll(t *testing.T, c *Consumer) int {
	n, _ := readAllGaps(t, c)
	return n
}

// readAllGaps is readAll that also returns the records GapErrors reported.
func readAllGaps(t *testing.T, c *Consumer) (n int, gap int64) {
	t.Helper()
	for {
		_, err := c.Next()
		if err == io.EOF {
			return n, gap
		}
		var g *GapError
		if errors.As(err, &g) {
			gap += g.Records
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
}

// TestHoldingConsumerHoldsMaxAge: a holding consumer keeps expired segments
// it has not read; once it has committed past them they go; a consumer
// whose name lacks the prefix holds nothing.
func TestHoldingConsumerHoldsMaxAge(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{MaxSegmentSize: 1024, MaxAge: time.Hour, HoldPrefix: "fwd."})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := OpenConsumerAt(dir, "fwd.a", storage.Traces, StartOldest)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	other, err := OpenConsumerAt(dir, "replay", storage.Traces, StartOldest)
	if err != nil {
		t.Fatal(err)
	}
	other.Close()
	writeN(t, s, 40)
	later := time.Now().Add(2 * time.Hour)
	if n := s.enforceRetention(later); n != 0 {
		t.Fatalf("retention deleted %d segments a holding consumer has not read", n)
	}
	if got := readAll(t, c); got != 40 {
		t.Fatalf("consumer read %d records, want 40", got)
	}
	if err := c.Commit(); err != nil {
		t.Fatal(err)
	}
	if n := s.enforceRetention(later); n == 0 {
		t.Fatal("retention deleted nothing after the consumer committed past every segment")
	}
	if st := s.Stats(); st.Signals[0].Segments != 1 {
		t.Fatalf("%d traces segments left, want only the active one", st.Signals[0].Segments)
	}
}

// TestHoldingConsumerLossOnMaxBytes: MaxBytes deletes what a holding
// consumer has not read, and OnLoss gets exactly the records it lost: the
// consumer then reads what is left, and lost plus read is everything.
func TestHoldingConsumerLossOnMaxBytes(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	lost := map[string]int64{}
	s, err := Open(dir, Options{MaxSegmentSize: 1024, MaxBytes: 4096, HoldPrefix: "fwd.",
		OnLoss: func(name string, sig storage.Signal, n int64) {
			mu.Lock()
			lost[name+"/"+sig.String()] += n
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := OpenConsumerAt(dir, "fwd.a", storage.Traces, StartOldest)
	if err != nil {
		t.Fatal(err)
	}
	// Read and commit the first 5 records, so the loss starts inside a
	// segment.
	writeN(t, s, 5)
	for range 5 {
		if _, err := c.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Commit(); err != nil {
		t.Fatal(err)
	}
	// A consumer keeps the segment it reads open, and can finish it after
	// retention deleted it (POSIX unlink): reopen it, as a restart would,
	// so that what it reads is only what retention left.
	c.Close()
	writeN(t, s, 95)
	s.enforceRetention(time.Now())
	c, err = OpenConsumerAt(dir, "fwd.a", storage.Traces, StartOldest)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	read, gap := readAllGaps(t, c)
	mu.Lock()
	got := lost["fwd.a/traces"]
	mu.Unlock()
	if gap != got {
		t.Fatalf("the consumer's gap is %d records, retention's loss %d: one account must give one count", gap, got)
	}
	if got == 0 {
		t.Fatal("no loss reported although max-bytes deleted unread segments")
	}
	if got+int64(read) != 95 {
		t.Fatalf("lost %d + read %d = %d, want the 95 records after the cursor", got, read, got+int64(read))
	}
}

// TestRemoveConsumerReleases: removing a holding consumer's cursor lets
// MaxAge delete what it held.
func TestRemoveConsumerReleases(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{MaxSegmentSize: 1024, MaxAge: time.Hour, HoldPrefix: "fwd."})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := OpenConsumerAt(dir, "fwd.gone", storage.Traces, StartOldest)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	writeN(t, s, 40)
	later := time.Now().Add(2 * time.Hour)
	if n := s.enforceRetention(later); n != 0 {
		t.Fatalf("deleted %d held segments", n)
	}
	names, err := ConsumerNames(dir, storage.Traces, "fwd.")
	if err != nil || len(names) != 1 || names[0] != "fwd.gone" {
		t.Fatalf("ConsumerNames = %v, %v", names, err)
	}
	if err := RemoveConsumer(dir, "fwd.gone", storage.Traces); err != nil {
		t.Fatal(err)
	}
	if n := s.enforceRetention(later); n == 0 {
		t.Fatal("nothing deleted after the consumer was removed")
	}
}

// TestOpenConsumerAtEnd: a new StartEnd consumer reads only what arrives
// after it was opened, also after a restart before its first commit; Lag
// and ReadConsumerLag agree on what it has not committed.
func TestOpenConsumerAtEnd(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{MaxSegmentSize: 1024})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	writeN(t, s, 12)
	c, err := OpenConsumerAt(dir, "fwd.new", storage.Traces, StartEnd)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	writeN(t, s, 7)
	c, err = OpenConsumerAt(dir, "fwd.new", storage.Traces, StartEnd)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	recs, bytes := s.Lag(storage.Traces, c.Committed())
	lag, err := ReadConsumerLag(dir, "fwd.new", storage.Traces)
	if err != nil {
		t.Fatal(err)
	}
	if lag.Records != 7 || recs != 7 || bytes == 0 || lag.Bytes != bytes || lag.Oldest.IsZero() {
		t.Fatalf("Lag = %d records %d bytes, ReadConsumerLag = %+v; want 7 records and equal bytes", recs, bytes, lag)
	}
	if got := readAll(t, c); got != 7 {
		t.Fatalf("read %d records, want the 7 written after the consumer was created", got)
	}
	if err := c.Commit(); err != nil {
		t.Fatal(err)
	}
	if recs, bytes := s.Lag(storage.Traces, c.Committed()); recs != 0 || bytes != 0 {
		t.Fatalf("lag after reading everything: %d records, %d bytes", recs, bytes)
	}
	if _, err := ReadConsumerLag(dir, "no.such", storage.Traces); err != nil {
		t.Fatalf("a consumer without a cursor: %v (want the lag of the whole log)", err)
	}
	if _, err := OpenConsumerAt(dir, "bad/name", storage.Traces, StartEnd); err == nil || errors.Is(err, ErrCorrupt) {
		t.Fatalf("bad name: %v", err)
	}
}
