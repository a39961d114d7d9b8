package forward

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/VictoriaMetrics/easyproto"
	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/internal/hostiledest"
	"github.com/otlp-lite/otlp-lite/otlpclient"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/deadletter"
)

// hostileDestination is a destination of protocol p reaching srv through
// dial, with a 5 s timeout and retries backing off from 100 ms to 1 s.
func hostileDestination(p Protocol, dial otlpclient.DialFunc) Destination {
	return Destination{
		Name: "hostile", Protocol: p, Endpoint: "pipe:1", Signals: []storage.Signal{storage.Traces},
		Timeout: 5 * time.Second, Backoff: otlpclient.Backoff{Initial: 100 * time.Millisecond, Max: time.Second},
		InFlight: 2, Dial: dial,
	}
}

// received reports which of records 0..n-1 the destination acknowledged
// as stored.
func received(srv *hostiledest.Server, n int) (got int) {
	seen := map[int]bool{}
	for _, req := range srv.Accepted() {
		if k := recordNumber(req); k >= 0 && k < n {
			seen[k] = true
		}
	}
	return len(seen)
}

func counter(set *metrics.Set, name string) int {
	v, _ := strconv.Atoi(metricValue(set, name+`{destination="hostile",signal="traces"}`))
	return v
}

// TestForwardHostileDestination forwards six records to a destination
// that misbehaves, for 15 seconds, each way hostiledest knows, over each
// protocol, then turns honest: forwarding never counts as sent what the
// destination did not acknowledge as its protocol's success (finding 14:
// HTTP 200 with a garbage body was counted sent), attempts stay about one
// a second (finding 10: a RetryInfo or Retry-After overflowing into
// 10,000 attempts a second), a stalled stream is replaced after timeout=
// with the state backing_off (finding 11: it stopped forwarding for
// good, state up), a redirect leaves the destination failing, and once
// the destination is honest every record arrives: nothing acknowledged
// is lost.
func TestForwardHostileDestination(t *testing.T) {
	const n = 6
	for _, p := range []Protocol{GRPC, HTTP, Stream} {
		for _, fault := range hostiledest.Faults() {
			t.Run(p.String()+"/"+fault.String(), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					srv, dial := hostiledest.ListenPipe()
					defer srv.Close()
					srv.SetFault(fault)
					dir := t.TempDir()
					st := openStore(t, dir)
					defer st.Close()
					store(t, st, 0, n)
					set := metrics.NewSet()
					f, err := New(Options{DataDir: dir, Store: st, Metrics: set, Logger: quiet()}, []Destination{hostileDestination(p, dial)})
					if err != nil {
						t.Fatal(err)
					}
					defer f.Close()
					var sawState State
					for range 15 {
						time.Sleep(time.Second)
						sawState = max(sawState, f.dests[0].State())
					}
					attempts := srv.Attempts()
					if attempts > 20*(n+1) {
						t.Fatalf("%d attempts in 15 seconds: a flood", attempts)
					}
					sent := counter(set, "otlplite_forward_sent_records_total")
					switch fault {
					case hostiledest.EndlessPartial:
						// A partial success is a delivery: counted sent, the
						// records kept whole as dead letters.
						if sent != n || counter(set, "otlplite_forward_dead_lettered_records_total") != n {
							t.Fatalf("endless partial successes: %d sent, %d dead-lettered; want %d each", sent, counter(set, "otlplite_forward_dead_lettered_records_total"), n)
						}
						return
					case hostiledest.HugeHeaders:
						// Stored by the destination, but its answer is
						// refused: resent until answered within bounds.
					default:
						if sent != 0 {
							t.Fatalf("against %v, %d records counted sent", fault, sent)
						}
					}
					if d := counter(set, "otlplite_forward_dead_lettered_records_total"); d != 0 {
						t.Fatalf("against %v, %d records dead-lettered: a destination's misbehaviour is not a verdict on the data", fault, d)
					}
					want := BackingOff
					if fault == hostiledest.Redirect {
						want = Failing
					}
					if sawState != want {
						t.Fatalf("against %v the worst state was %v, want %v", fault, sawState, want)
					}
					srv.SetFault(hostiledest.Honest)
					for i := 0; received(srv, n) < n || counter(set, "otlplite_forward_sent_records_total") < n; i++ {
						if i == 600 {
							t.Fatalf("10 minutes after the destination turned honest: %d of %d records received, %d counted sent", received(srv, n), n, counter(set, "otlplite_forward_sent_records_total"))
						}
						time.Sleep(time.Second)
					}
				})
			})
		}
	}
}

