package kafka

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
)

// The exported defaults (flag defaults) and otlp's signal table agree.
func TestDefaultTopics(t *testing.T) {
	for sig, want := range map[otlp.Signal]string{otlp.Traces: DefaultTracesTopic, otlp.Metrics: DefaultMetricsTopic, otlp.Logs: DefaultLogsTopic, otlp.Profiles: DefaultProfilesTopic} {
		if got := sig.Info().KafkaTopic; got != want {
			t.Errorf("%s: table says %q, default is %q", sig, got, want)
		}
	}
}

// Finding 9: Kafka does not tell '.' from '_' in topic names, so under a
// topic per tenant "a.b" and "a_b" would share a topic (whichever came
// first wins it, the other's writes fail for good). A tenant name with a
// '.' is refused before anything is produced (not stored, not retryable);
// every other name has a topic of its own, under Kafka's reading too.
func TestTopicPerTenantInjective(t *testing.T) {
	s, err := Open(Config{Brokers: []string{"127.0.0.1:1"}, TopicPerTenant: "{topic}_{tenant}"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := otlp.WithTenant(context.Background(), "a.b")
	err = s.Write(ctx, storage.Traces, []byte{0x0a, 0x00}, 1)
	if !errors.Is(err, storage.ErrRejected) || !errors.Is(err, storage.ErrNotStored) || !strings.Contains(err.Error(), "cannot contain '.'") || strings.Contains(err.Error(), "a.b") {
		t.Fatalf("tenant a.b: %v, want a refusal wrapping ErrRejected and ErrNotStored, not quoting the name", err)
	}
	// Every name of the allowed alphabet without '.', short ones
	// exhaustively: no two share a topic once '.' reads as '_'.
	alphabet := "aZ0_-"
	names, level := []string{}, []string{""}
	for range 4 {
		var next []string
		for _, n := range level {
			for _, c := range alphabet {
				next = append(next, n+string(c))
			}
		}
		names, level = append(names, next...), next
	}
	seen := map[string]string{}
	for _, n := range names {
		if n == "" || checkTopicTenant(n) != nil {
			continue
		}
		for _, sig := range storage.Signals {
			topic := topicFold(s.tenantTopic(sig, n))
			if prev, dup := seen[topic]; dup {
				t.Fatalf("%s of %q and %s share the topic %s", sig, n, prev, topic)
			}
			seen[topic] = sig.String() + " of " + n
		}
	}
}

// Two signals' topics that differ only next to {tenant} could give two
// tenants one topic: refused when the sink opens.
func TestTopicPerTenantSignalsApart(t *testing.T) {
	open := func(cfg Config) error {
		cfg.Brokers = []string{"127.0.0.1:1"}
		s, err := Open(cfg)
		if err == nil {
			s.Close()
		}
		return err
	}
	for name, cfg := range map[string]Config{
		"defaults, topic first":  {TopicPerTenant: "{topic}_{tenant}"},
		"defaults, tenant first": {TopicPerTenant: "{tenant}.{topic}"},
		"one topic for all":      {TopicPerTenant: "{topic}_{tenant}", TracesTopic: "otlp", MetricsTopic: "otlp", LogsTopic: "otlp", ProfilesTopic: "otlp"},
	} {
		if err := open(cfg); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, cfg := range map[string]Config{
		// tenant "a_x" of spans and tenant "a" of logs: a_x_spans.
		"suffix inside another": {TopicPerTenant: "{tenant}_{topic}", TracesTopic: "spans", LogsTopic: "x_spans"},
		"dot and underscore":    {TopicPerTenant: "{topic}.{tenant}", TracesTopic: "t", LogsTopic: "t_x"},
	} {
		if err := open(cfg); err == nil || !strings.Contains(err.Error(), "differ only next to {tenant}") {
			t.Errorf("%s: %v, want a refusal", name, err)
		}
	}
}

// With a topic per tenant and auto.create.topics.enable, every new tenant
// name a client sends creates topics on the brokers: names a client chose
// (otlp.WithClientTenant: a header) count against MaxClientTopics, as
// every other topic a client may name; the operator's tenants
// (otlp.WithTenant) never do. A refusal stores nothing.
func TestTopicPerTenantClientNamesBounded(t *testing.T) {
	s, err := Open(Config{Brokers: []string{"127.0.0.1:1"}, TopicPerTenant: "{topic}_{tenant}", MaxClientTopics: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// A deadline already passed: admitted writes fail at once, at the
	// produce, after admission decided.
	dead, cancel := context.WithDeadline(context.Background(), time.Now())
	defer cancel()
	write := func(ctx context.Context) error {
		return s.Write(ctx, storage.Traces, []byte{0x0a, 0x00}, 1)
	}
	for _, name := range []string{"client-1", "client-2", "client-1"} {
		if err := write(otlp.WithClientTenant(dead, name)); errors.Is(err, storage.ErrRejected) {
			t.Fatalf("%s: %v", name, err)
		}
	}
	err = write(otlp.WithClientTenant(dead, "client-3"))
	if !errors.Is(err, storage.ErrRejected) || !errors.Is(err, storage.ErrNotStored) || !strings.Contains(err.Error(), "-kafka-max-client-topics") {
		t.Fatalf("a third client-named tenant: %v, want a refusal", err)
	}
	for i := range 5 {
		if err := write(otlp.WithTenant(dead, fmt.Sprintf("operator-%d", i))); errors.Is(err, storage.ErrRejected) {
			t.Fatalf("an operator's tenant refused: %v", err)
		}
	}
	if tn, ok := otlp.TenantFrom(otlp.WithClientTenant(context.Background(), "x")); tn != "x" || !ok {
		t.Fatalf("TenantFrom of a client tenant: %q %v", tn, ok)
	}
}
