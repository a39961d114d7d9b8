package kafka

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/otlp-lite/otlp-lite/internal/kafkaconn"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
)

// Defaults of the keys' read-back (ReadKeys).
const (
	// DefaultKeysReadTimeout bounds how long ReadKeys, which a receiver
	// calls before it serves, reads: a broker down at start delays the
	// start by this much, not for ever, and the window then starts with
	// the keys read so far (a resend of the others is stored again).
	DefaultKeysReadTimeout = 15 * time.Second

	// DefaultMaxPendingKeyBytes bounds the memory of keys whose request
	// was split into several records of which some are not read yet.
	// Partitions are read side by side, so these are usually the keys of
	// one fetch; but a partition read ahead of another holds every key
	// whose parts the other has until it catches up. 64 MiB hold about
	// 100,000 of them (a UUID key, a few parts, about 600 bytes each), the
	// default window (ingest.DefaultDedupKeys).
	DefaultMaxPendingKeyBytes = 64 << 20
)

// keysFetchMaxBytes bounds one fetch of ReadKeys (the records are read
// for their headers and dropped at once): with one fetch at a time, the
// memory of the read is this plus the largest batch.
const keysFetchMaxBytes = 16 << 20

// denseKeyParts is the most parts whose bits a pending key holds all at
// once (512 bytes); a key of more parts holds the 64-part words where a
// part was found, sparseWordCost each (a map slot and its share of the
// map's growth).
const (
	denseKeyParts  = 4096
	sparseWordCost = 48
)

// pendingKeyCost is what a pending key costs besides its strings and part
// set: its map slot (the id's four words and pointer), the entry, and the
// allocator's rounding.
const pendingKeyCost = 192

var _ storage.KeyedSink = (*Sink)(nil)

// WriteKeyed implements storage.KeyedSink: Write, with the KeyHeader in
// every record of the request (part i of n). It returns nil only when the
// brokers acknowledged every record (acks as configured), and unlike Write
// it waits for the records' fate after ctx ended (at most until their
// deadline, ctx's or Config.ProduceTimeout, at which franz-go fails them):
// an error then wraps storage.ErrNotStored only when nothing was produced;
// otherwise some records may be in Kafka, and ReadKeys reports the key only
// if all of them are.
func (s *Sink) WriteKeyed(ctx context.Context, signal storage.Signal, data []byte, items int, key storage.StoredKey) error {
	if err := checkStoredKey(&key, items); err != nil {
		return storage.NotStored(err)
	}
	return s.write(ctx, signal, data, items, &key)
}

// keysMetrics counts what ReadKeys found.
type keysMetrics struct {
	read       *metrics.Counter // keys reported
	incomplete *metrics.Counter // parts missing at the end
	overLimit  *metrics.Counter // a record whose key could not wait (MaxPendingKeyBytes)
	damaged    *metrics.Counter // a header that does not decode
	tooLarge   *metrics.Counter // a batch over the decompression bound
}

func newKeysMetrics(set *metrics.Set) keysMetrics {
	if set == nil {
		set = metrics.NewSet()
	}
	c := func(reason string) *metrics.Counter {
		return set.GetOrCreateCounter(`otlplite_kafka_keys_skipped_total{reason="` + reason + `"}`)
	}
	return keysMetrics{
		read:       set.GetOrCreateCounter(`otlplite_kafka_keys_read_total`),
		incomplete: c("incomplete"), overLimit: c("pending_limit"), damaged: c("damaged"), tooLarge: c("batch_too_large"),
	}
}

