package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/otlp-lite/otlp-lite/internal/kafkaconn"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
	"github.com/otlp-lite/otlp-lite/otlpjson"
	"github.com/otlp-lite/otlp-lite/storage"
)

// maxPooledBuf is the largest batch buffer kept for reuse: one huge request
// must not pin its memory for the life of the process.
const maxPooledBuf = 8 << 20

// batch holds the records of one Write until the last of them is
// acknowledged or failed. Their values are a copy of the request in buf:
// Write may return (its context canceled) while franz-go still holds the
// records, and the caller's data is valid only during Write.
//
// A batch has refs = records + 1 owners (each promise, and Write); the last
// to let go returns it to the pool.
type batch struct {
	s      *Sink
	buf    []byte
	pieces []piece
	recs   []kgo.Record
	// A keyed write's (WriteKeyed) headers: each record's own slice of
	// hdrs, its KeyHeader's value in keyBuf.
	hdrs    []kgo.RecordHeader
	keyBuf  []byte
	pending atomic.Int32 // records not yet acknowledged or failed
	refs    atomic.Int32
	done    chan struct{} // one token once pending reaches 0
	cancel  context.CancelFunc
	promise func(*kgo.Record, error) // b.finish, bound once per batch

	mu         sync.Mutex
	err        error // first record error
	overloaded bool  // some record found the buffer full
}

func (s *Sink) getBatch() *batch {
	if b, ok := s.batches.Get().(*batch); ok {
		return b
	}
	b := &batch{s: s, done: make(chan struct{}, 1)}
	b.promise = b.finish
	return b
}

// finish is the produce promise of every record of b. franz-go calls
// promises one at a time from one goroutine, so it must not block: done has
// room for its single token.
func (b *batch) finish(_ *kgo.Record, err error) {
	if err != nil {
		b.mu.Lock()
		if b.err == nil {
			b.err = err
		}
		// A full buffer says why the others failed too (they waited
		// behind it): report the request as overloaded.
		b.overloaded = b.overloaded || errors.Is(err, kgo.ErrMaxBuffered)
		b.mu.Unlock()
	}
	if b.pending.Add(-1) == 0 {
		b.cancel()
		b.done <- struct{}{}
	}
	b.unref()
}

func (b *batch) unref() {
	if b.refs.Add(-1) != 0 {
		return
	}
	select {
	case <-b.done:
	default:
	}
	b.err, b.overloaded = nil, false
	b.cancel = nil
	clear(b.recs) // drop the contexts and values
	clear(b.hdrs)
	if cap(b.buf) > maxPooledBuf {
		b.buf = nil
	}
	b.s.batches.Put(b)
}

// TenantHeader is the record header holding the tenant of the request a
// record came from, when the receiver runs with tenancy on
// (internal/kafkaconn, shared with the Kafka source).
const TenantHeader = kafkaconn.TenantHeader

// Write implements storage.Sink: it produces data as one record (more if it
// is over the message limit, or with PartitionTracesByID one per trace) to the
// signal's topic (with TopicPerTenant, the tenant's) and waits until Kafka
// acknowledged all of them.
//
// Errors: storage.ErrOverloaded when the produce buffer is full,
// storage.ErrUnavailable when the brokers did not acknowledge within
// Config.ProduceTimeout (down, slow, unreachable, refusing), ErrTooLarge
// when a resource cannot fit in one record, the context's error when ctx
// ended first, storage.ErrClosed after Close. On an error some records of
// the request may still have been stored, unless it wraps
// storage.ErrNotStored: every refusal made before the first record is
// produced does (a closed sink, a tenant or topic refused, a resource too
// large to split).
func (s *Sink) Write(ctx context.Context, signal storage.Signal, data []byte, items int) error {
	return s.write(ctx, signal, data, items, nil)
}

