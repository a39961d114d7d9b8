package kafka

// Record keys and the partitioner, exactly as the OpenTelemetry Collector's
// kafkaexporter computes them (opentelemetry-collector-contrib v0.155.0:
// exporter/kafkaexporter/kafka_exporter.go, partitioner.go and factory.go,
// internal/kafka/franz_client.go, pkg/pdatautil/hash.go), so that records
// of otlp-lite and of Collectors writing one topic agree on partitions:
//
//   - partition_traces_by_id: the key is the trace id as 32 lower-case hex
//     characters (traceutil.TraceIDToHexOrEmptyString), and the empty key
//     (present, zero length) for spans whose trace id is all zero;
//   - partition_logs_by_trace_id: likewise for log records, except that a
//     record without a trace id gets no key at all;
//   - partition_metrics_by_resource_attributes and
//     partition_logs_by_resource_attributes: one record per resource, keyed
//     by the 16-byte pdatautil.MapHash of its attributes (two XXH64 sums of
//     a canonical serialisation with the keys sorted);
//   - the partitioner is franz-go's sticky key partitioner with the
//     Collector's default hasher, record_partitioner.sticky_key.hasher
//     sarama_compat: FNV-1a 32 of the key, as a signed int32, modulo the
//     partition count, made non-negative (Sarama's HashPartitioner).
//     Records without a key go to a sticky, randomly chosen partition.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/fnv"
	"math/bits"
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/otlp-lite/otlp-lite/otlppb"
)

// Partitioner hashers (the Collector's record_partitioner.sticky_key.hasher).
const (
	HasherSaramaCompat = "sarama_compat"
	HasherMurmur2      = "murmur2"
)

// partitioner returns the kgo partitioner of a record_partitioner kind
// ("" is sticky_key) and, for sticky_key, a hasher name, as the
// Collector's partitioner.go buildPartitionerOpt (v0.155.0). Its
// "extension" kind, a Collector plugin, has no counterpart.
func partitioner(kind, hasher string) (kgo.Partitioner, error) {
	switch kind {
	case "", PartitionerStickyKey:
	case PartitionerRoundRobin, PartitionerLeastBackup:
		if hasher != "" {
			return nil, errors.New("kafka: a partitioner hasher applies to the sticky_key partitioner only, not " + kind)
		}
		if kind == PartitionerRoundRobin {
			return kgo.RoundRobinPartitioner(), nil
		}
		return kgo.LeastBackupPartitioner(), nil
	default:
		return nil, errors.New("kafka: unknown partitioner " + kind + ": want sticky_key, round_robin or least_backup")
	}
	switch hasher {
	case "", HasherSaramaCompat:
		return kgo.StickyKeyPartitioner(kgo.SaramaCompatHasher(fnv32a)), nil
	case HasherMurmur2:
		// nil: franz-go's default, the Java client's murmur2.
		return kgo.StickyKeyPartitioner(nil), nil
	}
	return nil, errors.New("kafka: unknown partitioner hasher " + hasher + ": want sarama_compat or murmur2")
}

func fnv32a(b []byte) uint32 {
	h := fnv.New32a()
	h.Write(b)
	return h.Sum32()
}

// Partition returns the partition, of n, that a record with key goes to
// under the given hasher ("" is sarama_compat); key must not be nil (a
// record without key has no fixed partition).
func Partition(hasher string, key []byte, n int) (int, error) {
	p, err := partitioner("", hasher)
	if err != nil {
		return 0, err
	}
	return p.ForTopic("").Partition(&kgo.Record{Key: key}, n), nil
}

// spanKey is the Collector's key for the spans of one trace
// (partition_traces_by_id): the hex trace id, empty for the zero id.
func spanKey(dst []byte, id [16]byte) ([]byte, bool) { return appendHexID(dst, id), true }

// logRecordKey is the Collector's key for the log records of one trace
// (partition_logs_by_trace_id): the hex trace id, and no key at all for
// the zero id.
func logRecordKey(dst []byte, id [16]byte) ([]byte, bool) {
	return appendHexID(dst, id), id != [16]byte{}
}

// appendHexID appends id as lower-case hex, or nothing when it is all zero
// (pcommon.TraceID.IsEmpty: the Collector's key is then "").
func appendHexID(dst []byte, id [16]byte) []byte {
	if id == ([16]byte{}) {
		return dst
	}
	const digits = "0123456789abcdef"
	for _, b := range id {
		dst = append(dst, digits[b>>4], digits[b&15])
	}
	return dst
}

