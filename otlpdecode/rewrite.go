package otlpdecode

// The rewrites: an export request cut into smaller requests of the same
// type, between resources (AppendResources, AppendPerResource) or by trace
// id (TraceSplitter), from its own bytes, without decoding what they move.
// They serve a sink whose records have a size limit or a key (Kafka's
// partitioning, storage/kafka); they walk what Check accepted, and still
// refuse what they cannot read rather than rely on it.

import (
	"errors"
	"fmt"

	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlppb"
)

// ErrTooLarge is wrapped by the rewrites when one resource of a request —
// one ResourceSpans, ResourceMetrics, ResourceLogs or ResourceProfiles, or,
// split by trace id, the items of one trace under one resource — encodes
// larger than the limit, so that no cut between resources fits. Retrying
// the same request cannot succeed.
var ErrTooLarge = errors.New("resource too large to split")

// Piece is one request a rewrite appended to its buffer: buf[Start:End],
// keyed by buf[KeyStart:KeyEnd] (KeyStart < 0: no key). Offsets, not
// slices, because the buffer grows while the pieces are appended.
type Piece struct {
	KeyStart, KeyEnd int
	Start, End       int
	// Dest is what the caller's dest function returned for the piece
	// (Kafka: the topic named by a resource attribute); "": no dest
	// function, or the default destination.
	Dest string
}

// resources names the repeated resource field of each signal's export
// request (which shares its fields with TracesData, MetricsData...), which
// the rewrites cut between: its number and its name, for errors.
var resources = [otlp.MaxSignal + 1]struct {
	num  uint32
	name string
}{
	otlp.Traces:   {otlppb.ExportTraceServiceRequestResourceSpans, "resource_spans"},
	otlp.Metrics:  {otlppb.ExportMetricsServiceRequestResourceMetrics, "resource_metrics"},
	otlp.Logs:     {otlppb.ExportLogsServiceRequestResourceLogs, "resource_logs"},
	otlp.Profiles: {otlppb.ExportProfilesServiceRequestResourceProfiles, "resource_profiles"},
}

// resourcesOf returns sig's resource field and its name; ok is false for
// a value that is no signal.
func resourcesOf(sig otlp.Signal) (num uint32, name string, ok bool) {
	if sig == 0 || sig > otlp.MaxSignal {
		return 0, "", false
	}
	r := resources[sig]
	return r.num, r.name, true
}

// readRaw reads the next field of b into f and returns it as it appears on
// the wire (tag, length and value: what a rewrite copies) and the rest of
// b, with the one field reader's rules (otlppb.Field.Read).
func readRaw(f *otlppb.Field, b []byte) (raw, rest []byte, err error) {
	rest, err = f.Read(b)
	if err != nil {
		return nil, nil, err
	}
	return b[:len(b)-len(rest)], rest, nil
}

// AppendResources appends msg, an export request of signal sig, to dst as
// one or more pieces of at most limit bytes, each keyed by
// dst[keyStart:keyEnd] (keyStart < 0: no key).
//
// An OTLP export request is
//
//	message ExportTraceServiceRequest {      // ≡ TracesData
//	  repeated ResourceSpans resource_spans = 1;
//	}
//
// (ResourceMetrics, ResourceLogs likewise), and a concatenation of encoded
// messages is the merge of the messages (protobuf encoding, "Last One
// Wins"/"Concatenated messages"), so any run of its resources is
// itself a valid request of the same type. A request over the limit is cut
// between resources, greedily, keeping their order. Other top-level fields
// (none in OTLP v1.11, but a newer sender may add some) are copied into
// every piece, so no piece loses them. A single resource that does not fit
// fails with ErrTooLarge.
func AppendResources(dst []byte, pieces []Piece, msg []byte, sig otlp.Signal, limit, keyStart, keyEnd int) ([]byte, []Piece, error) {
	field, name, ok := resourcesOf(sig)
	if !ok {
		return dst, pieces, fmt.Errorf("cannot split a request of %v", sig)
	}
	if len(msg) <= limit {
		start := len(dst)
		dst = append(dst, msg...)
		return dst, append(pieces, Piece{KeyStart: keyStart, KeyEnd: keyEnd, Start: start, End: len(dst)}), nil
	}
	// First pass: validate and measure the fields every piece repeats.
	var f otlppb.Field
	common := 0
	for b := msg; len(b) > 0; {
		raw, rest, err := readRaw(&f, b)
		if err != nil {
			return dst, pieces, fmt.Errorf("cannot split request: %w", err)
		}
		if f.FieldNum != field {
			common += len(raw)
		}
		b = rest
	}
	start, n, idx := -1, 0, 0
	for b := msg; len(b) > 0; idx++ {
		raw, rest, _ := readRaw(&f, b)
		b = rest
		if f.FieldNum != field {
			continue
		}
		if common+len(raw) > limit {
			return dst, pieces, fmt.Errorf("cannot split request: %s[%d] is %d bytes, over the %d-byte limit: %w",
				name, idx, len(raw), limit, ErrTooLarge)
		}
		if start >= 0 && len(dst)-start+len(raw) > limit {
			pieces = append(pieces, Piece{KeyStart: keyStart, KeyEnd: keyEnd, Start: start, End: len(dst)})
			start = -1
		}
		if start < 0 {
			start = len(dst)
			dst = appendCommon(dst, msg, field)
			n++
		}
		dst = append(dst, raw...)
	}
	if start >= 0 {
		pieces = append(pieces, Piece{KeyStart: keyStart, KeyEnd: keyEnd, Start: start, End: len(dst)})
	} else if n == 0 {
		// Over the limit with no resource at all: only unknown fields,
		// which cannot be split.
		return dst, pieces, fmt.Errorf("cannot split request: %d bytes without any %s, over the %d-byte limit: %w",
			len(msg), name, limit, ErrTooLarge)
	}
	return dst, pieces, nil
}

