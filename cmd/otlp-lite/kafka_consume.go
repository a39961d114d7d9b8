//go:build !nokafka

// The Kafka source of serve (-kafka-consume): OTLP records read from Kafka
// topics in a consumer group and stored through the receivers' handler.
// Left out with -tags nokafka, with the rest of the Kafka client.

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/otlp-lite/otlp-lite/kafkasource"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage/deadletter"
	"github.com/otlp-lite/otlp-lite/storage/disk"
	"github.com/otlp-lite/otlp-lite/storage/kafka"
)

// deadLetterDir is where, under -data-dir, records that are not valid OTLP
// are kept: a disk log of its own, which `otlp-lite export -data-dir
// <data-dir>/kafka-dead-letter -signal traces -format proto` prints.
const deadLetterDir = "kafka-dead-letter"

func init() {
	serveExtensions = append(serveExtensions, registerKafkaConsume)
}

// Dead-letter store bounds (package deadletter, shared with forwarding): a
// flood of bad records (anyone who can write to the topics can send them)
// must not fill the disk the real data needs.
const (
	defaultDeadLetterMaxBytes = deadletter.DefaultMaxBytes
	defaultDeadLetterMaxAge   = deadletter.DefaultMaxAge
)

// kafkaConsumeFlags are the -kafka-consume* flags.
type kafkaConsumeFlags struct {
	fs                *flag.FlagSet
	brokers           string
	group             string
	topics            map[otlp.Signal]*string
	exclude           string
	encoding          string
	start             string
	maxPoll           int
	workers           int
	sessionTimeout    time.Duration
	heartbeat         time.Duration
	instanceID        string
	balancer          string
	fetchMax          int
	fetchPartMax      int
	fetchMin          int
	fetchMaxWait      time.Duration
	maxBatch          int
	maxDecompressed   int64
	deadLetter        bool
	deadLetterMaxSize int64
	deadLetterMaxAge  time.Duration
}

