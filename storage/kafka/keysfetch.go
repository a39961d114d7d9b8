package kafka

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/otlp-lite/otlp-lite/internal/kafkaconn"
)

// ReadKeys reads the partitions with Fetch requests of its own and walks
// the record batches itself, not through franz-go's consumer: the consumer
// decodes every record of a fetch into a kgo.Record (about 170 bytes) with
// its headers (40 bytes each) before handing them over, so a batch of tiny
// records or empty headers costs 20 to 80 times its decompressed bytes, and
// a fetch holds many such batches. Here a record's headers are looked at in
// place and nothing is kept but the keys: the memory of the read is one
// fetch's bytes (keysFetchMaxBytes, or the first batch when it is larger,
// the brokers' own limit) plus one decompressed batch (keysBatchLimit).

// keysReader is the state of one ReadKeys read.
type keysReader struct {
	s   *Sink
	a   *keyAssembler
	dec *kafkaconn.BatchDecompressor // at most keysBatchLimit a batch
	buf []byte                       // a decompressed batch, reused
}

// keysBatchLimit is the most a batch may decompress to: the sink's own
// batches are at most MaxMessageBytes; a batch far larger was not written
// by a receiver (a compression bomb on a shared topic) and is skipped,
// counted in otlplite_kafka_keys_skipped_total{reason="batch_too_large"}.
func (s *Sink) keysBatchLimit() int { return max(64<<20, 2*(s.limit+recordOverhead)) }

// readRanges reads every partition of ranges to its end (to), one Fetch
// at a time, handing each record's headers to r.a. Partitions whose
// leader moved or is unknown are retried after their leaders are asked
// again, until ctx ends.
func (r *keysReader) readRanges(ctx context.Context, ranges map[topicPartition]offsetRange) error {
	defer r.dec.Close()
	for len(ranges) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		byLeader := make(map[int32][]topicPartition)
		for tp, rg := range ranges {
			byLeader[rg.leader] = append(byLeader[rg.leader], tp)
		}
		refresh := false
		for leader, tps := range byLeader {
			again, err := r.fetch(ctx, leader, tps, ranges)
			if err != nil {
				return err
			}
			refresh = refresh || again
		}
		if refresh {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(250 * time.Millisecond):
			}
			if err := r.s.refreshLeaders(ctx, ranges); err != nil && !kerr.IsRetriable(err) {
				return err
			}
		}
	}
	return nil
}

// fetch sends one Fetch to leader for tps and reads what it returns; again
// says that some partition needs its leader asked again.
func (r *keysReader) fetch(ctx context.Context, leader int32, tps []topicPartition, ranges map[topicPartition]offsetRange) (again bool, err error) {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxWaitMillis = 100 // every partition has records below to
	req.MinBytes = 1
	req.MaxBytes = keysFetchMaxBytes
	req.IsolationLevel = 0 // read_uncommitted, as the end offsets were listed
	req.SessionID, req.SessionEpoch = 0, -1
	byID := make(map[[16]byte]string)
	idx := make(map[string]int)
	for _, tp := range tps {
		rg := ranges[tp]
		i, ok := idx[tp.topic]
		if !ok {
			i = len(req.Topics)
			idx[tp.topic] = i
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic, rt.TopicID = tp.topic, rg.topicID
			req.Topics = append(req.Topics, rt)
			byID[rg.topicID] = tp.topic
		}
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.CurrentLeaderEpoch, rp.LastFetchedEpoch, rp.LogStartOffset = tp.partition, rg.from, -1, -1, -1
		rp.PartitionMaxBytes = keysFetchMaxBytes
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	}
	resp, err := req.RequestWith(ctx, r.s.cl.Broker(int(leader)))
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		return true, nil // the leader went away: ask again
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		if kerr.IsRetriable(err) {
			return true, nil
		}
		return false, fmt.Errorf("fetch: %w", err)
	}
	for _, t := range resp.Topics {
		topic := t.Topic
		if topic == "" {
			topic = byID[t.TopicID]
		}
		for _, p := range t.Partitions {
			tp := topicPartition{topic, p.Partition}
			rg, ok := ranges[tp]
			if !ok {
				continue
			}
			switch err := kerr.ErrorForCode(p.ErrorCode); {
			case err == nil:
			case errors.Is(err, kerr.OffsetOutOfRange):
				// Deleted since it was listed (retention): read on
				// from the log's start.
				if p.LogStartOffset > rg.from {
					rg.from = p.LogStartOffset
				} else {
					rg.from++
				}
				r.update(ranges, tp, rg)
				continue
			case kerr.IsRetriable(err):
				again = true
				continue
			default:
				return false, fmt.Errorf("fetch topic %s partition %d: %w", topic, p.Partition, err)
			}
			if rg.from, err = r.batches(p.RecordBatches, rg.from, rg.to); err != nil {
				return false, err
			}
			if p.HighWatermark >= 0 && p.HighWatermark < rg.to {
				// The log ends below the end listed at the start: a
				// leader lost records (acks=1) since. Nothing more
				// is coming below to.
				rg.to = p.HighWatermark
			}
			r.update(ranges, tp, rg)
		}
	}
	return again, nil
}