// The prefixes of pdatautil's canonical serialisation of a value.
const (
	hashExtra      = 0xf3
	hashKey        = 0xf4
	hashEmpty      = 0xf5
	hashBytes      = 0xf6
	hashStr        = 0xf7
	hashTrue       = 0xf8
	hashFalse      = 0xf9
	hashInt        = 0xfa
	hashDouble     = 0xfb
	hashMapStart   = 0xfc
	hashMapEnd     = 0xfd
	hashSliceStart = 0xfe
	hashSliceEnd   = 0xff
	maxHashDepth   = 128 // deeper than the receiver's AnyValue limit
)

// requestResources is the repeated resource field of every export request
// and resourceField the Resource of every ResourceX: one number for all
// four signals, which lets one walk key and route them all (the constant
// expressions fail to compile if another signal's number differs:
// uint(-1) overflows).
const (
	requestResources = otlppb.ExportTraceServiceRequestResourceSpans
	resourceField    = otlppb.ResourceSpansResource

	_ = uint(requestResources-otlppb.ExportMetricsServiceRequestResourceMetrics) + uint(otlppb.ExportMetricsServiceRequestResourceMetrics-requestResources) +
		uint(requestResources-otlppb.ExportLogsServiceRequestResourceLogs) + uint(otlppb.ExportLogsServiceRequestResourceLogs-requestResources) +
		uint(requestResources-otlppb.ExportProfilesServiceRequestResourceProfiles) + uint(otlppb.ExportProfilesServiceRequestResourceProfiles-requestResources)
	_ = uint(resourceField-otlppb.ResourceMetricsResource) + uint(otlppb.ResourceMetricsResource-resourceField) +
		uint(resourceField-otlppb.ResourceLogsResource) + uint(otlppb.ResourceLogsResource-resourceField) +
		uint(resourceField-otlppb.ResourceProfilesResource) + uint(otlppb.ResourceProfilesResource-resourceField)
)

var errHashDepth = errors.New("attribute values nested too deep to hash")

// attrHasher computes pdatautil.MapHash from the protobuf encoding of an
// attribute list, without building it. Its buffers are reused.
type attrHasher struct {
	buf []byte
	kvs []keyValue // a stack: each map being hashed owns a tail
}

// keyValue is one KeyValue of a map: its key and its AnyValue (nil: no
// value, which pdata reads as the empty value).
type keyValue struct {
	key, value []byte
	hasValue   bool
}

// resourceKey appends to dst the Collector's key for the resource of a
// ResourceSpans/ResourceMetrics/ResourceLogs message rs (its resource, and
// the resource's attributes).
func (h *attrHasher) resourceKey(dst, rs []byte) ([]byte, error) {
	h.buf, h.kvs = h.buf[:0], h.kvs[:0]
	// A repeated message field merges (protobuf "Last One Wins" for
	// scalars, concatenation for repeated fields): every Resource
	// occurrence contributes its attributes.
	var f otlppb.Field
	for b := rs; len(b) > 0; {
		var err error
		if b, err = f.Read(b); err != nil {
			return dst, err
		}
		res, ok := f.MessageData()
		if f.FieldNum != resourceField || !ok {
			continue
		}
		if err := h.collect(res, otlppb.ResourceAttributes); err != nil {
			return dst, err
		}
	}
	if len(h.kvs) == 0 {
		// pdatautil.MapHash of an empty map: 16 zero bytes.
		return append(dst, make([]byte, 16)...), nil
	}
	if err := h.writeMap(0, 0); err != nil {
		return dst, err
	}
	return h.sum128(dst), nil
}

// collect appends the KeyValues of field num of msg (Resource.attributes,
// KeyValueList.values) to h.kvs.
func (h *attrHasher) collect(msg []byte, num uint32) error {
	var f otlppb.Field
	for b := msg; len(b) > 0; {
		var err error
		if b, err = f.Read(b); err != nil {
			return err
		}
		kv, ok := f.MessageData()
		if f.FieldNum != num || !ok {
			continue
		}
		var e keyValue
		for kb := kv; len(kb) > 0; {
			if kb, err = f.Read(kb); err != nil {
				return err
			}
			v, ok := f.MessageData()
			switch {
			case f.FieldNum == otlppb.KeyValueKey && ok:
				e.key = v
			case f.FieldNum == otlppb.KeyValueValue && ok:
				e.value, e.hasValue = v, true
			}
		}
		h.kvs = append(h.kvs, e)
	}
	return nil
}

// writeMap serialises the map h.kvs[from:] as pdatautil's writeMapHash
// does: keys sorted (duplicates kept: each writes the value Map.Get
// returns, the first with that key), each as 0xf4, the key, the value.
// It truncates h.kvs back to from.
func (h *attrHasher) writeMap(from, depth int) error {
	if depth > maxHashDepth {
		return errHashDepth
	}
	m := h.kvs[from:]
	// Stable: equal keys keep their order, so the first of a run is the
	// one Map.Get finds.
	slices.SortStableFunc(m, func(a, b keyValue) int { return bytes.Compare(a.key, b.key) })
	end := len(h.kvs)
	first := from // the first entry of the run of equal keys i is in
	for i := from; i < end; i++ {
		if !bytes.Equal(h.kvs[first].key, h.kvs[i].key) {
			first = i
		}
		h.buf = append(h.buf, hashKey)
		h.buf = append(h.buf, h.kvs[i].key...)
		e := h.kvs[first]
		if !e.hasValue {
			h.buf = append(h.buf, hashEmpty)
			continue
		}
		if err := h.writeValue(e.value, depth); err != nil {
			return err
		}
	}
	h.kvs = h.kvs[:from]
	return nil
}

