package kafkasource

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/internal/kafkaconn"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpclient"
	"github.com/otlp-lite/otlp-lite/storage"
)

// reviewSink fails its first fails writes with failWith, then stores;
// it records each write's tenant.
type reviewSink struct {
	mu       sync.Mutex
	failWith error
	fails    int
	writes   int
	items    int
	tenants  []string
}

func (s *reviewSink) Write(ctx context.Context, _ storage.Signal, _ []byte, items int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fails > 0 {
		s.fails--
		return s.failWith
	}
	s.writes++
	s.items += items
	t, _ := otlp.TenantFrom(ctx)
	s.tenants = append(s.tenants, t)
	return nil
}

func (s *reviewSink) Close() error { return nil }

// TestReviewStoreRecordClassification holds the Kafka source to what it
// did through handler.Ingest before issue 22 (handler/ingest_test.go now
// tests a helper that classifies on its own, not the source): a record no
// retry can store (not OTLP, refused by the sink for good) is
// dead-lettered and counted; one the sink cannot take now is retried until
// stored, never dead-lettered; every record is counted under transport
// "kafka"; the tenant header reaches the sink.
func TestReviewStoreRecordClassification(t *testing.T) {
	good := otlpclient.NewSpanGenerator(3, 1, 1).AppendBatch(nil)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct {
		name         string
		value        []byte
		sinkErr      error
		fails        int
		tenant       string
		wantDead     int
		wantStored   int
		wantRetries  bool
		wantTenantAt string
	}{
		{name: "valid", value: good, wantStored: 1},
		{name: "garbage", value: []byte{0xff, 0xff, 0xff}, wantDead: 1},
		{name: "sink refuses for good", value: good, sinkErr: storage.ErrRejected, fails: 1, wantDead: 1},
		{name: "sink unavailable, then stores", value: good, sinkErr: storage.ErrUnavailable, fails: 1, wantStored: 1, wantRetries: true},
		{name: "sink overloaded, then stores", value: good, sinkErr: fmt.Errorf("busy: %w", storage.ErrOverloaded), fails: 1, wantStored: 1, wantRetries: true},
		{name: "tenant header", value: good, tenant: "team-a", wantStored: 1, wantTenantAt: "team-a"},
		{name: "bad tenant header", value: good, tenant: "no/slash", wantStored: 1, wantTenantAt: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &reviewSink{failWith: tc.sinkErr, fails: tc.fails}
			dead := &reviewSink{}
			pset, cset := metrics.NewSet(), metrics.NewSet()
			rec := &kgo.Record{Topic: otlp.Traces.Info().KafkaTopic, Value: tc.value}
			if tc.tenant != "" {
				rec.Headers = []kgo.RecordHeader{{Key: kafkaconn.TenantHeader, Value: []byte(tc.tenant)}}
			}
			// Not in a synctest bubble: the pipeline's check workers live
			// until it is collected (runtime.AddCleanup), which a bubble
			// reports as a deadlock. A retry waits retryBackoff(0), 100 ms.
			func() {
				p := ingest.New(ingest.Config{Sink: sink, Logger: quiet, Metrics: pset})
				c, err := NewConsumer(ConsumerConfig{Brokers: []string{"127.0.0.1:9"}, Pipeline: p, DeadLetter: dead, Metrics: cset, Logger: quiet})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				if !c.storeRecord(ctx, rec) {
					t.Fatal("storeRecord did not finish the record")
				}
			}()
			if sink.writes != tc.wantStored || dead.writes != tc.wantDead {
				t.Errorf("%d stored, %d dead-lettered; want %d and %d", sink.writes, dead.writes, tc.wantStored, tc.wantDead)
			}
			if tc.wantTenantAt != "" || tc.tenant != "" {
				if len(sink.tenants) != 1 || sink.tenants[0] != tc.wantTenantAt {
					t.Errorf("tenants at the sink %q, want [%q]", sink.tenants, tc.wantTenantAt)
				}
			}
			var out bytes.Buffer
			cset.WritePrometheus(&out)
			if got := strings.Contains(out.String(), `otlplite_kafka_consume_dead_letter_records_total{topic="otlp_spans"} 1`); got != (tc.wantDead == 1) {
				t.Errorf("dead-letter counter says %v, want %v:\n%s", got, tc.wantDead == 1, out.String())
			}
			if got := !strings.Contains(out.String(), `otlplite_kafka_consume_retries_total{topic="otlp_spans"} 0`); got != tc.wantRetries {
				t.Errorf("retries counted: %v, want %v", got, tc.wantRetries)
			}
			out.Reset()
			pset.WritePrometheus(&out)
			if tc.wantStored == 1 && !strings.Contains(out.String(), `otelcol_receiver_accepted_spans_total{receiver="otlp",transport="kafka"} 3`) {
				t.Errorf("the stored record is not counted under transport kafka:\n%s", out.String())
			}
			for _, tr := range []string{"grpc", "grpc_stream", "http"} {
				if !strings.Contains(out.String(), `otelcol_receiver_accepted_spans_total{receiver="otlp",transport="`+tr+`"} 0`) {
					t.Errorf("the record is counted under transport %s", tr)
				}
			}
		})
	}
}

// TestReviewStoreRecordNotAStatus: an error of the pipeline that is not a
// status (none today: Export returns a *grpcwire.Status) must not make a
// record retried forever; this pins that Export keeps to its contract for
// every refusal the source relies on.
func TestReviewStoreRecordNotAStatus(t *testing.T) {
	p := ingest.New(ingest.Config{Sink: &reviewSink{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	for _, req := range []ingest.Request{
		{Transport: ingest.Kafka, Signal: 0, Body: []byte{1}},
		{Transport: ingest.Kafka, Signal: otlp.Traces, Body: []byte{0xff}},
		{Transport: ingest.Kafka, Signal: otlp.Traces, Body: []byte("{"), Format: ingest.JSON},
		{Transport: ingest.Kafka, Signal: otlp.Traces, Body: make([]byte, 65<<20)},
	} {
		_, err := p.Export(context.Background(), req)
		if _, ok := err.(otlp.Status); !ok || err == nil {
			t.Errorf("Export(%v, %d bytes) = %T %v, want an otlp.Status", req.Signal, len(req.Body), err, err)
			continue
		}
		if otlp.Retryable(err.(otlp.Status)) {
			t.Errorf("Export(%v, %d bytes) = %v: retryable, a Kafka record would be retried forever", req.Signal, len(req.Body), err)
		}
	}
}
