package interop

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
)

// TestKafkaConsumeCorruptBatch: a record batch whose compressed records
// section does not decompress (garbage under the gzip, lz4 and zstd codecs,
// a snappy block whose header claims far more than its few bytes can hold)
// sits between valid records on one partition. franz-go stops a partition
// at a batch it cannot decompress and fetches it again for ever ("The
// client cannot progress"): one corrupt batch written by anyone who may
// produce to the topic would stop the partition for good, and every record
// after it would wait until retention deletes it. The consumer skips such
// a batch as it skips one too large to decompress, counts it, and stores
// the records after it.
func TestKafkaConsumeCorruptBatch(t *testing.T) {
	brokers := newKfake(t)
	const topic = "corrupt_spans"
	// A snappy block claiming 60 MiB with 5 literal bytes: a real
	// snappy block of 10 bytes decodes to at most a few hundred.
	lie := binary.AppendUvarint(nil, 60<<20)
	lie = append(lie, 0x10, 'h', 'e', 'l', 'l', 'o')
	corrupt := []bombCompressor{
		{[]byte("not gzip at all, not even close"), kgo.CodecGzip},
		{[]byte("not lz4 at all, not even close"), kgo.CodecLz4},
		{[]byte("not zstd at all, not even close"), kgo.CodecZstd},
		{lie, kgo.CodecSnappy},
	}
	good := 0
	produceGood := func() {
		produceTo(t, brokers, []*kgo.Record{{Topic: topic, Partition: 0, Value: seqRequest(good, 2)}})
		good++
	}
	produceGood()
	for _, c := range corrupt {
		produceTo(t, brokers, []*kgo.Record{{Topic: topic, Partition: 0, Value: randomBytes(1024)}}, kgo.WithCompressor(c))
		produceGood()
	}
	hc := startHostileConsumer(t, brokers, topic, nil, nil)
	hc.sink.waitItems(t, [otlp.MaxSignal + 1]int{storage.Traces: 2 * good}, 30*time.Second)
	waitMetric(t, hc.set, `otlplite_kafka_consume_corrupt_batches_total`, len(corrupt))
	waitMetric(t, hc.set, `otlplite_kafka_consume_skipped_batches_total{topic="`+topic+`"}`, len(corrupt))
	waitCommitted(t, brokers, "hostile", []string{topic}, 30*time.Second)
	hc.stop(t)
	if n := strings.Count(hc.log.String(), "cannot fetch from Kafka; retrying"); n > 0 {
		t.Errorf("%d fetch retries logged, want none: a corrupt batch is skipped, not fetched again", n)
	}
}