// write is Write, and with key non-nil WriteKeyed.
func (s *Sink) write(ctx context.Context, signal storage.Signal, data []byte, items int, key *storage.StoredKey) error {
	if s.closed.Load() {
		return storage.NotStored(storage.ErrClosed)
	}
	var name string
	switch signal {
	case storage.Traces:
		name = "resource_spans"
	case storage.Metrics:
		name = "resource_metrics"
	case storage.Logs:
		name = "resource_logs"
	case storage.Profiles:
		// The dictionary (field 2) is copied into every piece of a split.
		name = "resource_profiles"
	default:
		return storage.NotStored(fmt.Errorf("kafka: cannot store %v", signal))
	}
	// What the client metadata decides (metadata.go) is settled before
	// any work: a refused topic costs no split. Without metadata options
	// this is one context lookup.
	headers := s.headers
	tenant, hasTenant := otlp.TenantFrom(ctx)
	var tenantTopic string
	if s.tenantPattern != "" {
		var err error
		if tenantTopic, err = s.admitTenant(ctx, signal, tenant, hasTenant); err != nil {
			return err
		}
	}
	var meta fromMetadata
	if s.metaHeaders != nil || s.topicMetaKey[signal] != "" || s.keyMetaKey[signal] != "" {
		var err error
		if meta, err = s.readMetadata(signal, storage.MetadataFrom(ctx), headers); err != nil {
			return storage.NotStored(err)
		}
		headers = meta.headers
	}
	if hasTenant {
		// After the static headers and the metadata ones, so that the
		// Collector's own headers come first, in its order.
		headers = append(slices.Clip(headers), kgo.RecordHeader{Key: TenantHeader, Value: []byte(tenant)})
	}
	// The headers and the key from metadata are in every record: what
	// is left for the value.
	recLimit := s.limit - meta.size
	if len(headers) > 0 {
		recLimit -= headersSize(headers)
	}
	if key != nil {
		recLimit -= keyHeaderSize
	}
	if recLimit < s.limit/2 {
		// Only static headers (the operator's) can come close; the
		// metadata is bounded by MaxMetadataBytes.
		recLimit = s.limit / 2
	}
	b := s.getBatch()
	b.refs.Store(1)
	// As JSON, a piece is larger than its protobuf form: split for that
	// up front (toJSON splits finer where it is not enough).
	limit := recLimit
	if s.json[signal] {
		limit /= 2
	}
	var topic func([]byte) string
	if s.topicAttr != "" {
		topic = s.topicFor
	}
	var err error
	switch {
	case (signal == storage.Traces && s.byTrace) || (signal == storage.Logs && s.logsByID):
		t, _ := s.splits.Get().(*otlpdecode.TraceSplitter)
		if t == nil {
			t = new(otlpdecode.TraceSplitter)
		}
		b.buf, b.pieces, err = appendByTrace(t, b.buf[:0], b.pieces[:0], data, signal, limit, topic)
		s.splits.Put(t)
	case s.byAttrs[signal] || topic != nil:
		h, _ := s.hashers.Get().(*attrHasher)
		if h == nil {
			h = new(attrHasher)
		}
		b.buf, b.pieces, err = appendPerResource(b.buf[:0], b.pieces[:0], data, signal, limit, h, s.byAttrs[signal], topic)
		s.hashers.Put(h)
	default:
		b.buf, b.pieces, err = appendResources(b.buf[:0], b.pieces[:0], data, signal, limit, -1, -1)
	}
	if err == nil && s.json[signal] {
		err = s.toJSON(b, signal, name, recLimit)
	}
	if err == nil && topic != nil {
		// The topics clients named through a resource attribute.
		for i := range b.pieces {
			if p := &b.pieces[i]; p.Dest != "" && meta.topic == "" {
				if p.Dest, err = s.admitTopic(p.Dest, "the resource attribute "+s.topicAttr); err != nil {
					break
				}
			}
		}
	}
	if err != nil || len(b.pieces) == 0 {
		// No pieces: a request without a single span has nothing to store.
		// Nothing was produced yet: an error here stored nothing.
		b.unref()
		return storage.NotStored(err)
	}

	// The records get their own deadline, detached from ctx: a record's
	// context cancels the whole produce request it is in, which holds
	// other Writes' records too, so one client going away must not fail
	// them. Every record's deadline is at most ProduceTimeout away.
	deadline := time.Now().Add(s.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	rctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	b.cancel = cancel
	n := len(b.pieces)
	if cap(b.recs) < n {
		b.recs = make([]kgo.Record, n)
	}
	b.recs = b.recs[:n]
	b.pending.Store(int32(n))
	b.refs.Add(int32(n))
	topicOf := s.topics[signal]
	if tenantTopic != "" {
		topicOf = tenantTopic
	}
	if key != nil {
		b.keyHeaders(headers, signal, items, key)
	}
	for i, p := range b.pieces {
		r := &b.recs[i]
		*r = kgo.Record{Topic: topicOf, Value: b.buf[p.Start:p.End], Headers: headers}
		if key != nil {
			r.Headers = b.hdrs[i*(len(headers)+1) : (i+1)*(len(headers)+1)]
		}
		// The Collector's getTopic order: metadata, attribute, then
		// the tenant's or the signal's topic.
		switch {
		case meta.topic != "":
			r.Topic = meta.topic
		case p.Dest != "":
			r.Topic = p.Dest
		}
		// exportData: a partition key wins, then the metadata key.
		if p.KeyStart >= 0 {
			r.Key = b.buf[p.KeyStart:p.KeyEnd]
		} else if meta.key != nil {
			r.Key = meta.key
		}
		// TryProduce, not Produce: with the buffer full, refuse now
		// (ErrMaxBuffered through the promise) instead of queueing
		// callers without bound.
		s.cl.TryProduce(rctx, r, b.promise)
	}

	// franz-go fails the records at their deadline; the timer only guards
	// against it being late, e.g. while it waits for a dead connection.
	timer := time.NewTimer(time.Until(deadline) + time.Second)
	defer timer.Stop()
	done := ctx.Done()
	if key != nil {
		// A keyed write waits for its records' fate (storage.KeyedSink),
		// at most until their own deadline, which franz-go keeps.
		done = nil
	}
	select {
	case <-b.done:
		b.mu.Lock()
		err = b.err
		if b.overloaded {
			err = kgo.ErrMaxBuffered
		}
		b.mu.Unlock()
		if err != nil {
			err = classify(err, n)
		}
	case <-done:
		err = fmt.Errorf("kafka: stopped waiting for the acknowledgement: %w", ctx.Err())
	case <-timer.C:
		err = fmt.Errorf("kafka: no acknowledgement within %v: %w", s.timeout, storage.ErrUnavailable)
	}
	b.unref()
	return err
}

// keyHeaders fills b.hdrs with every record's headers, headers then its
// KeyHeader (part i of len(b.pieces)), the values in b.keyBuf.
func (b *batch) keyHeaders(headers []kgo.RecordHeader, signal storage.Signal, items int, key *storage.StoredKey) {
	n, per := len(b.pieces), len(headers)+1
	b.keyBuf = b.keyBuf[:0]
	ends := make([]int, 0, 16)
	for i := range n {
		b.keyBuf = appendKeyHeader(b.keyBuf, signal, i, n, items, key)
		ends = append(ends, len(b.keyBuf))
	}
	if cap(b.hdrs) < n*per {
		b.hdrs = make([]kgo.RecordHeader, n*per)
	}
	b.hdrs = b.hdrs[:n*per]
	start := 0
	for i := range n {
		h := b.hdrs[i*per : (i+1)*per]
		copy(h, headers)
		h[per-1] = kgo.RecordHeader{Key: KeyHeader, Value: b.keyBuf[start:ends[i]:ends[i]]}
		start = ends[i]
	}
}

// classify wraps a produce error in the storage error the handler maps to
// a refusal.
func classify(err error, records int) error {
	switch {
	case errors.Is(err, kgo.ErrMaxBuffered):
		return fmt.Errorf("kafka: produce buffer full: %w", storage.ErrOverloaded)
	case errors.Is(err, kerr.MessageTooLarge), errors.Is(err, kerr.RecordListTooLarge):
		// The split keeps records under MaxMessageBytes, so the broker's
		// limit for this topic is lower than configured.
		return fmt.Errorf("kafka: record refused as too large; is the topic's max.message.bytes below MaxMessageBytes? %w: %w", err, ErrTooLarge)
	case errors.Is(err, kgo.ErrClientClosed):
		return storage.ErrClosed
	}
	return fmt.Errorf("kafka: cannot produce %d record(s): %w: %w", records, err, storage.ErrUnavailable)
}

// Close fails the records still waiting (no Write may be in progress; see
// storage.Sink) and closes the connections.
func (s *Sink) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.cl.Close()
	return nil
}