// writeValue serialises an AnyValue as pdatautil's writeValueHash does.
// Its oneof is the last member present (protobuf "Last One Wins"); a
// member sent with another wire type than its own is ignored, as the
// receiver's walks ignore it (otlppb.Field).
func (h *attrHasher) writeValue(v []byte, depth int) error {
	var (
		f    otlppb.Field
		kind uint32 // the member present; 0: none
		body []byte // its payload, if length-delimited
		val  uint64 // its value, if a scalar
	)
	for b := v; len(b) > 0; {
		var err error
		if b, err = f.Read(b); err != nil {
			return err
		}
		switch f.FieldNum {
		case otlppb.AnyValueStringValue, otlppb.AnyValueArrayValue, otlppb.AnyValueKvlistValue, otlppb.AnyValueBytesValue:
			if data, ok := f.MessageData(); ok {
				kind, body = f.FieldNum, data
			}
		case otlppb.AnyValueBoolValue, otlppb.AnyValueIntValue:
			if x, ok := f.Uint64(); ok {
				kind, val = f.FieldNum, x
			}
		case otlppb.AnyValueDoubleValue: // fixed64, little-endian on the wire
			if x, ok := f.Fixed64(); ok {
				kind, val = f.FieldNum, x
			}
		}
	}
	switch kind {
	case 0:
		h.buf = append(h.buf, hashEmpty)
	case otlppb.AnyValueStringValue:
		h.buf = append(h.buf, hashStr)
		h.buf = append(h.buf, body...)
	case otlppb.AnyValueBoolValue:
		if val != 0 {
			h.buf = append(h.buf, hashTrue)
		} else {
			h.buf = append(h.buf, hashFalse)
		}
	case otlppb.AnyValueIntValue:
		h.buf = append(h.buf, hashInt)
		h.buf = binary.LittleEndian.AppendUint64(h.buf, val)
	case otlppb.AnyValueDoubleValue:
		h.buf = append(h.buf, hashDouble)
		h.buf = binary.LittleEndian.AppendUint64(h.buf, val)
	case otlppb.AnyValueArrayValue:
		if depth >= maxHashDepth {
			return errHashDepth
		}
		h.buf = append(h.buf, hashSliceStart)
		for b := body; len(b) > 0; {
			var err error
			if b, err = f.Read(b); err != nil {
				return err
			}
			if elem, ok := f.MessageData(); ok && f.FieldNum == otlppb.ArrayValueValues {
				if err := h.writeValue(elem, depth+1); err != nil {
					return err
				}
			}
		}
		h.buf = append(h.buf, hashSliceEnd)
	case otlppb.AnyValueKvlistValue:
		h.buf = append(h.buf, hashMapStart)
		from := len(h.kvs)
		if err := h.collect(body, otlppb.KeyValueListValues); err != nil {
			return err
		}
		if err := h.writeMap(from, depth+1); err != nil {
			return err
		}
		h.buf = append(h.buf, hashMapEnd)
	case otlppb.AnyValueBytesValue:
		h.buf = append(h.buf, hashBytes)
		h.buf = append(h.buf, body...)
	}
	return nil
}

// sum128 appends pdatautil's 128-bit hash of h.buf: XXH64 of the bytes,
// then XXH64 of the bytes followed by 0xf3, each little-endian.
func (h *attrHasher) sum128(dst []byte) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, xxh64(h.buf))
	h.buf = append(h.buf, hashExtra)
	return binary.LittleEndian.AppendUint64(dst, xxh64(h.buf))
}

// XXH64 with seed 0 (the xxHash specification, doc/xxhash_spec.md; the
// Collector uses github.com/cespare/xxhash/v2, which computes the same).
const (
	xxPrime1 uint64 = 11400714785074694791
	xxPrime2 uint64 = 14029467366897019727
	xxPrime3 uint64 = 1609587929392839161
	xxPrime4 uint64 = 9650029242287828579
	xxPrime5 uint64 = 2870177450012600261
)

func xxRound(acc, input uint64) uint64 {
	acc += input * xxPrime2
	return bits.RotateLeft64(acc, 31) * xxPrime1
}

func xxMerge(acc, val uint64) uint64 {
	acc ^= xxRound(0, val)
	return acc*xxPrime1 + xxPrime4
}

