// Package kafkasource is the Kafka source: a way in that reads OTLP
// records from Kafka topics in a consumer group (the records the Kafka
// sink, storage/kafka, or the OpenTelemetry Collector's kafkaexporter
// produce) and stores each through the ingest pipeline, as a received
// request is stored: the same admission budget, validation, partial
// success, sink, metrics (transport "kafka") and quotas.
package kafkasource

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/internal/kafkaconn"
	"github.com/otlp-lite/otlp-lite/internal/wait"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
)

// Consumer defaults.
const (
	// DefaultConsumerGroup is the consumer group of ConsumerConfig.Group.
	DefaultConsumerGroup = "otlp-lite"
	// DefaultMaxPollRecords bounds the records held at once: a poll's
	// records are all stored (and their offsets committed) before the
	// next poll, so this and the fetch buffer are the consumer's memory.
	DefaultMaxPollRecords = 1000
	// DefaultFetchMaxBytes bounds one fetch response the client buffers
	// per broker while the records before it are being stored. Not the
	// Collector's 1 MiB: with 1 MiB fetches BenchmarkKafkaConsumeCPU
	// (interop) measured 1.3-1.4 times the CPU per span (more fetches,
	// polls, commits and GC cycles for the same records), 4 MiB 1.1 times.
	DefaultFetchMaxBytes = 16 << 20
	// DefaultConsumeWorkers is how many records are stored at once:
	// concurrent writes share the disk log's fsyncs.
	DefaultConsumeWorkers = 16
	// DefaultMaxBatchBytes bounds what one fetched record batch may
	// decompress to: the largest request a receiver accepts
	// (grpcwire.DefaultMaxRecvMsgSize, 64 MiB) fits, while a compressed
	// batch written to be a decompression bomb (zstd turns a few kilobytes
	// into gigabytes) costs at most this much memory instead of franz-go's
	// default 1 GiB. A batch over it is skipped (consume_skip.go).
	DefaultMaxBatchBytes = 64 << 20
	// DefaultMaxDecompressedBytes bounds the decompressed batches held at
	// once (consume_decompress.go) with the default MaxBatchBytes: four
	// of the largest, a poll's worth of ordinary ones many times over.
	DefaultMaxDecompressedBytes = 4 * DefaultMaxBatchBytes
)