func registerKafkaConsume(s *flagSections) extensionFlags {
	f := &kafkaConsumeFlags{fs: s.fs, topics: map[otlp.Signal]*string{}}
	s.add("Kafka source (-kafka-consume)", func(fs *flag.FlagSet) {
		fs.StringVar(&f.brokers, "kafka-consume", "", "read OTLP records from these Kafka brokers (comma-separated host:port) in a consumer group and store them as received requests; TLS and SASL as set by the -kafka-tls-* and -kafka-sasl-* flags; empty: off")
		fs.StringVar(&f.group, "kafka-consume-group", kafkasource.DefaultConsumerGroup, "consumer group: instances in one group share the partitions")
		for _, sig := range otlp.Signals {
			f.topics[sig] = fs.String("kafka-consume-topic-"+sig.String(), sig.Info().KafkaTopic, "topic of "+sig.String()+" records (the Collector's default); beginning with ^: a regular expression matching every such topic, new ones found at the next metadata refresh (within 5m), as in the Collector's kafkareceiver; empty: not consumed")
		}
		fs.StringVar(&f.exclude, "kafka-consume-exclude-topics", "", "comma-separated regular expressions of topics not consumed although a ^expression topic matches them (the kafkareceiver's exclude_topics)")
		fs.StringVar(&f.encoding, "kafka-consume-encoding", "auto", "record format: auto (OTLP/JSON if it starts with '{', else protobuf), otlp_proto or otlp_json")
		fs.StringVar(&f.start, "kafka-consume-start", "earliest", "where a group without committed offsets starts: earliest or latest (the kafkareceiver's initial_offset, whose default is latest)")
		fs.IntVar(&f.maxPoll, "kafka-consume-max-poll-records", kafkasource.DefaultMaxPollRecords, "records read at once; all are stored and their offsets committed before the next read (at most this many are read again after a crash)")
		fs.IntVar(&f.workers, "kafka-consume-workers", kafkasource.DefaultConsumeWorkers, "records stored concurrently")
		fs.DurationVar(&f.sessionTimeout, "kafka-consume-session-timeout", 45*time.Second, "how long the group waits for a silent instance before giving its partitions to the others")
		fs.DurationVar(&f.heartbeat, "kafka-consume-heartbeat-interval", 0, "how often an instance tells the group it is alive; 0: a third of the session timeout, at most 3s")
		fs.StringVar(&f.instanceID, "kafka-consume-instance-id", "", "static group membership (KIP-345): a restart within the session timeout keeps its partitions without a rebalance; unique per instance; empty: dynamic")
		fs.StringVar(&f.balancer, "kafka-consume-balancer", "cooperative-sticky", "partition assignment: cooperative-sticky (only moved partitions pause), sticky, range or roundrobin; the same for every instance of the group")
		fs.IntVar(&f.fetchMax, "kafka-consume-fetch-max-bytes", kafkasource.DefaultFetchMaxBytes, "largest fetch response buffered per broker (the kafkareceiver's max_fetch_size)")
		fs.IntVar(&f.fetchPartMax, "kafka-consume-fetch-max-partition-bytes", kafkasource.DefaultFetchMaxBytes, "largest share of one partition in a fetch (max_partition_fetch_size)")
		fs.IntVar(&f.fetchMin, "kafka-consume-fetch-min-bytes", 1, "bytes a broker gathers before it answers a fetch (min_fetch_size)")
		fs.DurationVar(&f.fetchMaxWait, "kafka-consume-fetch-max-wait", 5*time.Second, "longest a broker holds a fetch to gather -kafka-consume-fetch-min-bytes (max_fetch_wait)")
		fs.IntVar(&f.maxBatch, "kafka-consume-max-batch-bytes", 0, "largest size a compressed record batch may decompress to; a larger one (a decompression bomb) is logged, counted and skipped; 0: the larger of 64 MiB and -grpc-max-recv-msg-size")
		fs.Int64Var(&f.maxDecompressed, "kafka-consume-max-decompressed-bytes", 0, "decompressed record batches held at once; past it fetching pauses until the records fetched are stored; 0: four times -kafka-consume-max-batch-bytes")
		fs.BoolVar(&f.deadLetter, "kafka-consume-dead-letter", true, "keep records that are not valid OTLP in <data-dir>/"+deadLetterDir+" (read it with otlp-lite export -format proto); false: only log and count them")
		fs.Int64Var(&f.deadLetterMaxSize, "kafka-consume-dead-letter-max-bytes", defaultDeadLetterMaxBytes, "size past which the oldest dead letters are deleted, so a flood of bad records cannot fill the disk; 0: no limit")
		fs.DurationVar(&f.deadLetterMaxAge, "kafka-consume-dead-letter-max-age", defaultDeadLetterMaxAge, "age past which dead letters are deleted; 0: no limit")
	})
	return f
}

