package kafka

import (
	"fmt"

	"github.com/otlp-lite/otlp-lite/storage"
)

// ErrTooLarge is returned (wrapped) by Sink.Write when one resource of a
// request — one ResourceSpans, ResourceMetrics or ResourceLogs, or with
// Config.PartitionTracesByID the spans of one trace under one resource — encodes
// larger than the Kafka message limit, so the request cannot be split into
// records the broker accepts. Retrying the same request cannot succeed,
// unlike errors wrapping storage.ErrUnavailable or storage.ErrOverloaded.
// It wraps storage.ErrRejected, so clients are told not to retry.
var ErrTooLarge = fmt.Errorf("%w: resource larger than the Kafka message size limit", storage.ErrRejected)

// piece is one Kafka record of a split request: key and value are byte
// ranges of the batch buffer (offsets, because the buffer grows while the
// pieces are appended). keyStart < 0 means no key.
type piece struct {
	keyStart, keyEnd int
	start, end       int
	topic            string // "": the signal's topic
}

// appendResources appends msg to dst as one or more pieces of at most limit
// bytes, each keyed by dst[keyStart:keyEnd] (keyStart < 0: no key).
//
// An OTLP export request is
//
//	message ExportTraceServiceRequest {      // ≡ TracesData
//	  repeated ResourceSpans resource_spans = 1;
//	}
//
// (ResourceMetrics, ResourceLogs likewise), and a concatenation of encoded
// messages is the merge of the messages (protobuf encoding, "Last One
// Wins"/"Concatenated messages"), so any run of top-level field-1 entries is
// itself a valid request of the same type. A request over the limit is cut
// between resources, greedily, keeping their order. Other top-level fields
// (none in OTLP v1.11, but a newer sender may add some) are copied into
// every piece, so no piece loses them. A single resource that does not fit
// fails with ErrTooLarge; name ("resource_spans") says which field.
func appendResources(dst []byte, pieces []piece, msg []byte, limit, keyStart, keyEnd int, name string) ([]byte, []piece, error) {
	if len(msg) <= limit {
		start := len(dst)
		dst = append(dst, msg...)
		return dst, append(pieces, piece{keyStart: keyStart, keyEnd: keyEnd, start: start, end: len(dst)}), nil
	}
	// First pass: validate and measure the fields every piece repeats.
	common := 0
	for b := msg; len(b) > 0; {
		num, raw, _, rest, err := nextField(b)
		if err != nil {
			return dst, pieces, fmt.Errorf("cannot split request: %w", err)
		}
		if num != 1 {
			common += len(raw)
		}
		b = rest
	}
	start, n, idx := -1, 0, 0
	for b := msg; len(b) > 0; idx++ {
		num, raw, _, rest, _ := nextField(b)
		b = rest
		if num != 1 {
			continue
		}
		if common+len(raw) > limit {
			return dst, pieces, fmt.Errorf("cannot split request for Kafka: %s[%d] is %d bytes, over the %d-byte message limit: %w",
				name, idx, len(raw), limit, ErrTooLarge)
		}
		if start >= 0 && len(dst)-start+len(raw) > limit {
			pieces = append(pieces, piece{keyStart: keyStart, keyEnd: keyEnd, start: start, end: len(dst)})
			start = -1
		}
		if start < 0 {
			start = len(dst)
			dst = appendCommon(dst, msg)
			n++
		}
		dst = append(dst, raw...)
	}
	if start >= 0 {
		pieces = append(pieces, piece{keyStart: keyStart, keyEnd: keyEnd, start: start, end: len(dst)})
	} else if n == 0 {
		// Over the limit with no resource at all: only unknown fields,
		// which cannot be split.
		return dst, pieces, fmt.Errorf("cannot split request for Kafka: %d bytes without any %s, over the %d-byte message limit: %w",
			len(msg), name, limit, ErrTooLarge)
	}
	return dst, pieces, nil
}

// appendCommon appends the top-level fields of msg other than field 1.
func appendCommon(dst, msg []byte) []byte {
	for b := msg; len(b) > 0; {
		num, raw, _, rest, err := nextField(b)
		if err != nil {
			return dst
		}
		if num != 1 {
			dst = append(dst, raw...)
		}
		b = rest
	}
	return dst
}

// appendPerResource appends msg to dst as one piece per resource, the
// Collector's split for partition_metrics_by_resource_attributes,
// partition_logs_by_resource_attributes and topic_from_attribute: with
// byAttrs each piece is keyed by the hash of its resource's attributes
// (keys.go), and with topic each goes to the topic topic(piece) names.
// A resource larger than limit fails with ErrTooLarge.
func appendPerResource(dst []byte, pieces []piece, msg []byte, limit int, h *attrHasher, byAttrs bool, topic func([]byte) string, name string) ([]byte, []piece, error) {
	common := 0
	for b := msg; len(b) > 0; {
		num, raw, _, rest, err := nextField(b)
		if err != nil {
			return dst, pieces, fmt.Errorf("cannot split request by resource: %w", err)
		}
		if num != 1 {
			common += len(raw)
		}
		b = rest
	}
	idx := 0
	for b := msg; len(b) > 0; {
		num, raw, rs, rest, _ := nextField(b)
		b = rest
		if num != 1 {
			continue
		}
		if rs == nil {
			return dst, pieces, fmt.Errorf("cannot split request by resource: %s[%d] is not length-delimited", name, idx)
		}
		if common+len(raw) > limit {
			return dst, pieces, fmt.Errorf("cannot split request for Kafka: %s[%d] is %d bytes, over the %d-byte message limit: %w",
				name, idx, len(raw), limit, ErrTooLarge)
		}
		p := piece{keyStart: -1, keyEnd: -1}
		if byAttrs {
			p.keyStart = len(dst)
			var err error
			if dst, err = h.resourceKey(dst, rs); err != nil {
				return dst, pieces, fmt.Errorf("cannot hash the attributes of %s[%d]: %w", name, idx, err)
			}
			p.keyEnd = len(dst)
		}
		p.start = len(dst)
		dst = appendCommon(dst, msg)
		dst = append(dst, raw...)
		p.end = len(dst)
		if topic != nil {
			p.topic = topic(dst[p.start:p.end])
		}
		pieces = append(pieces, p)
		idx++
	}
	return dst, pieces, nil
}
