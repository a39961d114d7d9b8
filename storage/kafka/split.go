package kafka

import (
	"errors"
	"fmt"

	"github.com/otlp-lite/otlp-lite/otlpdecode"
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

// piece is one Kafka record of a split request, cut by otlpdecode's
// rewrites: key and value are byte ranges of the batch buffer; Dest is the
// record's topic when a resource attribute names one ("": the signal's
// topic).
type piece = otlpdecode.Piece

// The rewrites of a request into records (otlpdecode's, beside the
// validation walk), with their ErrTooLarge made Kafka's.

func appendResources(dst []byte, pieces []piece, msg []byte, sig storage.Signal, limit, keyStart, keyEnd int) ([]byte, []piece, error) {
	dst, pieces, err := otlpdecode.AppendResources(dst, pieces, msg, sig, limit, keyStart, keyEnd)
	return dst, pieces, splitError(err)
}

// appendPerResource is otlpdecode.AppendPerResource keyed, with byAttrs,
// by the Collector's hash of each resource's attributes (keys.go).
func appendPerResource(dst []byte, pieces []piece, msg []byte, sig storage.Signal, limit int, h *attrHasher, byAttrs bool, topic func([]byte) string) ([]byte, []piece, error) {
	var key func(dst, rs []byte) ([]byte, error)
	if byAttrs {
		key = h.resourceKey
	}
	dst, pieces, err := otlpdecode.AppendPerResource(dst, pieces, msg, sig, limit, key, topic)
	return dst, pieces, splitError(err)
}

// appendByTrace is t.AppendByTrace keyed as the Collector keys spans and
// log records by trace id (keys.go).
func appendByTrace(t *otlpdecode.TraceSplitter, dst []byte, pieces []piece, msg []byte, sig storage.Signal, limit int, topic func([]byte) string) ([]byte, []piece, error) {
	key := spanKey
	if sig == storage.Logs {
		key = logRecordKey
	}
	dst, pieces, err := t.AppendByTrace(dst, pieces, msg, sig, limit, key, topic)
	return dst, pieces, splitError(err)
}

// splitError adds ErrTooLarge to the rewrites' error for a resource over
// the record limit.
func splitError(err error) error {
	if errors.Is(err, otlpdecode.ErrTooLarge) {
		return fmt.Errorf("kafka: %w: %w", err, ErrTooLarge)
	}
	return err
}