func (r *keysReader) update(ranges map[topicPartition]offsetRange, tp topicPartition, rg offsetRange) {
	if rg.from >= rg.to {
		delete(ranges, tp)
		return
	}
	ranges[tp] = rg
}

// Record batch (v2) layout: the offsets in its header.
const (
	batchHeaderLen   = 61 // up to and including the record count
	batchMagicAt     = 16
	batchAttrControl = 0x20
	batchAttrLogTime = 0x08
)

// batches reads the record batches in raw (a Fetch's bytes for one
// partition) from offset next, below to, and returns the offset to fetch
// from next. A batch cut at the end (the fetch's size limit) is fetched
// again; batches of the old formats (magic 0 and 1, no headers) and
// control batches are stepped over.
func (r *keysReader) batches(raw []byte, next, to int64) (int64, error) {
	for len(raw) >= batchMagicAt+1 {
		length := int32(binary.BigEndian.Uint32(raw[8:]))
		if length < batchMagicAt+1-12 || int(length) > len(raw)-12 {
			break // cut by the fetch's size
		}
		total := 12 + int(length)
		b, rest := raw[:total], raw[total:]
		raw = rest
		if b[batchMagicAt] != 2 {
			// A message set: its offset is its last record's.
			next = max(next, int64(binary.BigEndian.Uint64(b))+1)
			continue
		}
		var batch kmsg.RecordBatch
		if len(b) < batchHeaderLen || batch.ReadFrom(b) != nil {
			r.a.m.damaged.Inc()
			next = max(next, int64(binary.BigEndian.Uint64(b))+1)
			continue
		}
		last := batch.FirstOffset + int64(batch.LastOffsetDelta)
		if last < next {
			continue
		}
		if batch.Attributes&batchAttrControl == 0 {
			if err := r.records(&batch, next, to); err != nil {
				return next, err
			}
		}
		next = last + 1
		if next >= to {
			break
		}
	}
	return next, nil
}

// records hands the keyed records of batch at or after next and below to
// to the assembler; a batch that does not decompress within the limit is
// skipped and counted.
func (r *keysReader) records(batch *kmsg.RecordBatch, next, to int64) error {
	recs, err := r.decompress(batch.Records, byte(batch.Attributes&0x07))
	if err != nil {
		if errors.Is(err, kafkaconn.ErrBatchTooLarge) {
			r.a.m.tooLarge.Inc()
		} else {
			r.a.m.damaged.Inc()
		}
		return nil
	}
	for n := int32(0); n < batch.NumRecords && len(recs) > 0; n++ {
		length, used := binary.Varint(recs)
		if used <= 0 || length < 0 || int64(len(recs)-used) < length {
			r.a.m.damaged.Inc()
			return nil
		}
		rec := recs[used : used+int(length)]
		recs = recs[used+int(length):]
		k, ok := parseRecordKey(rec)
		if !ok {
			r.a.m.damaged.Inc()
			continue
		}
		off := batch.FirstOffset + k.offsetDelta
		if off < next || off >= to || !k.hasKey {
			continue
		}
		ts := batch.FirstTimestamp + k.tsDelta
		if batch.Attributes&batchAttrLogTime != 0 {
			ts = batch.MaxTimestamp
		}
		if err := r.a.addKey(k.key, k.tenant, k.hasTenant, time.UnixMilli(ts)); err != nil {
			return err
		}
	}
	return nil
}

