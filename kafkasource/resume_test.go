package kafkasource

import (
	"context"
	"log/slog"
	"os"
	"testing"

	"github.com/VictoriaMetrics/metrics"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage/discard"
)

// A member given a partition starts after the contiguous run of offsets
// the log holds from the committed one on (stored records, keyed by
// position), not at the committed one: offsets 5, 6, 7 stored and 9, the
// committed offset 5, resume at 8 (9 is past a gap: read again, answered by
// the window). A partition whose committed offset the log does not hold,
// or without a committed offset, starts where it would have.
func TestResumeAfterWhatTheLogHolds(t *testing.T) {
	body, err := os.ReadFile("../testdata/otlp/traces_all_fields.pb")
	if err != nil {
		t.Fatal(err)
	}
	p := ingest.New(ingest.Config{Sink: &discard.Sink{}})
	for _, key := range []string{
		"kafka/CL/otlp_spans/0/5", "kafka/CL/otlp_spans/0/6", "kafka/CL/otlp_spans/0/7", "kafka/CL/otlp_spans/0/9",
		"kafka/CL/otlp_spans/1/2", "kafka/OTHER/otlp_spans/2/0", "kafka/CL/otlp_spans/2/1",
	} {
		if _, err := p.Export(context.Background(), ingest.Request{Transport: ingest.Kafka, Signal: otlp.Traces, Body: body, IdempotencyKey: key}); err != nil {
			t.Fatal(err)
		}
	}
	c := &Consumer{p: p, cluster: "CL", clusterKnown: make(chan struct{}), log: slog.New(slog.DiscardHandler),
		resumed: metrics.NewSet().NewCounter("resumed")}
	close(c.clusterKnown)
	at := func(o int64) kgo.Offset { return kgo.NewOffset().At(o) }
	offs := map[string]map[int32]kgo.Offset{"otlp_spans": {
		0: at(5),                     // 5, 6, 7 held: resume at 8
		1: at(4),                     // 2 held, 4 not: unchanged
		2: kgo.NewOffset().AtStart(), // nothing committed: unchanged (0 is another cluster's)
		3: at(0),                     // nothing held
	}}
	got, err := c.resumeFromLog(context.Background(), offs)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int32]int64{0: 8, 1: 4, 2: -2, 3: 0}
	for part, w := range want {
		if o := got["otlp_spans"][part].EpochOffset().Offset; o != w {
			t.Errorf("partition %d starts at %d, want %d", part, o, w)
		}
	}
	if n := c.resumed.Get(); n != 3 {
		t.Errorf("resumed %d offsets, want 3", n)
	}
}

func TestParseRecordKey(t *testing.T) {
	for in, ok := range map[string]bool{"t/0/5": true, "a.b-c_d/12/99": true, "/0/5": false, "t/x/5": false, "t/0/-1": false, "0123abcd": false} {
		_, _, got := parseRecordKey(in)
		if got != ok {
			t.Errorf("parseRecordKey(%q) ok=%v, want %v", in, got, ok)
		}
	}
	tp, off, _ := parseRecordKey("otlp_spans/3/12345")
	if tp.topic != "otlp_spans" || tp.partition != 3 || off != 12345 {
		t.Errorf("parsed %v %d", tp, off)
	}
}
