package kafkasource

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Batches too large to decompress.
//
// A record batch is decompressed whole before any of its records can be
// read. One that decompresses past ConsumerConfig.MaxBatchBytes (a
// decompression bomb, or a producer batching far beyond what a receiver
// would accept as one request) makes franz-go stop its partition for good
// (kgo.ErrDecompressTooLarge): left alone, the partition would never move
// again. skipTooLarge moves it past the batch, once every record before
// the batch is stored, and commits the new position, so a restart does not
// meet the batch again. The batch's records are counted
// (otlplite_kafka_consume_skipped_batches_total) and logged with their
// offsets; they cannot be dead-lettered, since they were never
// decompressed.

// skipTooLarge skips the batches of c.skips whose partitions have nothing
// before the batch left to store. reported holds the partitions whose
// error this poll carried: franz-go repeats it with each part of the
// records buffered before the batch, and a partition is drained once a
// poll took every buffered record (fewer than maxPoll) or no longer
// carries it.
func (c *Consumer) skipTooLarge(recs []*kgo.Record, done []bool, reported map[topicPartition]bool) {
	if len(c.skips) == 0 {
		return
	}
	pending := map[topicPartition]bool{}
	for i, r := range recs {
		if !done[i] {
			pending[topicPartition{r.Topic, r.Partition}] = true
		}
	}
	drained := len(recs) < c.maxPoll || c.cl.BufferedFetchRecords() == 0
	for tp, e := range c.skips {
		if pending[tp] || (reported[tp] && !drained) {
			continue
		}
		delete(c.skips, tp)
		// With regular expressions in Topics, a topic whose first
		// batch is the one skipped has no counters yet.
		c.learnTopics([]*kgo.Record{{Topic: tp.topic}})
		c.m[tp.topic].skipped.Inc()
		c.log.Error("Kafka record batch decompresses to more than the batch limit; its records are skipped",
			"topic", tp.topic, "partition", tp.partition, "first_offset", e.Offset, "next_offset", e.NextOffset)
		to := map[string]map[int32]kgo.EpochOffset{tp.topic: {tp.partition: {Epoch: e.Epoch, Offset: e.NextOffset}}}
		c.cl.SetOffsets(to)
		// CommitRecords commits the offset after the record it is given:
		// the batch's last.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		commitErr := c.cl.CommitRecords(ctx, &kgo.Record{Topic: tp.topic, Partition: tp.partition, LeaderEpoch: e.Epoch, Offset: e.NextOffset - 1})
		cancel()
		if commitErr != nil {
			c.commitEr.Inc()
			c.log.Warn("cannot commit the offset after a skipped batch; it is skipped again after a restart", "topic", tp.topic, "partition", tp.partition, "err", commitErr)
		}
	}
}

// maxLearnedTopics bounds the topics Topics' regular expressions can add,
// each with its metric series: a cluster where anyone can create topics
// must not grow them without limit.
const maxLearnedTopics = 10000

// learnTopics finds the signal of each topic first seen in recs, with
// regular expressions in Topics. Run's goroutine only, before the workers
// that read c.signals and c.m start.
func (c *Consumer) learnTopics(recs []*kgo.Record) {
	if len(c.patterns) == 0 {
		return
	}
	for _, r := range recs {
		if _, ok := c.m[r.Topic]; ok {
			continue
		}
		sig := c.patterns[0].sig
		for _, p := range c.patterns {
			if p.re.MatchString(r.Topic) {
				sig = p.sig
				break
			}
		}
		c.signals[r.Topic] = sig
		if len(c.m) < maxLearnedTopics {
			c.m[r.Topic] = c.newTopicMetrics(r.Topic)
			c.log.Info("consuming a topic a topic expression matches", "topic", r.Topic, "signal", sig)
			continue
		}
		// Past the bound, further topics share one series.
		if c.overflow == nil {
			c.overflow = c.newTopicMetrics("_other")
		}
		c.m[r.Topic] = c.overflow
	}
}

// groupBalancer maps the kafkareceiver's group_rebalance_strategy names
// to franz-go balancers.
func groupBalancer(name string) (kgo.GroupBalancer, error) {
	switch name {
	case "", "cooperative-sticky":
		return kgo.CooperativeStickyBalancer(), nil
	case "sticky":
		return kgo.StickyBalancer(), nil
	case "range":
		return kgo.RangeBalancer(), nil
	case "roundrobin":
		return kgo.RoundRobinBalancer(), nil
	}
	return nil, fmt.Errorf("kafka: unknown group balancer %q: want cooperative-sticky, sticky, range or roundrobin", name)
}

// logLimiter lets through at most logBurst lines per logWindow, so that a
// flood of bad records cannot fill the disk through the log; the counters
// still count every record.
type logLimiter struct {
	mu         sync.Mutex
	start      time.Time
	n          int
	suppressed int
}

const (
	logBurst  = 10
	logWindow = 10 * time.Second
)

// allow reports whether a line may be logged now and, if so, how many were
// not logged since the last one that was.
func (l *logLimiter) allow() (suppressed int, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if now.Sub(l.start) >= logWindow {
		l.start, l.n = now, 0
	}
	if l.n >= logBurst {
		l.suppressed++
		return 0, false
	}
	l.n++
	suppressed, l.suppressed = l.suppressed, 0
	return suppressed, true
}