// ConsumerConfig configures a Consumer. Brokers and Pipeline are required;
// every other zero field takes its default.
type ConsumerConfig struct {
	// Brokers are the seed brokers, host:port.
	Brokers []string

	// Group is the consumer group (default DefaultConsumerGroup). Members
	// of one group share the partitions (cooperative-sticky balancing).
	Group string

	// Topics names the topic of each signal to consume; nil means every
	// signal of otlp.Signals on its default topic (SignalInfo.KafkaTopic:
	// otlp_spans, otlp_metrics, otlp_logs, the Collector's names). A
	// signal missing from a non-nil map is not consumed. A name that
	// begins with '^' is a regular expression (RE2) matched against every
	// topic of the cluster, as in the Collector's kafkareceiver: the
	// topics it matches, now and created later, are that signal's. A
	// topic two signals' expressions match belongs to the first signal of
	// otlp.Signals.
	Topics map[otlp.Signal]string

	// ExcludeTopics are regular expressions of topics not consumed although
	// a Topics expression matches them (the kafkareceiver's
	// exclude_topics); only with a regular expression in Topics.
	ExcludeTopics []string

	// Pipeline validates and stores every record (ingest.Pipeline.Export,
	// transport "kafka"): the same admission budget, validation and
	// storage.Sink as the receivers when it is theirs
	// (handler.Handler.Pipeline). An embedding storage engine builds it
	// with its own Sink (ingest.New), no HTTP needed.
	Pipeline *ingest.Pipeline

	// DeadLetter, when non-nil, receives each record that is not a valid
	// OTLP request, as it was read, under its topic's signal; nil means
	// such records are only logged and counted.
	DeadLetter storage.Sink

	// Encoding is the record format: "" detects it per record (OTLP/JSON
	// when its first byte other than JSON white space is '{', which
	// cannot begin an OTLP protobuf request: it would be field 15 with
	// the deprecated group wire type), kafkaconn.EncodingProto or
	// kafkaconn.EncodingJSON
	// (the Collector kafkareceiver's encoding option).
	Encoding string

	// StartFromLatest starts a group without committed offsets at the end
	// of each partition; by default it starts at the beginning, so a new
	// store misses nothing (the Collector's kafkareceiver defaults to
	// latest).
	StartFromLatest bool

	// MaxPollRecords (default DefaultMaxPollRecords), FetchMaxBytes
	// (default DefaultFetchMaxBytes) and Workers (default
	// DefaultConsumeWorkers) bound the memory and the concurrency.
	MaxPollRecords, FetchMaxBytes, Workers int

	// FetchMaxPartitionBytes bounds one partition's share of a fetch
	// (default FetchMaxBytes; the kafkareceiver's
	// max_partition_fetch_size), FetchMinBytes is what a broker waits to
	// gather (default 1; min_fetch_size) for up to FetchMaxWait (default
	// franz-go's 5 s; max_fetch_wait).
	FetchMaxPartitionBytes, FetchMinBytes int
	FetchMaxWait                          time.Duration

	// MaxBatchBytes bounds what one record batch may decompress to
	// (default DefaultMaxBatchBytes). A batch over it is not read: its
	// records are counted, logged and skipped (its partition moves on)
	// and cannot be dead-lettered, as they were never decompressed.
	MaxBatchBytes int

	// MaxDecompressedBytes bounds the decompressed batches held at once,
	// across partitions and brokers (default four times MaxBatchBytes,
	// DefaultMaxDecompressedBytes with its default): past it, fetching
	// pauses until the records fetched are stored. Nothing is skipped for
	// it.
	MaxDecompressedBytes int64

	// SessionTimeout is how long the group waits for a silent member
	// before its partitions go to the others (default: franz-go's 45 s).
	// HeartbeatInterval is how often a member says it is alive (default:
	// a third of SessionTimeout, at most 3 s, as the Java client).
	SessionTimeout, HeartbeatInterval time.Duration

	// InstanceID, when set, makes this member static (KIP-345; the
	// kafkareceiver's group_instance_id): a restart within SessionTimeout
	// gets the same partitions back without a rebalance. Each member of
	// the group needs its own.
	InstanceID string

	// Balancer is the group's partition assignment strategy:
	// "cooperative-sticky" (default; incremental, only moved partitions
	// stop), "sticky", "range" or "roundrobin" (eager: every partition
	// stops at each rebalance), the kafkareceiver's
	// group_rebalance_strategy. Every member of a group must share one.
	Balancer string

	// TLS, SASL, ClientID, DialTimeout: as in the sink's kafka.Config.
	TLS         *tls.Config
	SASL        *kafkaconn.SASL
	ClientID    string
	DialTimeout time.Duration

	// Metrics receives the otlplite_kafka_consume_* metrics; nil means a
	// private set.
	Metrics *metrics.Set

	// Logger receives dead letters, retries and the Kafka client's log;
	// nil means slog.Default().
	Logger *slog.Logger
}

// Consumer reads OTLP records from Kafka topics in a consumer group and
// stores them through an ingest.Pipeline.
//
// Guarantee: at-least-once. An offset is committed only after every record
// it covers is stored (Export returned nil: the sink acknowledged it) or,
// if it is not valid OTLP, dead-lettered. A crash or a lost group
// membership re-reads what was not committed: at most one poll
// (MaxPollRecords) per partition set, stored again as duplicates.
// Rebalances wait while a poll's records are being stored
// (kgo.BlockRebalanceOnPoll), so revoked partitions have their durable
// offsets committed before they move; a poll that takes longer than the
// group's rebalance timeout (60 s) loses its membership, and its records
// are re-read by the new owner.
type Consumer struct {
	cl       *kgo.Client
	cluster  string // the cluster's id, in each record's idempotency key (idempotency.go); set by Run
	p        *ingest.Pipeline
	dl       storage.Sink
	log      *slog.Logger
	signals  map[string]otlp.Signal
	format   int // 0 detect, 1 proto, 2 JSON
	maxPoll  int
	workers  int
	set      *metrics.Set
	m        map[string]*topicMetrics
	commitEr *metrics.Counter
	// resumed counts the offsets a partition started past its committed
	// one because the log holds them (resume.go); clusterKnown is closed
	// once Run has set cluster.
	resumed      *metrics.Counter
	clusterKnown chan struct{}

	// With regular expressions in Topics, the signal of a topic is found
	// when its first records arrive (Run's goroutine only writes signals
	// and m, before the workers that read them start).
	patterns []topicPattern
	overflow *topicMetrics

	// skips are batches too large to decompress, waiting to be skipped
	// (consume_skip.go); Run's goroutine only.
	skips map[topicPartition]*kgo.ErrDecompressTooLarge

	// dlMu lets one dead letter at a time be written: a record may be as
	// large as a batch, and the workers storing records at once must not
	// make that many copies of hostile records in the dead-letter sink.
	dlMu sync.Mutex

	// dec decompresses fetched batches within MaxBatchBytes and
	// MaxDecompressedBytes.
	dec *boundedDecompressor

	// dlLog and warnLog limit the lines about bad records (a flood of
	// them is one attacker's write away): dead letters, and records
	// partly invalid or with an invalid tenant header.
	dlLog, warnLog logLimiter

	lagMu sync.Mutex
	lags  map[topicPartition]*atomic.Int64

	closeOnce sync.Once
}