func (f *kafkaConsumeFlags) validate(cfg *serveConfig) error {
	if f.brokers == "" {
		return nil
	}
	if len(splitList(f.brokers)) == 0 {
		return errors.New("bad -kafka-consume: no broker")
	}
	if cfg.storageKind == "kafka" && f.fs.Lookup("kafka-brokers").Value.String() == f.brokers {
		return errors.New("-kafka-consume with -storage kafka on the same brokers would store its records back into Kafka; use -storage disk")
	}
	switch f.encoding {
	case "auto", kafka.EncodingProto, kafka.EncodingJSON:
	default:
		return fmt.Errorf("bad -kafka-consume-encoding %q: want auto, otlp_proto or otlp_json", f.encoding)
	}
	if f.start != "earliest" && f.start != "latest" {
		return fmt.Errorf("bad -kafka-consume-start %q: want earliest or latest", f.start)
	}
	if f.maxPoll <= 0 || f.workers <= 0 {
		return errors.New("bad -kafka-consume-max-poll-records or -kafka-consume-workers: must be positive")
	}
	if f.group == "" {
		return errors.New("bad -kafka-consume-group: empty")
	}
	if f.sessionTimeout < time.Second {
		return fmt.Errorf("bad -kafka-consume-session-timeout %v: at least 1s", f.sessionTimeout)
	}
	if f.heartbeat < 0 || (f.heartbeat > 0 && f.heartbeat >= f.sessionTimeout) {
		return fmt.Errorf("bad -kafka-consume-heartbeat-interval %v: must be shorter than -kafka-consume-session-timeout %v", f.heartbeat, f.sessionTimeout)
	}
	switch f.balancer {
	case "cooperative-sticky", "sticky", "range", "roundrobin":
	default:
		return fmt.Errorf("bad -kafka-consume-balancer %q: want cooperative-sticky, sticky, range or roundrobin", f.balancer)
	}
	regex := false
	for sig, topic := range f.topics {
		if !strings.HasPrefix(*topic, "^") {
			continue
		}
		regex = true
		if _, err := regexp.Compile(*topic); err != nil {
			return fmt.Errorf("bad -kafka-consume-topic-%s: %w", sig, err)
		}
	}
	for _, x := range splitList(f.exclude) {
		if !regex {
			return errors.New("-kafka-consume-exclude-topics needs a -kafka-consume-topic-* regular expression (beginning with ^)")
		}
		if _, err := regexp.Compile(x); err != nil {
			return fmt.Errorf("bad -kafka-consume-exclude-topics: %w", err)
		}
	}
	if f.fetchMax <= 0 || f.fetchMax > 1<<30 || f.fetchPartMax <= 0 || f.fetchPartMax > 1<<30 || f.fetchMin <= 0 || f.fetchMin > 1<<30 {
		return errors.New("bad -kafka-consume-fetch-*-bytes: from 1 to 1073741824")
	}
	if f.fetchMaxWait < time.Millisecond {
		return fmt.Errorf("bad -kafka-consume-fetch-max-wait %v: at least 1ms", f.fetchMaxWait)
	}
	// A batch holds at least one record, and a record as large as the
	// largest request is legitimate.
	if f.maxBatch != 0 && (f.maxBatch < cfg.maxRecvMsgSize || f.maxBatch > 1<<30) {
		return fmt.Errorf("bad -kafka-consume-max-batch-bytes %d: 0 or from -grpc-max-recv-msg-size (%d) to 1073741824", f.maxBatch, cfg.maxRecvMsgSize)
	}
	if batch := f.batchBytes(cfg); f.maxDecompressed != 0 && f.maxDecompressed < int64(batch) {
		return fmt.Errorf("bad -kafka-consume-max-decompressed-bytes %d: 0 or at least the batch bound (%d)", f.maxDecompressed, batch)
	}
	if f.deadLetterMaxSize < 0 || f.deadLetterMaxAge < 0 {
		return errors.New("bad -kafka-consume-dead-letter-max-bytes or -max-age: negative")
	}
	return nil
}

// batchBytes is the batch bound: -kafka-consume-max-batch-bytes, or by
// default the larger of kafkasource.DefaultMaxBatchBytes and the largest request
// (a batch of one such record is legitimate), within franz-go's 1 GiB.
func (f *kafkaConsumeFlags) batchBytes(cfg *serveConfig) int {
	if f.maxBatch != 0 {
		return f.maxBatch
	}
	return min(max(kafkasource.DefaultMaxBatchBytes, cfg.maxRecvMsgSize), 1<<30)
}

func (f *kafkaConsumeFlags) newExtension(cfg *serveConfig) (serveExtension, error) {
	if f.brokers == "" {
		return nil, nil
	}
	return &kafkaSource{f: f, batch: f.batchBytes(cfg)}, nil
}

