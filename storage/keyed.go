package storage

import (
	"context"
	"time"
)

// KeyedSink is a Sink that stores a request's idempotency key with it, in
// the same record and the same durable write (docs/exactly-once.md): a
// receiver's window of keys (package ingest) is then rebuilt from what the
// sink holds when it starts again, so that a client resending a request
// after the receiver crashed is answered as the first time, not stored
// twice. The disk log (storage/disk) and the Kafka sink (storage/kafka,
// the key in a header of each record) implement it; a sink that does not
// (discard, an embedder's) leaves the window in memory only: a resend
// after a restart is stored again, at least once as without a key.
type KeyedSink interface {
	Sink
	// WriteKeyed is Write, storing key with the record, atomically: the
	// record is stored with its key or not at all, and nil is returned
	// only once both are as durable as Write promises. Unlike Write, it
	// returns only once the record's fate is known, even after ctx ended
	// (nil: stored; an error: not stored, wrapping ErrNotStored where it
	// can promise so), so that the window of keys knows what the sink
	// holds. key.Time and key.Tenant are ignored (the tenant is ctx's, as
	// for Write).
	WriteKeyed(ctx context.Context, signal Signal, data []byte, items int, key StoredKey) error
	// ReadKeys calls fn, in the order they were stored within each
	// signal, with the key of every keyed record received at or after
	// since; an error from fn stops it and is returned. Damaged records
	// are skipped. It is called once, when the receiver starts, before
	// any Write; its time is bounded by the bytes stored since since.
	ReadKeys(since time.Time, fn func(StoredKey) error) error
}

// StoredKey is an idempotency key as a KeyedSink stores it with its
// request: what a window of keys needs to answer a resend the way the
// first request was answered (OTLP's success or partial success).
type StoredKey struct {
	// Signal is the record's signal; Tenant its tenant (the default
	// tenant's name for a record without one), set by ReadKeys.
	Signal Signal
	Tenant string
	// Key is the client's idempotency key, at most
	// otlp.MaxIdempotencyKeyLen bytes.
	Key string
	// Fingerprint is the request body's (see ingest's fingerprint): a
	// resend under Key with another body is refused, not replayed.
	Fingerprint uint64
	// Rejected items of the request were invalid and not stored; Message
	// is the partial success's message (empty when none was rejected),
	// at most MaxStoredKeyMessage bytes.
	Rejected int
	Message  string
	// Items is the stored record's item count, set by ReadKeys (the
	// request held Items + Rejected).
	Items int
	// Time is when the record was received, set by ReadKeys.
	Time time.Time
}

// MaxStoredKeyMessage bounds StoredKey.Message: every key the window
// remembers holds its message, so the window's memory per key is bounded
// by it; 256 bytes hold the receiver's partial-success messages ("3 of 500
// spans rejected; first: ..." with a field path and a reason) whole in
// practice; a longer one is cut at a UTF-8 boundary (the first answer has
// it whole, its replays the cut one).
const MaxStoredKeyMessage = 256