// toJSON replaces the protobuf value of every piece of b by its OTLP/JSON
// form (the Collector's otlp_json: ptrace.JSONMarshaler and its metrics
// and logs siblings write the same OTLP/JSON mapping). A piece whose JSON
// is over the limit is split finer between resources, in proportion; a
// resource whose JSON alone is over it fails with ErrTooLarge.
func (s *Sink) toJSON(b *batch, signal storage.Signal, name string, limit int) error {
	typ, _, _ := otlpjson.ForSignal(signal)
	n := len(b.pieces)
	for i := 0; i < n; i++ {
		p := b.pieces[i]
		start := len(b.buf)
		var err error
		// Appending to b.buf while reading a range of it is safe: a
		// reallocation leaves the old array to the source slice.
		b.buf, err = otlpjson.Marshal(b.buf, typ, b.buf[p.Start:p.End])
		if err != nil {
			return fmt.Errorf("kafka: cannot encode %s as otlp_json: %w: %w", name, err, storage.ErrRejected)
		}
		if size := len(b.buf) - start; size <= limit {
			b.pieces[i].Start, b.pieces[i].End = start, len(b.buf)
			continue
		} else {
			b.buf = b.buf[:start]
			protoLen := p.End - p.Start
			finer := min(int(int64(protoLen)*int64(limit)/int64(size))*9/10, protoLen-1)
			first := len(b.pieces)
			b.buf, b.pieces, err = appendResources(b.buf, b.pieces, b.buf[p.Start:p.End], signal, finer, p.KeyStart, p.KeyEnd)
			if err != nil {
				return fmt.Errorf("%w (as otlp_json, about %d bytes)", err, size)
			}
			for j := first; j < len(b.pieces); j++ {
				q := &b.pieces[j]
				q.Dest = p.Dest
				js := len(b.buf)
				if b.buf, err = otlpjson.Marshal(b.buf, typ, b.buf[q.Start:q.End]); err != nil {
					return fmt.Errorf("kafka: cannot encode %s as otlp_json: %w: %w", name, err, storage.ErrRejected)
				}
				if len(b.buf)-js > limit {
					return fmt.Errorf("cannot split request for Kafka: a %s is %d bytes as otlp_json, over the %d-byte message limit: %w",
						name, len(b.buf)-js, limit, ErrTooLarge)
				}
				q.Start, q.End = js, len(b.buf)
			}
			// The first finer piece takes this one's place.
			b.pieces[i] = b.pieces[first]
			b.pieces = append(b.pieces[:first], b.pieces[first+1:]...)
		}
	}
	return nil
}
