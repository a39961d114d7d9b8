package otlpclient

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/otlp-lite/otlp-lite/otlp"
)

// Idempotency keys (otlp.IdempotencyKeyHeader, docs/exactly-once.md): an
// export that carries a key is stored once by a receiver that keeps a
// window of keys (otlp-lite), however often it is sent; a receiver that
// does not (the Collector) ignores the header and stores it at least once,
// as before.
//
// A key is chosen per export, not per attempt: the retry loop (Config.Retry)
// sends every attempt of one export with the same key, which is what makes
// a retry after a lost acknowledgement harmless. A key that must survive a
// crash of the sender (a forwarder, a replay) is derived by the caller from
// where the data comes from and given with WithIdempotencyKey; a key for a
// single process's life is random (Config.IdempotencyKeys, NewIdempotencyKey).

type idempotencyKeyCtx struct{}

// WithIdempotencyKey returns ctx carrying key: UnaryExporter.Export and
// HTTPExporter.ExportResult called with it send key with every attempt of
// the export (the gRPC metadata otlp.IdempotencyKeyMetadata, the HTTP
// header otlp.IdempotencyKeyHeader). The key must pass
// CheckIdempotencyKey, or the export fails without being sent. An empty
// key means none (and overrides Config.IdempotencyKeys for this export).
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, idempotencyKeyCtx{}, key)
}

// IdempotencyKeyFrom returns the key WithIdempotencyKey put in ctx, and
// whether there was one.
func IdempotencyKeyFrom(ctx context.Context) (string, bool) {
	k, ok := ctx.Value(idempotencyKeyCtx{}).(string)
	return k, ok
}

// NewIdempotencyKey returns a random key: 128 bits in 32 hex digits, unique
// without coordination (the chance that two of a billion keys collide is
// about 1e-21).
func NewIdempotencyKey() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand: "Read ... never returns an error")
	return hex.EncodeToString(b[:])
}

// ErrBadIdempotencyKey is wrapped by the error of an export whose key
// (or a stream's ClientID) cannot be sent: empty, longer than
// otlp.MaxIdempotencyKeyLen, or with a byte outside printable ASCII.
var ErrBadIdempotencyKey = errors.New("invalid idempotency key")

// CheckIdempotencyKey reports whether key can be sent: 1 to
// otlp.MaxIdempotencyKeyLen bytes of printable ASCII (0x20-0x7E), what
// both a gRPC ASCII metadata value (PROTOCOL-HTTP2.md "ASCII-Value") and
// an RFC 8941 structured-field string may hold.
func CheckIdempotencyKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty", ErrBadIdempotencyKey)
	}
	if len(key) > otlp.MaxIdempotencyKeyLen {
		return fmt.Errorf("%w: %d bytes, more than %d", ErrBadIdempotencyKey, len(key), otlp.MaxIdempotencyKeyLen)
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c > 0x7e {
			return fmt.Errorf("%w: byte %#x at %d is not printable ASCII", ErrBadIdempotencyKey, c, i)
		}
	}
	return nil
}

// autoKeys makes the keys of Config.IdempotencyKeys: a random prefix
// (NewIdempotencyKey) drawn once per exporter and a counter, unique as a
// random key is, without a call to the system's random source per export.
type autoKeys struct {
	prefix string
	n      atomic.Uint64
}

func newAutoKeys() *autoKeys { return &autoKeys{prefix: NewIdempotencyKey() + "-"} }

func (a *autoKeys) next() string {
	return a.prefix + strconv.FormatUint(a.n.Add(1), 36)
}

// exportKey is the key of one export under ctx: the caller's
// (WithIdempotencyKey), else the next of auto if not nil, else none.
func exportKey(ctx context.Context, auto *autoKeys) (string, error) {
	key, ok := IdempotencyKeyFrom(ctx)
	if !ok && auto != nil {
		return auto.next(), nil
	}
	if key == "" {
		return "", nil
	}
	if err := CheckIdempotencyKey(key); err != nil {
		return "", &AttemptError{Err: err}
	}
	return key, nil
}

// sfString is key as an RFC 8941 structured-field string, the form the
// httpapi Idempotency-Key draft gives the header's value: quoted, with '"'
// and '\' escaped. key has passed CheckIdempotencyKey.
func sfString(key string) string {
	if !strings.ContainsAny(key, `"\`) {
		return `"` + key + `"`
	}
	var b strings.Builder
	b.Grow(len(key) + 4)
	b.WriteByte('"')
	for i := 0; i < len(key); i++ {
		if key[i] == '"' || key[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(key[i])
	}
	b.WriteByte('"')
	return b.String()
}

// keyTransport sends the idempotency key of each request's context as
// gRPC metadata (UnaryExporter: grpcwire builds the request, so the key
// is added here, on a clone, as a RoundTripper must not change the
// request it is given).
type keyTransport struct{ base http.RoundTripper }

func (t keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if key, ok := IdempotencyKeyFrom(r.Context()); ok && key != "" {
		// A shallow copy with its own header map: only the map
		// changes (Clone would also copy every value, the URL and
		// the trailer).
		c := *r
		c.Header = make(http.Header, len(r.Header)+1)
		for k, v := range r.Header {
			c.Header[k] = v
		}
		c.Header[otlp.IdempotencyKeyMetadata] = []string{key}
		r = &c
	}
	return t.base.RoundTrip(r)
}
