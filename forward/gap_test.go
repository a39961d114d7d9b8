package forward

import (
	"bytes"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// lockedBuffer is a bytes.Buffer a logger and a test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestForwardRetentionGap: -storage-max-bytes deletes records a down
// destination has not received. When it is back, forwarding delivers what
// is left, names the gap in its log (not as a failure to read the log,
// which waited the longest backoff for each gap), and every record is
// either delivered or counted lost. Retention counts the loss when it
// deletes (so it shows while the destination is still down), from the
// committed cursor: the records read before the deletion and delivered
// after it (the in-flight window, and the rest of the segment being read,
// whose open file outlives its deletion) may be counted too, never more.
func TestForwardRetentionGap(t *testing.T) {
	dir := t.TempDir()
	set := metrics.NewSet()
	st, err := disk.Open(dir, disk.Options{HoldPrefix: CursorPrefix, Logger: quiet(), MaxSegmentSize: 1024, MaxBytes: 8 << 10, OnLoss: CountLoss(set)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sink, addr := destination(t, nil)
	sink.down.Store(true)
	d := mustParse(t, "dst=grpc://"+addr+"?retry-initial-backoff=10ms&retry-max-backoff=50ms")
	var logs lockedBuffer
	f, err := New(Options{DataDir: dir, Store: st, Metrics: set, Logger: slog.New(slog.NewTextHandler(&logs, nil))}, []Destination{d})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const stored = 200
	store(t, st, 0, stored)
	lostSeries := `otlplite_forward_lost_records_total{destination="dst",signal="traces"}`
	lost := func() int {
		n, _ := strconv.Atoi(metricValue(set, lostSeries))
		return n
	}
	waitFor(t, "retention to delete what the destination has not received", func() bool { return lost() > 0 })
	sink.down.Store(false)
	defer func() {
		if t.Failed() {
			n, total := sink.distinct()
			t.Logf("delivered %d distinct (%d in all), lost %d, lag %s", n, total, lost(), metricValue(set, `otlplite_forward_lag_records{destination="dst",signal="traces"}`))
		}
	}()
	waitFor(t, "the records retention left to be delivered", func() bool {
		n, _ := sink.distinct()
		return n > 0 && n+lost() >= stored && metricValue(set, `otlplite_forward_lag_records{destination="dst",signal="traces"}`) == "0"
	})
	perSegment := 1024/len(request(0)) + 1
	if n, _ := sink.distinct(); n+lost() > stored+d.InFlight+perSegment {
		t.Fatalf("delivered %d and counted %d lost of %d stored: more than the in-flight window (%d) and a segment (%d) counted lost that was delivered", n, lost(), stored, d.InFlight, perSegment)
	}
	out := logs.String()
	if !strings.Contains(out, "records deleted by retention before they were forwarded") {
		t.Fatalf("the gap is not named in the log:\n%s", out)
	}
	if strings.Contains(out, "cannot read the log") {
		t.Fatalf("the gap is logged as a failure to read the log:\n%s", out)
	}
}
