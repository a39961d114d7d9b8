package kafkasource

import (
	"context"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Resuming from the log (issue 24): a member that crashed (or was
// SIGKILLed) after storing records but before committing their offsets
// would read them again from the committed offset. The window of
// idempotency keys stores each record's key (idempotency.go) with the
// record, and the disk log rebuilds it at start, so the window knows which
// offsets are stored: when the group hands a partition to this member
// (AdjustFetchOffsetsFn, after the committed offsets are fetched), it
// starts after the run of offsets the window holds from the committed one
// on, not at the committed one. Only a contiguous run counts: workers
// store a poll's records in parallel, so a crash can leave offset 105
// stored and 103 not, and 103 must be read again; a gap (a compacted or
// transactional offset) ends the run too, which costs a re-read the window
// answers, never a record. A partition without a committed offset starts
// where the group's reset offset says. Beyond the window (its age and
// count), the committed offsets rule, as before.

// resumeFromLog is the group's AdjustFetchOffsetsFn.
func (c *Consumer) resumeFromLog(ctx context.Context, offs map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
	select {
	case <-c.clusterKnown:
	case <-ctx.Done():
		return offs, nil
	}
	stored := c.storedOffsets()
	for topic, parts := range offs {
		for p, o := range parts {
			committed := o.EpochOffset().Offset
			held := stored[topicPartition{topic, p}]
			if committed < 0 || !held[committed] {
				continue
			}
			next := committed
			for held[next] {
				next++
			}
			parts[p] = kgo.NewOffset().At(next).WithEpoch(-1)
			c.resumed.Add(int(next - committed))
			c.log.Info("Kafka partition resumed after the records the log holds", "topic", topic, "partition", p,
				"committed", committed, "resumed_at", next)
		}
	}
	return offs, nil
}

// storedOffsets returns the offsets of this cluster's records that the
// window holds as stored, by topic and partition.
func (c *Consumer) storedOffsets() map[topicPartition]map[int64]bool {
	out := map[topicPartition]map[int64]bool{}
	prefix := "kafka/" + c.cluster + "/"
	c.p.DedupKeys(prefix, func(key string) {
		tp, off, ok := parseRecordKey(key[len(prefix):])
		if !ok {
			return
		}
		m := out[tp]
		if m == nil {
			m = map[int64]bool{}
			out[tp] = m
		}
		m[off] = true
	})
	return out
}

// parseRecordKey reads "TOPIC/PARTITION/OFFSET", the rest of a recordKey
// after its cluster (a topic name has no '/': Kafka allows only
// A-Z a-z 0-9 . _ -). A hashed key (a long topic name) does not parse.
func parseRecordKey(s string) (topicPartition, int64, bool) {
	i := strings.LastIndexByte(s, '/')
	if i < 0 {
		return topicPartition{}, 0, false
	}
	j := strings.LastIndexByte(s[:i], '/')
	if j <= 0 {
		return topicPartition{}, 0, false
	}
	off, err1 := strconv.ParseInt(s[i+1:], 10, 64)
	p, err2 := strconv.ParseInt(s[j+1:i], 10, 32)
	if err1 != nil || err2 != nil || off < 0 || p < 0 {
		return topicPartition{}, 0, false
	}
	return topicPartition{s[:j], int32(p)}, off, true
}