// kafkaSource runs a kafka.Consumer beside the receivers.
type kafkaSource struct {
	f      *kafkaConsumeFlags
	batch  int // the batch bound (batchBytes)
	c      *kafkasource.Consumer
	dl     *disk.Store
	cancel func()
	done   chan error
}

func (k *kafkaSource) start(env *serveEnv) error {
	f := k.f
	cfg := kafkasource.ConsumerConfig{
		Brokers:                splitList(f.brokers),
		Group:                  f.group,
		Topics:                 map[otlp.Signal]string{},
		StartFromLatest:        f.start == "latest",
		ExcludeTopics:          splitList(f.exclude),
		MaxPollRecords:         f.maxPoll,
		Workers:                f.workers,
		SessionTimeout:         f.sessionTimeout,
		HeartbeatInterval:      f.heartbeat,
		InstanceID:             f.instanceID,
		Balancer:               f.balancer,
		FetchMaxBytes:          f.fetchMax,
		FetchMaxPartitionBytes: f.fetchPartMax,
		FetchMinBytes:          f.fetchMin,
		FetchMaxWait:           f.fetchMaxWait,
		MaxBatchBytes:          k.batch,
		MaxDecompressedBytes:   f.maxDecompressed, // 0: 4 × MaxBatchBytes
		Pipeline:               env.handler.Pipeline(),
		Metrics:                env.metrics,
	}
	if f.encoding != "auto" {
		cfg.Encoding = f.encoding
	}
	for sig, topic := range f.topics {
		cfg.Topics[sig] = *topic
	}
	var err error
	if cfg.TLS, cfg.SASL, cfg.Logger, err = kafkaConn(f.fs); err != nil {
		return err
	}
	if f.deadLetter {
		bound := deadletter.Bound{MaxBytes: f.deadLetterMaxSize, MaxAge: f.deadLetterMaxAge}
		if k.dl, err = deadletter.Open(filepath.Join(env.dataDir, deadLetterDir), bound, env.logger); err != nil {
			return fmt.Errorf("cannot open the Kafka dead-letter store: %w", err)
		}
		cfg.DeadLetter = k.dl
	}
	if k.c, err = kafkasource.NewConsumer(cfg); err != nil {
		k.closeDeadLetter()
		return err
	}
	// A wrong CA, client certificate or password does not heal: refuse to
	// start with the reason, instead of retrying in the log forever.
	// Brokers that are merely down are waited for.
	pctx, pcancel := context.WithTimeout(context.Background(), 10*time.Second)
	err = k.c.Ping(pctx)
	pcancel()
	if kafkasource.PermanentConnError(err) {
		k.c.Close()
		k.closeDeadLetter()
		return fmt.Errorf("cannot start the Kafka source (check -kafka-tls-* and -kafka-sasl-*): %w", err)
	}
	if err != nil {
		env.logger.Warn("Kafka brokers not reachable yet; the Kafka source waits for them", "brokers", f.brokers, "err", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	k.cancel, k.done = cancel, make(chan error, 1)
	go func() { k.done <- k.c.Run(ctx) }()
	env.logger.Info("consuming OTLP from Kafka", "brokers", f.brokers, "group", f.group, "topics", cfg.Topics, "dead_letters", f.deadLetter)
	return nil
}

// stop ends consumption: records being stored finish (or are abandoned at
// ctx's end, to be read again), what is stored is committed, the group is
// left.
func (k *kafkaSource) stop(ctx context.Context) error {
	k.cancel()
	var err error
	select {
	case err = <-k.done:
	case <-ctx.Done():
		k.c.Close()
		err = errors.New("Kafka source did not stop in time; uncommitted records will be read again")
	}
	if e := k.closeDeadLetter(); e != nil && err == nil {
		err = e
	}
	return err
}

func (k *kafkaSource) closeDeadLetter() error {
	if k.dl == nil {
		return nil
	}
	return k.dl.Close()
}