type topicPartition struct {
	topic     string
	partition int32
}

// topicMetrics are a topic's counters.
type topicMetrics struct {
	records, items, rejected, deadLetters, retries, skipped *metrics.Counter
}

// topicPattern is a signal's regular expression in Topics.
type topicPattern struct {
	re  *regexp.Regexp
	sig otlp.Signal
}

func (c *Consumer) newTopicMetrics(topic string) *topicMetrics {
	return &topicMetrics{
		records:     c.set.GetOrCreateCounter(`otlplite_kafka_consume_records_total{topic="` + topic + `"}`),
		items:       c.set.GetOrCreateCounter(`otlplite_kafka_consume_items_total{topic="` + topic + `"}`),
		rejected:    c.set.GetOrCreateCounter(`otlplite_kafka_consume_rejected_items_total{topic="` + topic + `"}`),
		deadLetters: c.set.GetOrCreateCounter(`otlplite_kafka_consume_dead_letter_records_total{topic="` + topic + `"}`),
		retries:     c.set.GetOrCreateCounter(`otlplite_kafka_consume_retries_total{topic="` + topic + `"}`),
		skipped:     c.set.GetOrCreateCounter(`otlplite_kafka_consume_skipped_batches_total{topic="` + topic + `"}`),
	}
}

// NewConsumer validates cfg and creates the consumer; it joins the group
// when Run starts polling.
func NewConsumer(cfg ConsumerConfig) (*Consumer, error) {
	if len(cfg.Brokers) == 0 {
		return nil, errors.New("kafka: no brokers configured")
	}
	for _, b := range cfg.Brokers {
		if _, _, err := net.SplitHostPort(b); err != nil {
			return nil, fmt.Errorf("kafka: bad broker address %q: want host:port", b)
		}
	}
	if cfg.Pipeline == nil {
		return nil, errors.New("kafka: ConsumerConfig.Pipeline is nil")
	}
	c := &Consumer{
		p: cfg.Pipeline, dl: cfg.DeadLetter, log: cfg.Logger, set: cfg.Metrics,
		signals: map[string]otlp.Signal{}, m: map[string]*topicMetrics{},
		lags:    map[topicPartition]*atomic.Int64{},
		maxPoll: cfg.MaxPollRecords, workers: cfg.Workers,
		skips: map[topicPartition]*kgo.ErrDecompressTooLarge{},
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	base := c.log // the Kafka client's lines get component=kafka from kafkaconn.Opts
	c.log = c.log.With("component", "kafka-consumer")
	if c.set == nil {
		c.set = metrics.NewSet()
	}
	if c.maxPoll <= 0 {
		c.maxPoll = DefaultMaxPollRecords
	}
	if c.workers <= 0 {
		c.workers = DefaultConsumeWorkers
	}
	switch cfg.Encoding {
	case "":
	case kafkaconn.EncodingProto:
		c.format = 1
	case kafkaconn.EncodingJSON:
		c.format = 2
	default:
		return nil, fmt.Errorf("kafka: unknown encoding %q: want otlp_proto or otlp_json (or empty: detect per record)", cfg.Encoding)
	}
	topics := cfg.Topics
	if topics == nil {
		topics = map[otlp.Signal]string{}
		for _, sig := range otlp.Signals {
			topics[sig] = sig.Info().KafkaTopic
		}
	}
	var names []string
	regex := false
	for _, topic := range topics {
		regex = regex || strings.HasPrefix(topic, "^")
	}
	for _, sig := range otlp.Signals {
		topic, ok := topics[sig]
		if !ok || topic == "" {
			continue
		}
		if other, dup := c.signals[topic]; dup {
			return nil, fmt.Errorf("kafka: topic %q named for both %v and %v", topic, other, sig)
		}
		if !regex {
			c.signals[topic] = sig
			c.m[topic] = c.newTopicMetrics(topic)
			names = append(names, topic)
			continue
		}
		// franz-go's regex mode takes expressions only: a plain name
		// becomes one matching exactly it.
		expr := topic
		if !strings.HasPrefix(topic, "^") {
			expr = "^" + regexp.QuoteMeta(topic) + "$"
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, fmt.Errorf("kafka: bad topic expression %q of %v: %w", topic, sig, err)
		}
		c.signals[topic] = sig
		c.patterns = append(c.patterns, topicPattern{re, sig})
		names = append(names, expr)
	}
	for sig := range topics {
		if sig.Info() == nil {
			return nil, fmt.Errorf("kafka: cannot consume %v", sig)
		}
	}
	if len(names) == 0 {
		return nil, errors.New("kafka: no topic to consume")
	}
	if len(cfg.ExcludeTopics) > 0 && !regex {
		return nil, errors.New("kafka: ExcludeTopics needs a regular expression (beginning with '^') in Topics")
	}
	for _, x := range cfg.ExcludeTopics {
		if _, err := regexp.Compile(x); err != nil {
			return nil, fmt.Errorf("kafka: bad exclude-topics expression %q: %w", x, err)
		}
	}
	if regex {
		// The topics are found as records arrive.
		c.signals = map[string]otlp.Signal{}
	}
	c.commitEr = c.set.GetOrCreateCounter("otlplite_kafka_consume_commit_errors_total")
	c.resumed = c.set.GetOrCreateCounter("otlplite_kafka_consume_resumed_offsets_total")
	c.clusterKnown = make(chan struct{})
	group := cfg.Group
	if group == "" {
		group = DefaultConsumerGroup
	}
	fetchMax := cfg.FetchMaxBytes
	if fetchMax <= 0 {
		fetchMax = DefaultFetchMaxBytes
	}
	start := kgo.NewOffset().AtStart()
	if cfg.StartFromLatest {
		start = kgo.NewOffset().AtEnd()
	}
	balancer, err := groupBalancer(cfg.Balancer)
	if err != nil {
		return nil, err
	}
	partMax := fetchMax
	if cfg.FetchMaxPartitionBytes > 0 {
		partMax = min(cfg.FetchMaxPartitionBytes, fetchMax)
	}
	maxBatch := min(cmp.Or(max(cfg.MaxBatchBytes, 0), DefaultMaxBatchBytes), 1<<30)
	c.dec = newBoundedDecompressor(maxBatch, cmp.Or(max(cfg.MaxDecompressedBytes, 0), 4*int64(maxBatch)),
		c.set.GetOrCreateCounter("otlplite_kafka_consume_decompress_throttled_total"),
		c.set.GetOrCreateCounter("otlplite_kafka_consume_corrupt_batches_total"))
	opts := []kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ClientID(cmp.Or(cfg.ClientID, kafkaconn.DefaultClientID)),
		kgo.DialTimeout(cmp.Or(max(cfg.DialTimeout, 0), kafkaconn.DefaultDialTimeout)),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(names...),
		kgo.ConsumeResetOffset(start),
		kgo.Balancers(balancer),
		// Offsets are committed by Run only, after the records are
		// stored.
		kgo.DisableAutoCommit(),
		// No rebalance while a poll's records are being stored: they
		// finish, their offsets are committed, then the partitions move.
		kgo.BlockRebalanceOnPoll(),
		kgo.FetchMaxBytes(int32(min(fetchMax, 1<<30))),
		kgo.FetchMaxPartitionBytes(int32(min(partMax, 1<<30))),
		// Bounds one batch and the batches held
		// (consume_decompress.go); a batch over its bound stops its
		// partition, and Run skips it (consume_skip.go).
		kgo.WithDecompressor(c.dec),
		// A response must hold at least one whole batch, so the read
		// limit follows the fetch size.
		kgo.BrokerMaxReadBytes(int32(min(max(2*fetchMax, 100<<20), 1<<30))),
		kgo.OnPartitionsRevoked(c.dropLags),
		// Start after what the log already holds (resume.go).
		kgo.AdjustFetchOffsetsFn(c.resumeFromLog),
		kgo.OnPartitionsLost(c.dropLags),
	}
	if regex {
		opts = append(opts, kgo.ConsumeRegex())
		if len(cfg.ExcludeTopics) > 0 {
			opts = append(opts, kgo.ConsumeExcludeTopics(cfg.ExcludeTopics...))
		}
	}
	if cfg.FetchMinBytes > 0 {
		opts = append(opts, kgo.FetchMinBytes(int32(min(cfg.FetchMinBytes, 1<<30))))
	}
	if cfg.FetchMaxWait > 0 {
		opts = append(opts, kgo.FetchMaxWait(cfg.FetchMaxWait))
	}
	if cfg.InstanceID != "" {
		opts = append(opts, kgo.InstanceID(cfg.InstanceID))
	}
	if cfg.SessionTimeout > 0 {
		opts = append(opts, kgo.SessionTimeout(cfg.SessionTimeout))
	}
	switch {
	case cfg.HeartbeatInterval > 0:
		opts = append(opts, kgo.HeartbeatInterval(cfg.HeartbeatInterval))
	case cfg.SessionTimeout > 0:
		// Heartbeats a third of the session apart, as the Java client's
		// defaults (45 s, 3 s) keep well inside it.
		opts = append(opts, kgo.HeartbeatInterval(min(3*time.Second, cfg.SessionTimeout/3)))
	}
	conn, err := kafkaconn.Opts(base, cfg.TLS, cfg.SASL)
	if err != nil {
		return nil, err
	}
	opts = append(opts, conn...)
	if c.cl, err = kgo.NewClient(opts...); err != nil {
		return nil, fmt.Errorf("kafka: cannot create consumer: %w", err)
	}
	return c, nil
}

