package kafka

import (
	"errors"
	"fmt"
	"strings"

	"github.com/VictoriaMetrics/metrics"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/otlp-lite/otlp-lite/storage"
)

// The options that read the client metadata of a write (storage.Metadata:
// the request headers the receiver passes), as the Collector's
// kafkaexporter v0.155.0 reads its client.Metadata:
//
//   - include_metadata_keys (kafkaclient/headers.go metadataToHeaders and
//     franzgo.go ExportData): for each key in the configured order, one
//     record header per value, named as configured, after the static
//     record_headers;
//   - <signal>::topic_from_metadata_key (kafka_exporter.go getTopic, lines
//     477-499): the first value, if the key is present, is the topic; it
//     comes before topic_from_attribute, which comes before the topic the
//     context carries (topic.FromContext: otlp-lite's counterpart is the
//     per-tenant topic, which excludes both client-chosen sources), which
//     comes before the signal's topic;
//   - <signal>::message_key_from_metadata_key (getMessageKey, lines
//     468-475, and exportData, lines 157-166): the first value, if
//     present and not empty, keys every record no partition_* option
//     keyed; config.go Validate (lines 194-202) makes it exclude them.
//
// Where otlp-lite departs from the Collector, on purpose: a topic a client
// names (from metadata or from a resource attribute) must be a legal Kafka
// topic name (the Collector would send it and fail at the broker) and is
// one of at most Config.MaxClientTopics distinct names; the metadata
// copied into a record (headers and key) is at most MaxMetadataBytes; a
// metadata key may not be "tenant" (TenantHeader) nor a binary gRPC key
// ("-bin", which grpc-go would base64-decode and otlp-lite passes as
// sent). Each refusal is storage.ErrRejected (INVALID_ARGUMENT, HTTP 400:
// only the client can change what it sends) and counted in
// otlplite_kafka_produce_refusals_total{reason}.

// Record partitioners (the Collector's record_partitioner members).
const (
	PartitionerStickyKey   = "sticky_key"
	PartitionerRoundRobin  = "round_robin"
	PartitionerLeastBackup = "least_backup"
)

// Required acks (the Collector's producer.required_acks values).
const (
	AcksAll    = "all"
	AcksLeader = "1"
)

// DefaultMaxClientTopics is the default of Config.MaxClientTopics: more
// than a deployment routing by team or environment needs, few enough
// that a hostile client cannot fill a cluster with topics.
const DefaultMaxClientTopics = 256

// maxClientTopicsLimit bounds Config.MaxClientTopics itself: the admitted
// names are kept in memory for the life of the Sink.
const maxClientTopicsLimit = 100_000

// MaxMetadataBytes bounds the client metadata copied into one record: its
// metadata headers (names and values) and its metadata key. A request
// header line is rarely over a few hundred bytes; 8 KiB is what common
// proxies allow for all headers of a request, and what each record of a
// request (one per trace, with partition_traces_by_id) would repeat.
const MaxMetadataBytes = 8 << 10

// maxMetadataKeys bounds the keys each option lists.
const maxMetadataKeys = 64

// refusal reasons of otlplite_kafka_produce_refusals_total.
const (
	reasonTopicInvalid     = "client_topic_invalid"
	reasonTopicLimit       = "client_topic_limit"
	reasonMetadataTooLarge = "metadata_too_large"
)

// producerMetrics are the sink's counters.
type producerMetrics struct {
	topicInvalid, topicLimit, metadataTooLarge *metrics.Counter
}

func newProducerMetrics(set *metrics.Set) producerMetrics {
	if set == nil {
		set = metrics.NewSet()
	}
	c := func(reason string) *metrics.Counter {
		return set.GetOrCreateCounter(`otlplite_kafka_produce_refusals_total{reason="` + reason + `"}`)
	}
	return producerMetrics{c(reasonTopicInvalid), c(reasonTopicLimit), c(reasonMetadataTooLarge)}
}