// ReadKeys implements storage.KeyedSink: it reads, once, every partition
// of the signals' topics (with TopicPerTenant, every topic of the
// pattern), from the first record whose timestamp is at or after since
// (ListOffsets by time) to the partition's end when it began, and calls fn
// with the key of every request all of whose records it found (a
// KeyHeader for each part), as it finds them: in the order they were
// stored within a partition, partitions interleaved (the window sorts the
// keys by time). Records without the header (a Collector's,
// a write without a key) are skipped; so are records of topics clients
// named (TopicFromAttribute, TopicFromMetadataKey), which it does not
// read: a key with a part there is incomplete.
//
// After a failed Ping (brokers down at start) it reads nothing and says
// so. It reads every record's bytes since since (Kafka has no way to read
// headers alone), one fetch of at most 16 MiB at a time, each batch's
// records walked in place for their headers (keysfetch.go); the keys of
// split requests wait for their missing parts in at most
// Config.MaxPendingKeyBytes; and it stops at Config.KeysReadTimeout with
// an error, the keys found so far reported. Keys of other receivers
// writing to the same topics are reported too: a resend to this receiver
// of a request another stored is answered, not stored again.
func (s *Sink) ReadKeys(since time.Time, fn func(storage.StoredKey) error) error {
	if s.keysTimeout < 0 {
		return nil
	}
	if s.pingFailed.Load() {
		return errors.New("kafka: the brokers did not answer the ping at start: no keys read; a resend of a request stored before the restart is stored again")
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.keysTimeout)
	defer cancel()
	ranges, err := s.keyRanges(ctx, since)
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("no answer within -kafka-keys-read-timeout %v: %w", s.keysTimeout, err)
		}
		return fmt.Errorf("kafka: cannot find the records since %v (to read their keys): %w", since.Format(time.RFC3339), err)
	}
	if len(ranges) == 0 {
		return nil
	}
	var fnErr error
	a := newKeyAssembler(s.maxPending, func(k storage.StoredKey) error {
		fnErr = fn(k)
		return fnErr
	}, s.km)
	defer a.finish()
	r := &keysReader{s: s, a: a, dec: kafkaconn.NewBatchDecompressor(s.keysBatchLimit())}
	if err := r.readRanges(ctx, ranges); err != nil {
		if fnErr != nil {
			return fnErr
		}
		if ctx.Err() != nil {
			return fmt.Errorf("kafka: keys read in part: %d partition(s) not read to their end within %v (-kafka-keys-read-timeout); a resend of their requests is stored again", len(ranges), s.keysTimeout)
		}
		return fmt.Errorf("kafka: keys read in part: %w", err)
	}
	return nil
}

type topicPartition struct {
	topic     string
	partition int32
}

// offsetRange is the offsets [from, to) of a partition ReadKeys reads
// (from advances as it reads), its leader and its topic's id (for Fetch
// v13 and later).
type offsetRange struct {
	from, to int64
	leader   int32
	topicID  [16]byte
}