// recordKey is what ReadKeys needs of a record: its place, and the values
// of its first KeyHeader and TenantHeader (aliasing the record).
type recordKey struct {
	tsDelta, offsetDelta int64
	key, tenant          []byte
	hasKey, hasTenant    bool
}

// parseRecordKey reads a v2 record (without its length) in place: it
// allocates nothing, however many headers the record has.
func parseRecordKey(rec []byte) (recordKey, bool) {
	var k recordKey
	if len(rec) < 1 {
		return k, false
	}
	rec = rec[1:] // attributes, unused
	varint := func() (int64, bool) {
		x, n := binary.Varint(rec)
		if n <= 0 {
			return 0, false
		}
		rec = rec[n:]
		return x, true
	}
	bytesField := func() ([]byte, bool) {
		l, ok := varint()
		if !ok || l < -1 || l > int64(len(rec)) {
			return nil, false
		}
		if l < 0 {
			return nil, true
		}
		v := rec[:l:l]
		rec = rec[l:]
		return v, true
	}
	var ok bool
	if k.tsDelta, ok = varint(); !ok {
		return k, false
	}
	if k.offsetDelta, ok = varint(); !ok {
		return k, false
	}
	if _, ok = bytesField(); !ok { // the record's key
		return k, false
	}
	if _, ok = bytesField(); !ok { // its value
		return k, false
	}
	nh, ok := varint()
	if !ok || nh < 0 || nh > int64(len(rec)) {
		return k, false
	}
	for range nh {
		name, ok := bytesField()
		if !ok {
			return k, false
		}
		value, ok := bytesField()
		if !ok {
			return k, false
		}
		switch {
		case !k.hasKey && string(name) == KeyHeader:
			k.key, k.hasKey = value, true
		case !k.hasTenant && string(name) == TenantHeader:
			k.tenant, k.hasTenant = value, true
		}
	}
	return k, len(rec) == 0
}

// decompress returns the records of a batch compressed with codec (the
// batch attributes' low bits), decompressed into r.buf (valid until the
// next call), at most keysBatchLimit bytes.
func (r *keysReader) decompress(src []byte, codec byte) ([]byte, error) {
	if codec == 0 {
		return src, nil
	}
	out, err := r.dec.Append(r.buf[:0], src, kgo.CompressionCodecType(codec))
	if err != nil {
		return nil, err
	}
	if cap(out) <= r.dec.Limit() {
		r.buf = out[:0] // kept for the next batch
	}
	return out, nil
}

// refreshLeaders asks the brokers again for the leaders of the partitions
// left in ranges.
func (s *Sink) refreshLeaders(ctx context.Context, ranges map[topicPartition]offsetRange) error {
	md := kmsg.NewPtrMetadataRequest()
	seen := make(map[string]bool)
	for tp := range ranges {
		if !seen[tp.topic] {
			seen[tp.topic] = true
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(tp.topic)
			md.Topics = append(md.Topics, rt)
		}
	}
	resp, err := md.RequestWith(ctx, s.cl)
	if err != nil {
		return err
	}
	for _, t := range resp.Topics {
		if t.Topic == nil {
			continue
		}
		for _, p := range t.Partitions {
			tp := topicPartition{*t.Topic, p.Partition}
			if rg, ok := ranges[tp]; ok {
				rg.leader, rg.topicID = p.Leader, t.TopicID
				ranges[tp] = rg
			}
		}
	}
	return nil
}