// appendCommon appends the top-level fields of msg other than its
// resources (field).
func appendCommon(dst, msg []byte, field uint32) []byte {
	var f otlppb.Field
	for b := msg; len(b) > 0; {
		raw, rest, err := readRaw(&f, b)
		if err != nil {
			return dst
		}
		if f.FieldNum != field {
			dst = append(dst, raw...)
		}
		b = rest
	}
	return dst
}

// AppendPerResource appends msg, an export request of signal sig, to dst
// as one piece per resource (the OpenTelemetry Collector's kafkaexporter
// split for partition_metrics_by_resource_attributes,
// partition_logs_by_resource_attributes and topic_from_attribute). With
// key, each piece is keyed by what key appends to dst for its resource (rs:
// the ResourceSpans, ResourceMetrics... message, without its tag); with
// dest, each piece's Dest is dest(piece). A resource larger than limit
// fails with ErrTooLarge.
func AppendPerResource(dst []byte, pieces []Piece, msg []byte, sig otlp.Signal, limit int, key func(dst, rs []byte) ([]byte, error), dest func(req []byte) string) ([]byte, []Piece, error) {
	field, name, ok := resourcesOf(sig)
	if !ok {
		return dst, pieces, fmt.Errorf("cannot split a request of %v", sig)
	}
	var f otlppb.Field
	common := 0
	for b := msg; len(b) > 0; {
		raw, rest, err := readRaw(&f, b)
		if err != nil {
			return dst, pieces, fmt.Errorf("cannot split request by resource: %w", err)
		}
		if f.FieldNum != field {
			common += len(raw)
		}
		b = rest
	}
	idx := 0
	for b := msg; len(b) > 0; {
		raw, rest, _ := readRaw(&f, b)
		b = rest
		if f.FieldNum != field {
			continue
		}
		rs, ok := f.MessageData()
		if !ok {
			return dst, pieces, fmt.Errorf("cannot split request by resource: %s[%d] is not length-delimited", name, idx)
		}
		if common+len(raw) > limit {
			return dst, pieces, fmt.Errorf("cannot split request: %s[%d] is %d bytes, over the %d-byte limit: %w",
				name, idx, len(raw), limit, ErrTooLarge)
		}
		p := Piece{KeyStart: -1, KeyEnd: -1}
		if key != nil {
			p.KeyStart = len(dst)
			var err error
			if dst, err = key(dst, rs); err != nil {
				return dst, pieces, fmt.Errorf("cannot key %s[%d]: %w", name, idx, err)
			}
			p.KeyEnd = len(dst)
		}
		p.Start = len(dst)
		dst = appendCommon(dst, msg, field)
		dst = append(dst, raw...)
		p.End = len(dst)
		if dest != nil {
			p.Dest = dest(dst[p.Start:p.End])
		}
		pieces = append(pieces, p)
		idx++
	}
	return dst, pieces, nil
}
