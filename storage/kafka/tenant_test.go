package kafka_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/kafka"
)

// The tenant of a write (storage.WithTenant) is every record's "tenant"
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
			ctx = storage.WithTenant(ctx, tenant)
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
