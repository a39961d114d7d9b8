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
	"time"

	"github.com/otlp-lite/otlp-lite/otlp"
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

// kafkaConsumeFlags are the -kafka-consume* flags.
type kafkaConsumeFlags struct {
	fs             *flag.FlagSet
	brokers        string
	group          string
	topics         map[otlp.Signal]*string
	encoding       string
	start          string
	maxPoll        int
	workers        int
	sessionTimeout time.Duration
	deadLetter     bool
}

func registerKafkaConsume(s *flagSections) extensionFlags {
	f := &kafkaConsumeFlags{fs: s.fs, topics: map[otlp.Signal]*string{}}
	s.add("Kafka source (-kafka-consume)", func(fs *flag.FlagSet) {
		fs.StringVar(&f.brokers, "kafka-consume", "", "read OTLP records from these Kafka brokers (comma-separated host:port) in a consumer group and store them as received requests; TLS and SASL as set by the -kafka-tls-* and -kafka-sasl-* flags; empty: off")
		fs.StringVar(&f.group, "kafka-consume-group", kafka.DefaultConsumerGroup, "consumer group: instances in one group share the partitions")
		for _, sig := range otlp.Signals {
			f.topics[sig] = fs.String("kafka-consume-topic-"+sig.String(), sig.Info().KafkaTopic, "topic of "+sig.String()+" records (the Collector's default); empty: not consumed")
		}
		fs.StringVar(&f.encoding, "kafka-consume-encoding", "auto", "record format: auto (OTLP/JSON if it starts with '{', else protobuf), otlp_proto or otlp_json")
		fs.StringVar(&f.start, "kafka-consume-start", "earliest", "where a group without committed offsets starts: earliest or latest")
		fs.IntVar(&f.maxPoll, "kafka-consume-max-poll-records", kafka.DefaultMaxPollRecords, "records read at once; all are stored and their offsets committed before the next read (at most this many are read again after a crash)")
		fs.IntVar(&f.workers, "kafka-consume-workers", kafka.DefaultConsumeWorkers, "records stored concurrently")
		fs.DurationVar(&f.sessionTimeout, "kafka-consume-session-timeout", 45*time.Second, "how long the group waits for a silent instance before giving its partitions to the others")
		fs.BoolVar(&f.deadLetter, "kafka-consume-dead-letter", true, "keep records that are not valid OTLP in <data-dir>/"+deadLetterDir+" (read it with otlp-lite export -format proto); false: only log and count them")
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
	return nil
}

func (f *kafkaConsumeFlags) newExtension(*serveConfig) (serveExtension, error) {
	if f.brokers == "" {
		return nil, nil
	}
	return &kafkaSource{f: f}, nil
}

// kafkaSource runs a kafka.Consumer beside the receivers.
type kafkaSource struct {
	f      *kafkaConsumeFlags
	c      *kafka.Consumer
	dl     *disk.Store
	cancel func()
	done   chan error
}

func (k *kafkaSource) start(env *serveEnv) error {
	f := k.f
	cfg := kafka.ConsumerConfig{
		Brokers:         splitList(f.brokers),
		Group:           f.group,
		Topics:          map[otlp.Signal]string{},
		StartFromLatest: f.start == "latest",
		MaxPollRecords:  f.maxPoll,
		Workers:         f.workers,
		SessionTimeout:  f.sessionTimeout,
		Handler:         env.handler,
		Metrics:         env.metrics,
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
		if k.dl, err = disk.Open(filepath.Join(env.dataDir, deadLetterDir), disk.Options{Logger: env.logger}); err != nil {
			return fmt.Errorf("cannot open the Kafka dead-letter store: %w", err)
		}
		cfg.DeadLetter = k.dl
	}
	if k.c, err = kafka.NewConsumer(cfg); err != nil {
		k.closeDeadLetter()
		return err
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
