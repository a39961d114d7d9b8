package otlp

import "strconv"

// Idempotency keys (issue 24, docs/exactly-once.md): a client may name an
// export so that the receiver stores it once however often it is sent.
//
// OTLP/HTTP carries the key in the Idempotency-Key header field of the
// IETF httpapi draft (draft-ietf-httpapi-idempotency-key-header), whose
// value is a structured-field string ("..."); a bare token is accepted too.
// gRPC unary exports carry it as the metadata entry of the same name
// (gRPC metadata keys are lower case, PROTOCOL-HTTP2.md "Custom-Metadata").
//
// The streaming mode cannot name each message with a header: the client
// names itself once per stream with StreamClientIDHeader, an identity it
// keeps for its life and across its reconnects, and the key of each
// message is that identity with the message's request id
// (StreamIdempotencyKey).
//
// A request without a key is stored as it always was (at least once).
const (
	IdempotencyKeyHeader   = "Idempotency-Key"
	IdempotencyKeyMetadata = "idempotency-key"
	StreamClientIDHeader   = "Otlplite-Stream-Client-Id"

	// MaxIdempotencyKeyLen bounds a key (and a stream client identity):
	// the window holds every key it remembers, so a key is charged by
	// its length; 256 bytes holds any UUID, hash or "source/position"
	// name a client derives, with room to spare.
	MaxIdempotencyKeyLen = 256
	// MaxStreamClientIDLen bounds a stream client identity so that every
	// key formed from it (the identity, "/" and up to 20 digits of a
	// request id: StreamIdempotencyKey) is within MaxIdempotencyKeyLen.
	MaxStreamClientIDLen = MaxIdempotencyKeyLen - 21
)

// StreamIdempotencyKey is the key of a stream message: the stream client's
// identity and the message's request id, which the client numbers so that
// a resent message keeps its id (its position in what the client sends).
func StreamIdempotencyKey(clientID string, requestID uint64) string {
	return clientID + "/" + strconv.FormatUint(requestID, 10)
}