// Ping checks that a broker answers.
func (c *Consumer) Ping(ctx context.Context) error {
	if err := c.cl.Ping(ctx); err != nil {
		return fmt.Errorf("cannot reach Kafka brokers: %w", err)
	}
	return nil
}

// Run consumes until ctx ends, then commits the offsets of what is stored,
// leaves the group and closes the client. It returns nil when ctx ended,
// or the error that stopped it.
func (c *Consumer) Run(ctx context.Context) error {
	defer c.Close()
	cluster, err := c.clusterID(ctx)
	if err != nil {
		return nil // ctx ended before a broker answered
	}
	c.cluster = cluster
	close(c.clusterKnown)
	for {
		fs := c.cl.PollRecords(ctx, c.maxPoll)
		if fs.IsClientClosed() {
			return nil
		}
		reported := map[topicPartition]bool{}
		fs.EachError(func(topic string, p int32, err error) {
			if tooLarge, ok := errors.AsType[*kgo.ErrDecompressTooLarge](err); ok {
				tp := topicPartition{topic, p}
				c.skips[tp], reported[tp] = tooLarge, true
				return
			}
			if errors.Is(err, errDecompressBudget) {
				// Counted; fetched again once drained.
				return
			}
			if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				c.log.Warn("cannot fetch from Kafka; retrying", "topic", topic, "partition", p, "err", err)
			}
		})
		recs := fs.Records()
		c.learnTopics(recs)
		done := make([]bool, len(recs))
		c.store(ctx, recs, done)
		// What is stored is committed even when ctx ended part way: the
		// next owner of these partitions starts after it.
		c.commit(recs, done)
		if ctx.Err() == nil {
			c.skipTooLarge(recs, done, reported)
		}
		fs.EachPartition(func(p kgo.FetchTopicPartition) {
			if n := len(p.Records); n > 0 {
				c.setLag(p.Topic, p.Partition, p.HighWatermark-p.Records[n-1].Offset-1)
			}
		})
		c.dec.released(recs)
		if c.cl.BufferedFetchRecords() == 0 {
			// Every record decompressed so far is stored (or, if ctx
			// ended, abandoned): none is held any more.
			c.dec.drained()
		}
		c.cl.AllowRebalance()
		if ctx.Err() != nil {
			return nil
		}
	}
}

