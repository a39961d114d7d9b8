package kafkasource

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/otlp-lite/otlp-lite/otlp"
)

// TestRecordKey: a record's key names its cluster, topic, partition and
// offset, so re-reading it gives the same key and no two records share
// one; a topic long enough to push the key past otlp.MaxIdempotencyKeyLen
// is hashed, still distinct per offset.
func TestRecordKey(t *testing.T) {
	r := &kgo.Record{Topic: "otlp_spans", Partition: 3, Offset: 12345}
	if got := recordKey("AbC-cluster", r); got != "kafka/AbC-cluster/otlp_spans/3/12345" {
		t.Fatalf("key %q", got)
	}
	if recordKey("AbC-cluster", r) == recordKey("other", r) {
		t.Fatal("two clusters share a key")
	}
	long := &kgo.Record{Topic: strings.Repeat("t", 249), Partition: 0, Offset: 1}
	k1 := recordKey("c", long)
	long.Offset = 2
	k2 := recordKey("c", long)
	if len(k1) > otlp.MaxIdempotencyKeyLen || k1 == k2 || !strings.HasPrefix(k1, "kafka/") {
		t.Fatalf("long-topic keys %q, %q", k1, k2)
	}
}

func BenchmarkRecordKey(b *testing.B) {
	r := &kgo.Record{Topic: "otlp_spans", Partition: 3, Offset: 12345678}
	b.ReportAllocs()
	for b.Loop() {
		recordKey("4L6g3nShT-eMCtK--X86sw", r)
	}
}
