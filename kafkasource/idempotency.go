package kafkasource

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/otlp-lite/otlp-lite/internal/wait"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// Exactly once (issue 24, docs/exactly-once.md): each record is stored
// with an idempotency key (ingest.Request.IdempotencyKey) that names it in
// the cluster: the cluster's id, its topic, partition and offset. A record
// read again (after a crash or a SIGKILL before its offset was committed,
// a rebalance that hands its partition to another member, a group reset
// to an earlier offset) carries the same key, and a pipeline whose
// storage keeps a window of keys does not store it again. The consumer
// group is not part of the key: two groups reading one topic into one
// store would store each record twice, which is the duplicate this
// prevents.
//
// A member starts after what the log holds (resume.go): past the
// committed offset, the run of offsets whose keys the window holds as
// stored. Beyond the window (bounded by count and age) the committed
// offsets rule; what is read again within it is not stored again.

// recordKey is r's idempotency key in cluster: "kafka/CLUSTER/TOPIC/
// PARTITION/OFFSET", or, when a long topic name makes that longer than
// otlp.MaxIdempotencyKeyLen, "kafka/" and its SHA-256 in hex (a topic
// name may be 249 bytes).
func recordKey(cluster string, r *kgo.Record) string {
	b := make([]byte, 0, 64+len(cluster)+len(r.Topic))
	b = append(b, "kafka/"...)
	b = append(b, cluster...)
	b = append(b, '/')
	b = append(b, r.Topic...)
	b = append(b, '/')
	b = strconv.AppendInt(b, int64(r.Partition), 10)
	b = append(b, '/')
	b = strconv.AppendInt(b, r.Offset, 10)
	if len(b) > otlp.MaxIdempotencyKeyLen {
		sum := sha256.Sum256(b)
		return "kafka/" + hex.EncodeToString(sum[:])
	}
	return string(b)
}

// clusterID asks a broker for the cluster's id (KIP-78), retrying until
// one answers or ctx ends: every key has it, so a key is never made
// without it. A cluster too old to have one (before Kafka 0.10.1) is "".
func (c *Consumer) clusterID(ctx context.Context) (string, error) {
	for n := 0; ; n++ {
		req := kmsg.NewPtrMetadataRequest()
		req.Topics = []kmsg.MetadataRequestTopic{} // none: the cluster's facts only
		resp, err := req.RequestWith(ctx, c.cl)
		if err == nil {
			if resp.ClusterID == nil {
				return "", nil
			}
			return *resp.ClusterID, nil
		}
		if n%10 == 0 {
			c.log.Warn("cannot read the Kafka cluster's id; retrying", "err", err)
		}
		if !wait.For(ctx, retryBackoff(n)) {
			return "", ctx.Err()
		}
	}
}