// Close leaves the group and closes the client (Run does it when it
// returns). Offsets not yet committed are re-read by the next owner.
func (c *Consumer) Close() {
	c.closeOnce.Do(func() { c.cl.Close() })
}

// store stores recs with up to c.workers at a time, marking done[i] for
// each record stored or dead-lettered; it returns early when ctx ends.
func (c *Consumer) store(ctx context.Context, recs []*kgo.Record, done []bool) {
	if len(recs) == 0 {
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(c.workers, len(recs)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(recs) || ctx.Err() != nil {
					return
				}
				done[i] = c.storeRecord(ctx, recs[i])
			}
		})
	}
	wg.Wait()
}

// retryBackoff is the wait before the n-th retry of a record the pipeline
// could not store for a retryable reason (storage unavailable, admission
// full): the record is not skipped, so its partition waits, and fetching
// with it (the client buffers at most one fetch per broker).
func retryBackoff(n int) time.Duration {
	return min(100*time.Millisecond<<min(n, 6), 5*time.Second)
}

// storeRecord stores one record, retrying until it is stored, found
// invalid (then dead-lettered) or ctx ends; it reports whether the record
// is done with.
func (c *Consumer) storeRecord(ctx context.Context, r *kgo.Record) bool {
	sig, m := c.signals[r.Topic], c.m[r.Topic]
	ctx = c.withTenant(ctx, r)
	req := ingest.Request{Transport: ingest.Kafka, Signal: sig, Body: r.Value, Format: ingest.Proto, IdempotencyKey: recordKey(c.cluster, r)}
	if c.format == 2 || (c.format == 0 && looksJSON(r.Value)) {
		req.Format = ingest.JSON
	}
	for attempt := 0; ; attempt++ {
		// No ticket: Export charges the record to the admission budget
		// (waiting for room as a request does) and gives it back.
		res, err := c.p.Export(ctx, req)
		if err == nil {
			m.records.Inc()
			m.items.Add(res.Items - res.Rejected)
			if res.Rejected > 0 {
				m.rejected.Add(res.Rejected)
				c.warn("Kafka record partly invalid; its valid items are stored", "topic", r.Topic, "partition", r.Partition, "offset", r.Offset, "rejected", res.Rejected, "items", res.Items, "why", res.Message)
			}
			return true
		}
		if st, ok := err.(otlp.Status); ok && !otlp.Retryable(st) {
			// Not valid OTLP, larger than the message limit or the
			// whole budget, or refused by the sink for good: no retry
			// can store it.
			return c.deadLetter(ctx, r, sig, fmt.Errorf("request cannot be stored as sent: %w", err))
		}
		if ctx.Err() != nil {
			return false
		}
		m.retries.Inc()
		if attempt%10 == 0 {
			c.log.Warn("cannot store Kafka record; retrying", "topic", r.Topic, "partition", r.Partition, "offset", r.Offset, "attempt", attempt+1, "err", err)
		}
		if !wait.For(ctx, retryBackoff(attempt)) {
			return false
		}
	}
}

