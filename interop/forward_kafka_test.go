package interop

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TestForwardKafka: otlp-lite forwards from its disk log to Kafka (the
// franz-go project's kfake broker, speaking the Kafka protocol) that is not
// running yet: clients are acknowledged after the local fsync, and once
// the broker comes up every acknowledged span reaches the topic.
func TestForwardKafka(t *testing.T) {
	addr := freeAddr(t)
	_, portStr, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portStr)
	dataDir := t.TempDir()
	srv, admin := startForwarder(t, dataDir, "k=kafka://"+addr+"/?signals=traces&topic-traces=fwd_spans&retry-initial-backoff=50ms&retry-max-backoff=500ms")
	conn := srv.dial(t)
	want := map[string]bool{}
	for i := range 20 {
		p := fmt.Sprintf("kafka%d", i)
		if err := exportTraces(conn, fwdRequest(p, 3)); err != nil {
			t.Fatal(err)
		}
		for j := range 3 {
			want[fmt.Sprintf("%s-%d", p, j)] = true
		}
	}
	waitScrape(t, admin, `otlplite_forward_state{destination="k",state="backing_off"}`, "1")

	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port), kfake.AllowAutoTopicCreation())
	if err != nil {
		t.Fatalf("cannot start kfake on %s: %v", addr, err)
	}
	defer c.Close()
	waitScrape(t, admin, `otlplite_forward_lag_records{destination="k",signal="traces"}`, "0")
	srv.stop()

	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("fwd_spans"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got := map[string]int{}
	deadline := time.Now().Add(60 * time.Second)
	for len(got) < len(want) && time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		fetches := cl.PollFetches(ctx)
		cancel()
		fetches.EachRecord(func(r *kgo.Record) {
			var req coltracepb.ExportTraceServiceRequest
			if err := proto.Unmarshal(r.Value, &req); err != nil {
				t.Errorf("a Kafka record is not an ExportTraceServiceRequest: %v", err)
				return
			}
			for _, rs := range req.ResourceSpans {
				for _, ss := range rs.ScopeSpans {
					for _, sp := range ss.Spans {
						for _, kv := range sp.Attributes {
							if kv.Key == fwdIDKey {
								got[kv.Value.GetStringValue()]++
							}
						}
					}
				}
			}
		})
	}
	for id := range want {
		if got[id] == 0 {
			t.Fatalf("span %s never reached Kafka (%d of %d did)", id, len(got), len(want))
		}
	}
}