// signalConfig returns the options of sig.
func (cfg *Config) signalConfig(sig storage.Signal) SignalConfig {
	if int(sig) >= len(cfg.PerSignal) {
		return SignalConfig{}
	}
	return cfg.PerSignal[sig]
}

// MetadataKeys lists, once each, the client metadata keys the options
// read (IncludeMetadataKeys and every signal's TopicFromMetadataKey and
// MessageKeyFromMetadataKey): the keys a receiver must pass to the sink
// (handler.Config.MetadataKeys). Nil when no option reads any.
func (cfg Config) MetadataKeys() []string {
	var keys []string
	add := func(k string) {
		if k == "" {
			return
		}
		for _, have := range keys {
			if strings.EqualFold(have, k) {
				return
			}
		}
		keys = append(keys, k)
	}
	for _, k := range cfg.IncludeMetadataKeys {
		add(k)
	}
	for _, sig := range storage.Signals {
		sc := cfg.signalConfig(sig)
		add(sc.TopicFromMetadataKey)
		add(sc.MessageKeyFromMetadataKey)
	}
	return keys
}

// CheckMetadataKey says why key cannot name client metadata, if it
// cannot: it must be a header name (RFC 9110 section 5.1: a token), not
// a binary gRPC key ("-bin": grpc-go, and so the Collector, would pass its
// base64-decoded bytes, otlp-lite the text as sent) and not TenantHeader
// (a client's header of that name would pose as the receiver's tenant to
// -kafka-consume).
func CheckMetadataKey(key string) error {
	if key == "" {
		return errors.New("kafka: empty client metadata key")
	}
	for i := 0; i < len(key); i++ {
		if !isTokenChar(key[i]) {
			return fmt.Errorf("kafka: client metadata key %q: byte 0x%02x cannot be in a header name", key, key[i])
		}
	}
	if strings.HasSuffix(strings.ToLower(key), "-bin") {
		return fmt.Errorf("kafka: client metadata key %q is a binary gRPC key (-bin), whose value the Collector would decode from base64 and otlp-lite would not; not supported", key)
	}
	if strings.EqualFold(key, TenantHeader) {
		return fmt.Errorf("kafka: client metadata key %q: the record header %q holds the receiver's tenant, which a client must not be able to set", key, TenantHeader)
	}
	return nil
}

// isTokenChar reports whether c may be in an HTTP token (RFC 9110
// section 5.6.2: tchar).
func isTokenChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// CheckTopicName says why name is not a legal Kafka topic name, if it is
// not (Kafka's org.apache.kafka.common.internals.Topic.validate: 1 to 249
// bytes of A-Z a-z 0-9 . _ -, and not "." or "..").
func CheckTopicName(name string) error {
	switch {
	case name == "":
		return errors.New("the topic name is empty")
	case name == "." || name == "..":
		return fmt.Errorf("%q is not a legal topic name", name)
	case len(name) > maxTopicLength:
		return fmt.Errorf("the topic name is %d bytes, more than Kafka's %d", len(name), maxTopicLength)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-' {
			continue
		}
		return fmt.Errorf("byte 0x%02x is not allowed in a Kafka topic name (A-Z a-z 0-9 . _ -)", c)
	}
	return nil
}

// CheckRequiredAcks says why acks cannot be Config.RequiredAcks, if it
// cannot. "0" (the Collector's NoResponse) is refused: the receiver
// answers OK only once the sink has the brokers' acknowledgement
// (storage.Sink), and with acks=0 there is none.
func CheckRequiredAcks(acks string) error {
	switch acks {
	case "", AcksAll, "-1", AcksLeader:
		return nil
	case "0":
		return errors.New("kafka: required acks 0 is not supported: the receiver acknowledges a request only once Kafka has, and acks=0 means Kafka never does; use 1 or all")
	}
	return fmt.Errorf("kafka: unknown required acks %q: want all (or -1) or 1", acks)
}