// TestForwardDeadLettersBounded: a destination that refuses every record
// for good (HTTP 400) makes each a dead letter; the dead-letter store stays
// within its bound (deadletter.Bound: at most 1.5 × MaxBytes) while it
// takes four times as much. Finding 13: with -storage-max-bytes 1MiB the
// directory reached 4.8 MiB, 3.8 MiB of it dead letters.
func TestForwardDeadLettersBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, dial := hostiledest.ListenPipe()
		defer srv.Close()
		srv.SetFault(hostiledest.RefuseData)
		dir := t.TempDir()
		st := openStore(t, dir)
		defer st.Close()
		const bound = 256 << 10
		pad := bytes.Repeat([]byte("p"), 8<<10)
		const n = 128 // 1 MiB of records
		for i := range n {
			if err := st.Write(context.Background(), storage.Traces, paddedRequest(i, pad), 1); err != nil {
				t.Fatal(err)
			}
		}
		set := metrics.NewSet()
		f, err := New(Options{DataDir: dir, Store: st, Metrics: set, Logger: quiet(), DeadLetter: deadletter.Bound{MaxBytes: bound}},
			[]Destination{hostileDestination(HTTP, dial)})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for i := 0; counter(set, "otlplite_forward_dead_lettered_records_total") < n; i++ {
			if i == 600 {
				t.Fatalf("%d of %d records dead-lettered after 10 minutes", counter(set, "otlplite_forward_dead_lettered_records_total"), n)
			}
			time.Sleep(time.Second)
		}
		size := dirSize(t, DeadLetterDir(dir, "hostile"))
		if size > bound*3/2 {
			t.Fatalf("the dead letters take %d bytes, over 1.5 × their %d-byte bound", size, bound)
		}
		t.Logf("1 MiB of refused records: %d bytes of dead letters (bound %d)", size, bound)
	})
}

// paddedRequest is request(n) whose span name is followed by pad: a
// larger valid record.
func paddedRequest(n int, pad []byte) []byte {
	var mp easyproto.MarshalerPool
	m := mp.Get()
	sp := m.MessageMarshaler().AppendMessage(1).AppendMessage(2).AppendMessage(2)
	sp.AppendBytes(1, bytes.Repeat([]byte{1}, 16))
	sp.AppendBytes(2, bytes.Repeat([]byte{2}, 8))
	sp.AppendString(5, fmt.Sprintf("rec-%d;%s", n, pad))
	return m.Marshal(nil)
}

func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			total += info.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return total
}

// TestForwardDeadLetterStoreFails: a destination refuses every record for
// good while their dead letters cannot be written (the dead-letter store
// refuses every write, as on a full or failing disk). The cursor
// waits a minute for the store, then counts each record lost and moves
// on: holding it for ever kept retention from freeing the log, and a disk
// filled by the log (no -storage-max-bytes) refused every request until a
// restart (issue 21, a moment of finding 12).
func TestForwardDeadLetterStoreFails(t *testing.T) {
	const n = 3
	synctest.Test(t, func(t *testing.T) {
		srv, dial := hostiledest.ListenPipe()
		defer srv.Close()
		srv.SetFault(hostiledest.RefuseData)
		dir := t.TempDir()
		st := openStore(t, dir)
		defer st.Close()
		set := metrics.NewSet()
		var logs lockedBuffer
		d := hostileDestination(HTTP, dial)
		f, err := New(Options{DataDir: dir, Store: st, Metrics: set, Logger: slog.New(slog.NewTextHandler(&logs, nil))}, []Destination{d})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		// A closed store refuses every write (storage.ErrClosed), as a
		// full disk refuses every new segment.
		if err := f.dests[0].dead.Close(); err != nil {
			t.Fatal(err)
		}
		store(t, st, 0, n)
		time.Sleep(deadLetterPatience / 2)
		if lost := counter(set, "otlplite_forward_lost_records_total"); lost != 0 {
			t.Fatalf("%d records counted lost before the store had its minute", lost)
		}
		for i := 0; counter(set, "otlplite_forward_lost_records_total") < n; i++ {
			if i == 600 {
				t.Fatalf("10 minutes on: %d of %d records counted lost, the cursor still waits:\n%s", counter(set, "otlplite_forward_lost_records_total"), n, logs.String())
			}
			time.Sleep(time.Second)
		}
		if v := metricValue(set, `otlplite_forward_lag_records{destination="hostile",signal="traces"}`); v != "0" {
			t.Fatalf("lag %s records after every record was given up", v)
		}
		if !strings.Contains(logs.String(), "its dead letter could not be written") {
			t.Fatalf("the loss is not logged:\n%s", logs.String())
		}
	})
}
