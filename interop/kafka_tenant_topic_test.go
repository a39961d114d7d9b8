package interop

import (
	"context"
	"encoding/binary"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
	"github.com/otlp-lite/otlp-lite/storage/kafka"
)

// TestKafkaTopicPerTenant: otlp-lite with -storage kafka, tenancy from
// X-Scope-OrgID and -kafka-topic-per-tenant '{topic}_{tenant}'. The
// OpenTelemetry Go SDK sends spans as team-a, team-b and without a tenant
// header; each tenant's spans land, every one once, on its own topic
// (<traces topic>_<tenant>, the unnamed ones under the default tenant's),
// each record carrying its tenant header, and no other topic of the
// pattern appears. A second otlp-lite then consumes them all with one
// regular expression (-kafka-consume-topic-traces '^<base>_.*') into its
// disk log, each span stored once under the tenant it was sent as. With
// scripts/kafka/test.sh the broker is a real Kafka; otherwise kfake.
func TestKafkaTopicPerTenant(t *testing.T) {
	brokers, _, sfx := kafkaForTest(t)
	base := "tt" + sfx
	srv := startServer(t, t.TempDir(), "-storage", "kafka", "-kafka-brokers", strings.Join(brokers, ","),
		"-kafka-produce-timeout", "30s", "-kafka-topic-traces", base,
		"-tenant-header", "X-Scope-OrgID", "-kafka-topic-per-tenant", "{topic}_{tenant}")

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	tenants := []string{"team-a", "team-b", ""} // "": no header
	const spans = 30
	for i, tenant := range tenants {
		opts := []otlptracegrpc.Option{otlptracegrpc.WithEndpoint(srv.addr), otlptracegrpc.WithInsecure(),
			otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false})}
		if tenant != "" {
			opts = append(opts, otlptracegrpc.WithHeaders(map[string]string{"X-Scope-OrgID": tenant}))
		}
		exp, err := otlptracegrpc.New(ctx, opts...)
		if err != nil {
			t.Fatal(err)
		}
		for from := 0; from < spans; from += 10 {
			if err := exp.ExportSpans(ctx, tenantSpans(i, from, 10)); err != nil {
				t.Fatalf("tenant %q: %v", tenant, err)
			}
		}
		if err := exp.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	}
	srv.stop()

	// Every topic of the pattern, whatever its tenant, is read: a span
	// on a topic not its tenant's would show.
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeRegex(),
		kgo.ConsumeTopics("^"+regexp.QuoteMeta(base)+"_.*"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.MetadataMinAge(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	wantTopic := map[string]string{"team-a": base + "_team-a", "team-b": base + "_team-b", otlp.DefaultTenant: base + "_" + otlp.DefaultTenant}
	got := map[string]int{}
	seen := map[[8]byte]bool{}
	for total := 0; total < len(tenants)*spans && ctx.Err() == nil; {
		fs := cl.PollFetches(ctx)
		fs.EachError(func(topic string, p int32, err error) {
			if ctx.Err() == nil {
				t.Logf("fetch %s/%d: %v", topic, p, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			tenant := ""
			for _, h := range r.Headers {
				if h.Key == kafka.TenantHeader {
					tenant = string(h.Value)
				}
			}
			if r.Topic != wantTopic[tenant] {
				t.Errorf("record with tenant header %q on topic %s, want %s", tenant, r.Topic, wantTopic[tenant])
			}
			var req coltracepb.ExportTraceServiceRequest
			if err := proto.Unmarshal(r.Value, &req); err != nil {
				t.Errorf("record on %s: %v", r.Topic, err)
				return
			}
			for _, sp := range spansOf(&req) {
				id := [8]byte(sp.GetSpanId())
				sender := tenants[binary.BigEndian.Uint32(id[:4])-1]
				if sender == "" {
					sender = otlp.DefaultTenant
				}
				if sender != tenant {
					t.Errorf("span %x sent as %s is stored under tenant %q", id, sender, tenant)
				}
				if seen[id] {
					t.Errorf("span %x stored twice", id)
				}
				seen[id] = true
				got[r.Topic]++
				total++
			}
		})
	}
	want := map[string]int{}
	for _, topic := range wantTopic {
		want[topic] = spans
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("spans per topic: %v, want %v", got, want)
	}

	// The store's side: one expression reads every tenant's topic.
	storeDir := t.TempDir()
	group := "tt-store" + sfx
	store := startServer(t, storeDir, "-kafka-consume", strings.Join(brokers, ","), "-kafka-consume-group", group,
		"-kafka-consume-topic-traces", "^"+regexp.QuoteMeta(base)+"_.*", "-kafka-consume-topic-metrics", "",
		"-kafka-consume-topic-logs", "", "-kafka-consume-topic-profiles", "")
	waitCommitted(t, brokers, group, []string{wantTopic["team-a"], wantTopic["team-b"], wantTopic[otlp.DefaultTenant]}, 90*time.Second)
	store.stop()
	stored := map[string]int{}
	storedSeen := map[[8]byte]bool{}
	err = disk.Scan(storeDir, storage.Traces, func(r disk.Record) error {
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(r.Data, &req); err != nil {
			return err
		}
		for _, sp := range spansOf(&req) {
			id := [8]byte(sp.GetSpanId())
			sender := tenants[binary.BigEndian.Uint32(id[:4])-1]
			if sender == "" {
				sender = otlp.DefaultTenant
			}
			if sender != r.Tenant {
				t.Errorf("span %x sent as %s is stored by the consumer under tenant %q", id, sender, r.Tenant)
			}
			if storedSeen[id] {
				t.Errorf("span %x stored twice by the consumer", id)
			}
			storedSeen[id] = true
			stored[r.Tenant]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wantStored := map[string]int{"team-a": spans, "team-b": spans, otlp.DefaultTenant: spans}
	if fmt.Sprint(stored) != fmt.Sprint(wantStored) {
		t.Errorf("spans stored per tenant by the consumer: %v, want %v", stored, wantStored)
	}
}