// CheckCompressionLevel says why level cannot be the CompressionLevel of
// codec, if it cannot: as the Collector's configcompression
// (v1.71.0, ValidateParams) and franz_client.go: 0 and -1 are the codec's
// default; gzip takes -2 (Huffman only) and 1 to 9, zstd any level (mapped
// to the nearest it has), the others none.
func CheckCompressionLevel(codec string, level int) error {
	if level == 0 || level == -1 {
		return nil
	}
	switch codec {
	case "gzip":
		if level == -2 || level >= 1 && level <= 9 {
			return nil
		}
		return fmt.Errorf("kafka: gzip compression level %d: want -2 (Huffman only), -1 (default) or 1 to 9", level)
	case "zstd":
		return nil
	}
	return fmt.Errorf("kafka: compression %q takes no level (got %d)", cmpOr(codec, "none"), level)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// setMetadataOptions checks and applies the options that read client
// metadata.
func (s *Sink) setMetadataOptions(cfg *Config) error {
	if len(cfg.IncludeMetadataKeys) > maxMetadataKeys {
		return fmt.Errorf("kafka: %d include metadata keys, more than %d", len(cfg.IncludeMetadataKeys), maxMetadataKeys)
	}
	for i, k := range cfg.IncludeMetadataKeys {
		if err := CheckMetadataKey(k); err != nil {
			return err
		}
		for _, prev := range cfg.IncludeMetadataKeys[:i] {
			if strings.EqualFold(prev, k) {
				return fmt.Errorf("kafka: include metadata key %q listed twice", k)
			}
		}
	}
	s.metaHeaders = cfg.IncludeMetadataKeys
	for _, sig := range storage.Signals {
		sc := cfg.signalConfig(sig)
		for _, k := range []string{sc.TopicFromMetadataKey, sc.MessageKeyFromMetadataKey} {
			if k == "" {
				continue
			}
			if err := CheckMetadataKey(k); err != nil {
				return fmt.Errorf("%w (%s)", err, sig)
			}
		}
		if sc.TopicFromMetadataKey != "" && cfg.TopicPerTenant != "" {
			return fmt.Errorf("kafka: TopicPerTenant and the %s TopicFromMetadataKey cannot both be set: a request header would let a tenant's clients write to another tenant's topic", sig)
		}
		// As the Collector's config.go Validate, lines 194-202.
		if sc.MessageKeyFromMetadataKey != "" {
			switch {
			case sig == storage.Traces && cfg.PartitionTracesByID:
				return errors.New("kafka: the traces MessageKeyFromMetadataKey cannot be combined with PartitionTracesByID")
			case sig == storage.Metrics && cfg.PartitionMetricsByResourceAttributes:
				return errors.New("kafka: the metrics MessageKeyFromMetadataKey cannot be combined with PartitionMetricsByResourceAttributes")
			case sig == storage.Logs && (cfg.PartitionLogsByResourceAttributes || cfg.PartitionLogsByTraceID):
				return errors.New("kafka: the logs MessageKeyFromMetadataKey cannot be combined with PartitionLogsByResourceAttributes or PartitionLogsByTraceID")
			}
		}
		s.topicMetaKey[sig] = sc.TopicFromMetadataKey
		s.keyMetaKey[sig] = sc.MessageKeyFromMetadataKey
	}
	switch m := cfg.MaxClientTopics; {
	case m == 0:
		s.maxClientTopics = DefaultMaxClientTopics
	case m < 0 || m > maxClientTopicsLimit:
		return fmt.Errorf("kafka: MaxClientTopics %d out of range [1, %d]", m, maxClientTopicsLimit)
	default:
		s.maxClientTopics = m
	}
	if err := CheckRequiredAcks(cfg.RequiredAcks); err != nil {
		return err
	}
	return CheckCompressionLevel(cfg.Compression, cfg.CompressionLevel)
}

// admitTopic checks a topic a client named: legal, and known or within
// MaxClientTopics (then remembered). It returns the interned name.
func (s *Sink) admitTopic(name string, source string) (string, error) {
	s.topicMu.RLock()
	t, ok := s.topicNames[name]
	s.topicMu.RUnlock()
	if ok {
		return t, nil
	}
	for _, own := range s.topics {
		if own == name && own != "" {
			return own, nil
		}
	}
	if err := CheckTopicName(name); err != nil {
		s.m.topicInvalid.Inc()
		return "", fmt.Errorf("kafka: the topic named by %s cannot be used: %w: %w", source, err, storage.ErrRejected)
	}
	s.topicMu.Lock()
	defer s.topicMu.Unlock()
	if t, ok := s.topicNames[name]; ok {
		return t, nil
	}
	if len(s.topicNames) >= s.maxClientTopics {
		s.m.topicLimit.Inc()
		return "", fmt.Errorf("kafka: the topic %q named by %s would be a new one, and clients have already named %d topics, the most this receiver allows (-kafka-max-client-topics): %w",
			name, source, s.maxClientTopics, storage.ErrRejected)
	}
	s.topicNames[name] = name
	return name, nil
}

// fromMetadata is what a write takes from its client metadata.
type fromMetadata struct {
	topic   string // "": none
	key     []byte // nil: none
	headers []kgo.RecordHeader
	size    int // the bytes of key and headers, with their framing
}

// readMetadata reads the client metadata md of a write of signal, as the
// Collector does (see the top of this file).
func (s *Sink) readMetadata(signal storage.Signal, md storage.Metadata, headers []kgo.RecordHeader) (fromMetadata, error) {
	var f fromMetadata
	f.headers = headers
	if k := s.keyMetaKey[signal]; k != "" {
		if vs := md.Get(k); len(vs) > 0 && vs[0] != "" {
			f.key = []byte(vs[0])
			f.size += len(f.key)
		}
	}
	added := false
	for _, k := range s.metaHeaders {
		for _, v := range md.Get(k) {
			if !added {
				// A copy: the static headers are shared.
				f.headers = make([]kgo.RecordHeader, len(headers), len(headers)+len(md))
				copy(f.headers, headers)
				added = true
			}
			f.size += len(k) + len(v)
			if f.size > MaxMetadataBytes {
				break
			}
			f.headers = append(f.headers, kgo.RecordHeader{Key: k, Value: []byte(v)})
		}
	}
	if f.size > MaxMetadataBytes {
		s.m.metadataTooLarge.Inc()
		return f, fmt.Errorf("kafka: the request headers copied into each record (%s) are over %d bytes: %w",
			strings.Join(s.metaHeadersAndKey(signal), ", "), MaxMetadataBytes, storage.ErrRejected)
	}
	// The topic last: a request refused for its size must not take one
	// of the MaxClientTopics places.
	if k := s.topicMetaKey[signal]; k != "" {
		// getTopic: the first value when the key is present, even an
		// empty one (which CheckTopicName then refuses).
		if vs := md.Get(k); len(vs) > 0 {
			t, err := s.admitTopic(vs[0], "the request header "+k)
			if err != nil {
				return f, err
			}
			f.topic = t
		}
	}
	return f, nil
}

func (s *Sink) metaHeadersAndKey(signal storage.Signal) []string {
	out := append([]string(nil), s.metaHeaders...)
	if k := s.keyMetaKey[signal]; k != "" {
		out = append(out, k)
	}
	return out
}

// headersSize is the bytes hs take in a record, framing included (a
// varint length for each name and value, at most 5 bytes each).
func headersSize(hs []kgo.RecordHeader) int {
	n := 0
	for _, h := range hs {
		n += len(h.Key) + len(h.Value) + 10
	}
	return n
}