// warn logs a line about a bad record, within c.warnLog's rate.
func (c *Consumer) warn(msg string, attrs ...any) {
	if n, ok := c.warnLog.allow(); ok {
		if n > 0 {
			attrs = append(attrs, "not_logged_before", n)
		}
		c.log.Warn(msg, attrs...)
	}
}

// withTenant returns ctx carrying the tenant of the record's TenantHeader
// (the Sink writes it there when the receiver that produced it runs with
// tenants), so that the storage keeps each record under its tenant as the
// edge's disk log would. A header whose name a receiver would refuse is
// ignored (the record belongs to otlp.DefaultTenant) and logged.
func (c *Consumer) withTenant(ctx context.Context, r *kgo.Record) context.Context {
	for _, h := range r.Headers {
		if h.Key != kafkaconn.TenantHeader {
			continue
		}
		if err := otlp.CheckTenantName(string(h.Value)); err != nil {
			c.warn("Kafka record has an invalid tenant header; stored without a tenant", "topic", r.Topic, "partition", r.Partition, "offset", r.Offset, "err", err)
			return ctx
		}
		return otlp.WithTenant(ctx, string(h.Value))
	}
	return ctx
}

// deadLetter logs, sets aside and counts a record that is not valid OTLP,
// so that its partition moves on. It reports whether the record is done
// with (false only when ctx ended before the dead-letter sink took it: the
// record is read again, and counted then). It counts the record once done
// with, so that the count never runs ahead of what is set aside and
// committable.
func (c *Consumer) deadLetter(ctx context.Context, r *kgo.Record, sig otlp.Signal, why error) (done bool) {
	defer func() {
		if done {
			c.m[r.Topic].deadLetters.Inc()
		}
	}()
	if n, ok := c.dlLog.allow(); ok {
		attrs := []any{"topic", r.Topic, "partition", r.Partition, "offset", r.Offset, "bytes", len(r.Value), "err", why}
		if n > 0 {
			attrs = append(attrs, "not_logged_before", n)
		}
		c.log.Error("Kafka record is not a valid OTLP request; dead-lettered and skipped", attrs...)
	}
	if c.dl == nil {
		return true
	}
	c.dlMu.Lock()
	defer c.dlMu.Unlock()
	for attempt := 0; ; attempt++ {
		err := c.dl.Write(ctx, sig, r.Value, 0)
		if err == nil {
			return true
		}
		if errors.Is(err, storage.ErrRejected) {
			c.log.Error("dead-letter storage refused the record; it is dropped", "topic", r.Topic, "partition", r.Partition, "offset", r.Offset, "err", err)
			return true
		}
		if ctx.Err() != nil || !wait.For(ctx, retryBackoff(attempt)) {
			return false
		}
	}
}

