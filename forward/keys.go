package forward

import (
	"strconv"
	"strings"

	"github.com/otlp-lite/otlp-lite/storage"
)

// Idempotency keys (issue 24, docs/exactly-once.md): each record is sent
// with a key derived from where it is, so that whatever resends it (a
// retry, a resent stream, the next run after a crash or a SIGKILL of this
// process, a replay of the same log) sends the same key, and a destination
// that keeps a window of keys (otlp-lite) stores it once. A destination
// that does not (the Collector) ignores the key: at least once, as before.
//
// The key names the record in the source log, not the destination: the
// log's identity (disk.LogID, DATA/ID), the signal, and the record's
// position packed in one number (its segment's sequence number above 32
// bits, its offset below). A stream names itself with the first two
// (StreamConfig.ClientID) and sends the position as the request id, so the
// key the receiver forms (otlp.StreamIdempotencyKey) is the key a unary
// export of the same record carries: switching a destination between
// grpc:// and stream:// does not store a record twice. A record whose
// position does not pack (a segment of 4 GiB or more, or past 2^32
// segments) gets "SEQ.OFFSET" instead, and, on a stream, no fixed id (at
// least once).

// sourceID is the part of a key before the position: what a stream's
// ClientID is.
func sourceID(logID string, sig storage.Signal) string {
	if logID == "" {
		return ""
	}
	return logID + "/" + sig.String()
}

// recordKey returns the idempotency key of the record at offset in
// segment (its file name, as disk.Record.Segment gives it) under source
// (sourceID), and the request id a stream sends it with: its position
// packed, or zero when it does not pack. No source, or a name that is not
// a segment's: no key.
func recordKey(source, segment string, offset int64) (key string, id uint64) {
	if source == "" {
		return "", 0
	}
	digits, _, _ := strings.Cut(segment, ".")
	seq, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || offset < 0 {
		return "", 0
	}
	if seq < 1<<32 && offset < 1<<32 && seq|uint64(offset) != 0 {
		id = seq<<32 | uint64(offset)
		return source + "/" + strconv.FormatUint(id, 10), id
	}
	return source + "/" + strconv.FormatUint(seq, 10) + "." + strconv.FormatInt(offset, 10), 0
}
