package kafka_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/kafka"
)

// The tenant of a write (otlp.WithTenant) is every record's "tenant"
// header; a write without one has no header.
func TestTenantHeader(t *testing.T) {
	bs := brokers(t)
	tr, me, lo := topics(t, bs)
	s := open(t, kafka.Config{Brokers: bs, TracesTopic: tr, MetricsTopic: me, LogsTopic: lo})
	base := payload(t, "traces_all_fields.pb")
	want := map[string]string{} // request → tenant ("" none)
	for i, tenant := range []string{"team-a", "", "team-b"} {
		msg := append(append([]byte(nil), base...), idResource(fmt.Sprintf("tenant-%d", i))...)
		ctx := context.Background()
		if tenant != "" {
			ctx = otlp.WithTenant(ctx, tenant)
		}
		if err := s.Write(ctx, storage.Traces, msg, items(t, storage.Traces, msg)); err != nil {
			t.Fatal(err)
		}
		want[string(msg)] = tenant
	}
	consume(t, bs, func(r *kgo.Record) bool {
		tenant, ok := want[string(r.Value)]
		if !ok {
			t.Errorf("unexpected record")
			return false
		}
		got := ""
		for _, h := range r.Headers {
			if h.Key == kafka.TenantHeader {
				got = string(h.Value)
			}
		}
		if got != tenant {
			t.Errorf("record of tenant %q has tenant header %q", tenant, got)
		}
		delete(want, string(r.Value))
		return len(want) == 0
	}, tr)
	if len(want) != 0 {
		t.Errorf("%d records not found", len(want))
	}
}

// A topic-per-tenant pattern is checked when parsed and when the sink
// opens: both placeholders once, only characters Kafka allows around
// them, topics no longer than Kafka's limit for the longest tenant name,
// and not with TopicFromAttribute (clients would choose the topic).
func TestTopicPerTenantConfig(t *testing.T) {
	for _, p := range []string{"{topic}_{tenant}", "{tenant}.{topic}", "acme-{topic}-{tenant}_v1"} {
		if err := kafka.CheckTopicPerTenant(p); err != nil {
			t.Errorf("%q: %v", p, err)
		}
	}
	for p, want := range map[string]string{
		"otlp_spans_{tenant}":       "{topic} exactly once",
		"{topic}":                   "{tenant} exactly once",
		"{topic}_{tenant}_{tenant}": "{tenant} exactly once",
		"{topic}/{tenant}":          "byte 0x2f",
		"{topic} {tenant}":          "byte 0x20",
		"{topic}_{Tenant}{tenant}":  "byte 0x7b",
	} {
		err := kafka.CheckTopicPerTenant(p)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one saying %q", p, err, want)
		}
	}
	open := func(cfg kafka.Config) error {
		cfg.Brokers = []string{"127.0.0.1:1"}
		s, err := kafka.Open(cfg)
		if err == nil {
			s.Close()
		}
		return err
	}
	if err := open(kafka.Config{TopicPerTenant: "{topic}_{tenant}"}); err != nil {
		t.Errorf("valid pattern refused: %v", err)
	}
	for name, c := range map[string]struct {
		cfg  kafka.Config
		want string
	}{
		"bad pattern":    {kafka.Config{TopicPerTenant: "{tenant}"}, "{topic} exactly once"},
		"with attribute": {kafka.Config{TopicPerTenant: "{topic}_{tenant}", TopicFromAttribute: "topic"}, "cannot both be set"},
		"too long":       {kafka.Config{TopicPerTenant: "{topic}_{tenant}", LogsTopic: strings.Repeat("l", 99)}, "more than Kafka's 249"},
	} {
		err := open(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", name, err, c.want)
		}
	}
}