// looksJSON reports whether a record is OTLP/JSON: its first byte other
// than JSON white space (RFC 8259 section 2) is '{'.
func looksJSON(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return true
		}
		return false
	}
	return false
}

// commit commits the offsets committable returns.
func (c *Consumer) commit(recs []*kgo.Record, done []bool) {
	upTo := committable(recs, done)
	if len(upTo) == 0 {
		return
	}
	// Not Run's ctx: what is stored must be committed on shutdown too.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.cl.CommitRecords(ctx, upTo...); err != nil {
		c.commitEr.Inc()
		c.log.Warn("cannot commit Kafka offsets; their records will be read again (at-least-once)", "err", err)
	}
}

// committable returns, per partition, the last record of the longest run
// of done records from the poll's first of that partition (recs are in
// offset order within a partition): committing it commits them all, and
// records after one not done are read again.
func committable(recs []*kgo.Record, done []bool) []*kgo.Record {
	var upTo []*kgo.Record
	stopped := map[topicPartition]bool{}
	last := map[topicPartition]int{}
	for i, r := range recs {
		tp := topicPartition{r.Topic, r.Partition}
		if stopped[tp] {
			continue
		}
		if !done[i] {
			stopped[tp] = true
			continue
		}
		if j, ok := last[tp]; ok {
			upTo[j] = r
		} else {
			last[tp] = len(upTo)
			upTo = append(upTo, r)
		}
	}
	return upTo
}

func lagName(tp topicPartition) string {
	return `otlplite_kafka_consume_lag{topic="` + tp.topic + `",partition="` + strconv.Itoa(int(tp.partition)) + `"}`
}

// setLag records a partition's lag: records after the last one polled.
func (c *Consumer) setLag(topic string, p int32, lag int64) {
	tp := topicPartition{topic, p}
	c.lagMu.Lock()
	v, ok := c.lags[tp]
	if !ok {
		v = new(atomic.Int64)
		c.lags[tp] = v
		c.set.GetOrCreateGauge(lagName(tp), func() float64 { return float64(v.Load()) })
	}
	c.lagMu.Unlock()
	v.Store(max(lag, 0))
}

// dropLags removes the lag gauges of partitions this member no longer owns.
func (c *Consumer) dropLags(_ context.Context, _ *kgo.Client, parts map[string][]int32) {
	c.lagMu.Lock()
	defer c.lagMu.Unlock()
	for topic, ps := range parts {
		for _, p := range ps {
			tp := topicPartition{topic, p}
			if _, ok := c.lags[tp]; ok {
				delete(c.lags, tp)
				c.set.UnregisterMetric(lagName(tp))
			}
		}
	}
}