// keyTopics are the topics ReadKeys reads: the signals', and with
// TopicPerTenant every existing topic matching the pattern (from all, the
// cluster's topics).
func (s *Sink) keyTopics(all []string) []string {
	var out []string
	if s.tenantPattern == "" {
		for _, sig := range storage.Signals {
			if t := s.topics[sig]; !containsString(out, t) {
				out = append(out, t)
			}
		}
		return out
	}
	for _, t := range all {
		for _, sig := range storage.Signals {
			// The pattern holds {tenant} once (CheckTopicPerTenant).
			prefix, suffix, _ := strings.Cut(expandTopic(s.tenantPattern, s.topics[sig], "\x00"), "\x00")
			if len(t) > len(prefix)+len(suffix) && strings.HasPrefix(t, prefix) && strings.HasSuffix(t, suffix) {
				out = append(out, t)
				break
			}
		}
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// keyRanges asks the brokers for the partitions of the key topics and, for
// each, the first offset at or after since and the end offset (the high
// watermark): the partitions that have records in between. Retryable
// errors (a leader being elected) are retried until ctx ends.
func (s *Sink) keyRanges(ctx context.Context, since time.Time) (map[topicPartition]offsetRange, error) {
	for {
		ranges, err := s.tryKeyRanges(ctx, since)
		if err == nil || !kerr.IsRetriable(err) {
			return ranges, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (last: %w)", ctx.Err(), err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (s *Sink) tryKeyRanges(ctx context.Context, since time.Time) (map[topicPartition]offsetRange, error) {
	md := kmsg.NewPtrMetadataRequest()
	md.AllowAutoTopicCreation = false
	if s.tenantPattern == "" {
		for _, t := range s.keyTopics(nil) {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(t)
			md.Topics = append(md.Topics, rt)
		}
	} // else nil Topics: every topic
	resp, err := md.RequestWith(ctx, s.cl)
	if err != nil {
		return nil, err
	}
	var all []string
	parts := make(map[string][]int32)
	leaders := make(map[topicPartition]int32)
	ids := make(map[string][16]byte)
	for _, t := range resp.Topics {
		if t.Topic == nil || t.ErrorCode == kerr.UnknownTopicOrPartition.Code {
			continue // not created yet: nothing stored there
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return nil, fmt.Errorf("topic %s: %w", *t.Topic, err)
		}
		all = append(all, *t.Topic)
		ids[*t.Topic] = t.TopicID
		for _, p := range t.Partitions {
			parts[*t.Topic] = append(parts[*t.Topic], p.Partition)
			leaders[topicPartition{*t.Topic, p.Partition}] = p.Leader
		}
	}
	topics := s.keyTopics(all)
	if s.tenantPattern == "" {
		topics = all
	}
	offsets := func(ts int64) (map[topicPartition]int64, error) {
		req := kmsg.NewPtrListOffsetsRequest()
		req.ReplicaID = -1
		for _, t := range topics {
			rt := kmsg.NewListOffsetsRequestTopic()
			rt.Topic = t
			for _, p := range parts[t] {
				rp := kmsg.NewListOffsetsRequestTopicPartition()
				rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = p, ts, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			req.Topics = append(req.Topics, rt)
		}
		resp, err := req.RequestWith(ctx, s.cl)
		if err != nil {
			return nil, err
		}
		out := make(map[topicPartition]int64)
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					return nil, fmt.Errorf("topic %s partition %d: %w", t.Topic, p.Partition, err)
				}
				out[topicPartition{t.Topic, p.Partition}] = p.Offset
			}
		}
		return out, nil
	}
	if len(topics) == 0 {
		return nil, nil
	}
	from, err := offsets(since.UnixMilli())
	if err != nil {
		return nil, err
	}
	to, err := offsets(-1) // the end
	if err != nil {
		return nil, err
	}
	ranges := make(map[topicPartition]offsetRange)
	for tp, f := range from {
		// -1: no record at or after since.
		if t, ok := to[tp]; ok && f >= 0 && f < t {
			ranges[tp] = offsetRange{from: f, to: t, leader: leaders[tp], topicID: ids[tp.topic]}
		}
	}
	return ranges, nil
}

// keyAssembler collects the KeyHeaders ReadKeys reads and reports each key
// once all its parts were found.
type keyAssembler struct {
	budget, used int64
	pending      map[pendingID]*pendingKey
	fn           func(storage.StoredKey) error
	m            keysMetrics
	// started is when the read began: no key is newer (a record's time
	// is its producer's, and the window keeps the newest keys).
	started time.Time
}

// pendingID names the records of one request: a retry that stored some of
// them twice adds nothing, and a request split otherwise (another
// configuration) is another.
type pendingID struct {
	signal      storage.Signal
	tenant, key string
	fingerprint uint64
	parts       int
}

type pendingKey struct {
	// A bit per part: dense for up to denseKeyParts parts, else only
	// the 64-part words where a part was found (a header may claim 2^24
	// parts: the memory follows the parts read, not the claim).
	seen       []uint64
	sparse     map[int]uint64
	found      int
	items, rej int
	msg        string
	newest     time.Time
	cost       int64
}

func newKeyAssembler(budget int64, fn func(storage.StoredKey) error, m keysMetrics) *keyAssembler {
	return &keyAssembler{budget: budget, pending: make(map[pendingID]*pendingKey), fn: fn, m: m, started: time.Now()}
}

// add takes one record's headers and timestamp; the error is fn's.
func (a *keyAssembler) add(hs []kgo.RecordHeader, ts time.Time) error {
	var value, tenant []byte
	var hasKey, hasTenant bool
	for _, h := range hs {
		switch h.Key {
		case KeyHeader:
			if !hasKey {
				value, hasKey = h.Value, true
			}
		case TenantHeader:
			if !hasTenant {
				tenant, hasTenant = h.Value, true
			}
		}
	}
	if !hasKey {
		return nil // a Collector's record, or a write without a key
	}
	return a.addKey(value, tenant, hasTenant, ts)
}

// addKey takes one record's KeyHeader value, its TenantHeader's if it has
// one, and its timestamp; the error is fn's.
func (a *keyAssembler) addKey(value, tenantValue []byte, hasTenant bool, ts time.Time) error {
	tenant := otlp.DefaultTenant
	if hasTenant {
		tenant = string(tenantValue)
	}
	p, err := parseKeyHeader(value)
	if err == nil && hasTenant {
		err = otlp.CheckTenantName(tenant)
	}
	if err != nil {
		a.m.damaged.Inc()
		return nil
	}
	// A time ahead of the read's start (a producer's clock ahead, or a
	// writer planting keys dated in the future to push honest ones out of
	// the window, which keeps the newest) counts as the start.
	if ts.After(a.started) {
		ts = a.started
	}
	if p.parts == 1 {
		a.m.read.Inc()
		return a.fn(storage.StoredKey{Signal: p.signal, Tenant: tenant, Key: string(p.key), Fingerprint: p.fingerprint,
			Rejected: p.rejected, Message: string(p.message), Items: p.items, Time: ts})
	}
	id := pendingID{p.signal, tenant, string(p.key), p.fingerprint, p.parts}
	k := a.pending[id]
	if k == nil {
		words := (p.parts + 63) / 64
		cost := int64(pendingKeyCost + len(id.tenant) + len(id.key) + len(p.message))
		if p.parts <= denseKeyParts {
			cost += int64(8 * words)
		}
		if a.used+cost > a.budget {
			a.m.overLimit.Inc()
			return nil
		}
		k = &pendingKey{items: p.items, rej: p.rejected, msg: string(p.message), cost: cost}
		if p.parts <= denseKeyParts {
			k.seen = make([]uint64, words)
		} else {
			k.sparse = make(map[int]uint64)
		}
		a.pending[id] = k
		a.used += cost
	}
	w, b := p.part/64, uint64(1)<<(p.part%64)
	if k.sparse != nil {
		word, ok := k.sparse[w]
		if !ok {
			if a.used+sparseWordCost > a.budget {
				// Its parts cannot all be held: the key is dropped.
				delete(a.pending, id)
				a.used -= k.cost
				a.m.overLimit.Inc()
				return nil
			}
			k.cost += sparseWordCost
			a.used += sparseWordCost
		}
		if word&b == 0 {
			k.sparse[w] = word | b
			k.found++
		}
	} else if k.seen[w]&b == 0 {
		k.seen[w] |= b
		k.found++
	}
	if ts.After(k.newest) {
		k.newest = ts
	}
	if k.found < p.parts {
		return nil
	}
	delete(a.pending, id)
	a.used -= k.cost
	a.m.read.Inc()
	return a.fn(storage.StoredKey{Signal: id.signal, Tenant: id.tenant, Key: id.key, Fingerprint: id.fingerprint,
		Rejected: k.rej, Message: k.msg, Items: k.items, Time: k.newest})
}

// finish counts the keys left with parts missing: their requests were not
// stored whole, and a resend is stored again (at least once).
func (a *keyAssembler) finish() {
	a.m.incomplete.Add(len(a.pending))
	clear(a.pending)
	a.used = 0
}
