package kafka

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
)

// KeyHeader is the record header that carries a request's idempotency key
// (docs/exactly-once.md) in every record WriteKeyed produces for it, with
// the record's place among them ("part i of n"): ReadKeys rebuilds a
// receiver's window of keys from it, and reports a key only once every
// part of its request was found.
//
// Its value, format version 1:
//
//	byte     1 (the version)
//	byte     the signal (storage.Signal)
//	uvarint  part, uvarint parts   (0 ≤ part < parts ≤ maxKeyParts)
//	8 bytes  the request's fingerprint, big-endian
//	uvarint  items stored, uvarint items rejected (the whole request's)
//	uvarint  len, the key          (1 to otlp.MaxIdempotencyKeyLen bytes)
//	uvarint  len, the message      (at most storage.MaxStoredKeyMessage bytes)
//
// The tenant is the record's TenantHeader (none: otlp.DefaultTenant), as
// the Kafka source reads it; the time is the record's timestamp.
const KeyHeader = "otlp-lite-key"

const keyHeaderVersion = 1

// maxKeyParts bounds a header's part count: a request of the largest size
// a receiver takes (-grpc-max-recv-msg-size, at most 2 GiB) split one record
// per trace cannot hold more traces than this many 128-byte spans; a header
// claiming more is damaged or hostile. ReadKeys charges a part set's bits
// against its memory bound: all of them up to denseKeyParts parts, past
// that only the words where a part was found (a claim costs nothing).
const maxKeyParts = 1 << 24

// maxKeyHeader is the longest value appendKeyHeader writes: the fixed
// bytes, five uvarints of at most 10 bytes, and the key and message at
// their longest.
const maxKeyHeader = 2 + 8 + 5*binary.MaxVarintLen64 + otlp.MaxIdempotencyKeyLen + storage.MaxStoredKeyMessage

// keyHeaderSize is what the header costs a record (headersSize's reckoning).
const keyHeaderSize = len(KeyHeader) + maxKeyHeader + 10

// keyPart is one record's KeyHeader, decoded.
type keyPart struct {
	signal      storage.Signal
	part, parts int
	fingerprint uint64
	items       int
	rejected    int
	key         []byte // aliases the header's value
	message     []byte // aliases the header's value
}

// appendKeyHeader appends the KeyHeader value of part of parts of a
// request stored under k (whose Key and Message were checked by
// checkStoredKey).
func appendKeyHeader(dst []byte, signal storage.Signal, part, parts, items int, k *storage.StoredKey) []byte {
	dst = append(dst, keyHeaderVersion, byte(signal))
	dst = binary.AppendUvarint(dst, uint64(part))
	dst = binary.AppendUvarint(dst, uint64(parts))
	dst = binary.BigEndian.AppendUint64(dst, k.Fingerprint)
	dst = binary.AppendUvarint(dst, uint64(items))
	dst = binary.AppendUvarint(dst, uint64(k.Rejected))
	dst = binary.AppendUvarint(dst, uint64(len(k.Key)))
	dst = append(dst, k.Key...)
	dst = binary.AppendUvarint(dst, uint64(len(k.Message)))
	return append(dst, k.Message...)
}

var errKeyHeader = errors.New("damaged " + KeyHeader + " header")

// parseKeyHeader decodes a KeyHeader value. It never panics and allocates
// nothing: every length is checked against what is left and against its
// limit, and a value of another version, with bytes left over, or outside
// the limits above is refused.
func parseKeyHeader(v []byte) (keyPart, error) {
	var p keyPart
	if len(v) < 2 {
		return p, fmt.Errorf("%w: %d bytes", errKeyHeader, len(v))
	}
	if v[0] != keyHeaderVersion {
		return p, fmt.Errorf("%w: version %d, want %d", errKeyHeader, v[0], keyHeaderVersion)
	}
	p.signal = storage.Signal(v[1])
	if p.signal > otlp.MaxSignal {
		return p, fmt.Errorf("%w: unknown signal %d", errKeyHeader, v[1])
	}
	v = v[2:]
	uv := func(limit uint64) (int, bool) {
		x, n := binary.Uvarint(v)
		if n <= 0 || x > limit {
			return 0, false
		}
		v = v[n:]
		return int(x), true
	}
	var ok bool
	if p.part, ok = uv(maxKeyParts - 1); !ok {
		return p, fmt.Errorf("%w: bad part", errKeyHeader)
	}
	if p.parts, ok = uv(maxKeyParts); !ok || p.parts == 0 || p.part >= p.parts {
		return p, fmt.Errorf("%w: bad part count", errKeyHeader)
	}
	if len(v) < 8 {
		return p, fmt.Errorf("%w: no fingerprint", errKeyHeader)
	}
	p.fingerprint = binary.BigEndian.Uint64(v)
	v = v[8:]
	// Item counts fit an int32 anyway: a request is under 2 GiB.
	if p.items, ok = uv(1<<31 - 1); !ok {
		return p, fmt.Errorf("%w: bad item count", errKeyHeader)
	}
	if p.rejected, ok = uv(1<<31 - 1); !ok {
		return p, fmt.Errorf("%w: bad rejected count", errKeyHeader)
	}
	n, ok := uv(otlp.MaxIdempotencyKeyLen)
	if !ok || n == 0 || n > len(v) {
		return p, fmt.Errorf("%w: bad key length", errKeyHeader)
	}
	p.key, v = v[:n:n], v[n:]
	if n, ok = uv(storage.MaxStoredKeyMessage); !ok || n > len(v) {
		return p, fmt.Errorf("%w: bad message length", errKeyHeader)
	}
	p.message, v = v[:n:n], v[n:]
	if len(v) != 0 {
		return p, fmt.Errorf("%w: %d bytes left over", errKeyHeader, len(v))
	}
	return p, nil
}

// checkStoredKey says why k cannot be stored in a KeyHeader, if it cannot
// (the receiver never sends such a key: ingest checks keys as they come
// and cuts messages to storage.MaxStoredKeyMessage).
func checkStoredKey(k *storage.StoredKey, items int) error {
	switch {
	case len(k.Key) == 0 || len(k.Key) > otlp.MaxIdempotencyKeyLen:
		return fmt.Errorf("kafka: cannot store an idempotency key of %d bytes (1 to %d)", len(k.Key), otlp.MaxIdempotencyKeyLen)
	case len(k.Message) > storage.MaxStoredKeyMessage:
		return fmt.Errorf("kafka: cannot store a partial-success message of %d bytes with a key (at most %d)", len(k.Message), storage.MaxStoredKeyMessage)
	case k.Rejected < 0 || k.Rejected > 1<<31-1 || items < 0 || items > 1<<31-1:
		return fmt.Errorf("kafka: cannot store item counts %d and %d with a key", items, k.Rejected)
	}
	return nil
}