func xxh64(b []byte) uint64 {
	n := uint64(len(b))
	var h uint64
	if len(b) >= 32 {
		p1, p2 := xxPrime1, xxPrime2 // variables: the sums wrap around
		v1 := p1 + p2
		v2 := p2
		v3 := uint64(0)
		v4 := -p1
		for len(b) >= 32 {
			v1 = xxRound(v1, binary.LittleEndian.Uint64(b[0:]))
			v2 = xxRound(v2, binary.LittleEndian.Uint64(b[8:]))
			v3 = xxRound(v3, binary.LittleEndian.Uint64(b[16:]))
			v4 = xxRound(v4, binary.LittleEndian.Uint64(b[24:]))
			b = b[32:]
		}
		h = bits.RotateLeft64(v1, 1) + bits.RotateLeft64(v2, 7) + bits.RotateLeft64(v3, 12) + bits.RotateLeft64(v4, 18)
		h = xxMerge(h, v1)
		h = xxMerge(h, v2)
		h = xxMerge(h, v3)
		h = xxMerge(h, v4)
	} else {
		h = xxPrime5
	}
	h += n
	for ; len(b) >= 8; b = b[8:] {
		h ^= xxRound(0, binary.LittleEndian.Uint64(b))
		h = bits.RotateLeft64(h, 27)*xxPrime1 + xxPrime4
	}
	if len(b) >= 4 {
		h ^= uint64(binary.LittleEndian.Uint32(b)) * xxPrime1
		h = bits.RotateLeft64(h, 23)*xxPrime2 + xxPrime3
		b = b[4:]
	}
	for _, c := range b {
		h ^= uint64(c) * xxPrime5
		h = bits.RotateLeft64(h, 11) * xxPrime1
	}
	h ^= h >> 33
	h *= xxPrime2
	h ^= h >> 29
	h *= xxPrime3
	h ^= h >> 32
	return h
}

// stringAttr returns the string value of the first attribute named name,
// with a non-empty string value, of the first resource of the request msg
// that has one (the Collector's getTopic for topic_from_attribute: a
// non-string value reads as "" through pcommon.Value.Str, so it does not
// count). ok is false if no resource has it.
func stringAttr(msg []byte, name string) (val []byte, ok bool) {
	var f otlppb.Field
	for b := msg; len(b) > 0; {
		var err error
		if b, err = f.Read(b); err != nil {
			return nil, false
		}
		rs, isMsg := f.MessageData()
		if f.FieldNum != requestResources || !isMsg {
			continue
		}
		if v, ok := resourceStringAttr(rs, name); ok {
			return v, true
		}
	}
	return nil, false
}

// resourceStringAttr is stringAttr for one ResourceX message: Map.Get
// finds the first attribute with the name; its value counts if it is a
// non-empty string.
func resourceStringAttr(rs []byte, name string) ([]byte, bool) {
	var f otlppb.Field
	for b := rs; len(b) > 0; {
		var err error
		if b, err = f.Read(b); err != nil {
			return nil, false
		}
		res, ok := f.MessageData()
		if f.FieldNum != resourceField || !ok {
			continue
		}
		for rb := res; len(rb) > 0; {
			if rb, err = f.Read(rb); err != nil {
				return nil, false
			}
			kv, ok := f.MessageData()
			if f.FieldNum != otlppb.ResourceAttributes || !ok {
				continue
			}
			var key, value []byte
			for kb := kv; len(kb) > 0; {
				if kb, err = f.Read(kb); err != nil {
					return nil, false
				}
				v, ok := f.MessageData()
				switch {
				case f.FieldNum == otlppb.KeyValueKey && ok:
					key = v
				case f.FieldNum == otlppb.KeyValueValue && ok:
					value = v
				}
			}
			if string(key) != name {
				continue
			}
			// The first attribute with the name decides: its value's
			// oneof is the last member present (see writeValue).
			var s []byte
			isStr := false
			for vb := value; len(vb) > 0; {
				if vb, err = f.Read(vb); err != nil {
					return nil, false
				}
				switch f.FieldNum {
				case otlppb.AnyValueStringValue, otlppb.AnyValueArrayValue, otlppb.AnyValueKvlistValue, otlppb.AnyValueBytesValue:
					if data, ok := f.MessageData(); ok {
						isStr, s = f.FieldNum == otlppb.AnyValueStringValue, data
					}
				case otlppb.AnyValueBoolValue, otlppb.AnyValueIntValue:
					if _, ok := f.Uint64(); ok {
						isStr = false
					}
				case otlppb.AnyValueDoubleValue:
					if _, ok := f.Fixed64(); ok {
						isStr = false
					}
				}
			}
			if isStr && len(s) > 0 {
				return s, true
			}
			return nil, false
		}
	}
	return nil, false
}
