package otlpclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// keyLog records the value of one header on each request and answers the
// first of every two attempts as retryable (gRPC UNAVAILABLE, HTTP 503),
// the second as success.
type keyLog struct {
	header string
	grpc   bool
	mu     sync.Mutex
	keys   []string
}

func (k *keyLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	k.mu.Lock()
	k.keys = append(k.keys, r.Header.Get(k.header))
	first := len(k.keys)%2 == 1
	k.mu.Unlock()
	if !k.grpc {
		if first {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		return
	}
	w.Header().Set("Content-Type", "application/grpc")
	if first {
		w.Header().Set("Grpc-Status", "14")
		w.WriteHeader(http.StatusOK)
		return
	}
	w.Header().Set("Trailer", "Grpc-Status")
	w.WriteHeader(http.StatusOK)
	w.Write([]byte{0, 0, 0, 0, 0})
	w.Header().Set("Grpc-Status", "0")
}

func (k *keyLog) snapshot() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.keys...)
}

// TestIdempotencyKeyKeptAcrossRetries: each export's attempts carry one
// key (the caller's, or a random one with Config.IdempotencyKeys), as gRPC
// metadata or as the Idempotency-Key header's structured-field string;
// two exports carry two keys; without either, no key is sent.
func TestIdempotencyKeyKeptAcrossRetries(t *testing.T) {
	for _, tc := range []struct {
		name string
		grpc bool
	}{{"grpc", true}, {"http", false}} {
		t.Run(tc.name, func(t *testing.T) {
			kl := &keyLog{header: otlp.IdempotencyKeyHeader, grpc: tc.grpc}
			if tc.grpc {
				kl.header = otlp.IdempotencyKeyMetadata
			}
			addr := startServer(t, kl)
			newExport := func(auto bool) func(context.Context, []byte) error {
				cfg := Config{Endpoint: addr, Backoff: Backoff{Initial: time.Millisecond}, RequestTimeout: 10 * time.Second, IdempotencyKeys: auto}
				if tc.grpc {
					u := NewUnaryExporter(cfg)
					return u.Export
				}
				cfg.HTTP = NewHTTPClient(nil, 0, 0) // the test server speaks h2c
				h := NewHTTPExporter(HTTPConfig{Config: cfg, URL: "http://" + addr + "/v1/traces"})
				return func(ctx context.Context, req []byte) error { _, err := h.ExportResult(ctx, req); return err }
			}
			quote := func(k string) string {
				if tc.grpc {
					return k
				}
				return `"` + k + `"`
			}

			// The caller's key, on both attempts.
			export := newExport(false)
			if err := export(WithIdempotencyKey(context.Background(), `log-1/traces/7.42`), testRequest(1, 1)); err != nil {
				t.Fatal(err)
			}
			// No key: none sent.
			if err := export(context.Background(), testRequest(2, 1)); err != nil {
				t.Fatal(err)
			}
			want := []string{quote("log-1/traces/7.42"), quote("log-1/traces/7.42"), "", ""}
			if got := kl.snapshot(); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("keys sent %q, want %q", got, want)
			}

			// Random keys: one per export, kept across its retry.
			auto := newExport(true)
			for i := range 2 {
				if err := auto(context.Background(), testRequest(uint64(3+i), 1)); err != nil {
					t.Fatal(err)
				}
			}
			got := kl.snapshot()[4:]
			if len(got) != 4 || got[0] != got[1] || got[2] != got[3] || got[0] == got[2] || len(got[0]) < len(quote(strings.Repeat("0", 32)+"-1")) {
				t.Fatalf("random keys sent %q: want two exports of two attempts, one 32-digit random prefix and a counter each", got)
			}
			// An empty key from the caller turns the random one off.
			if err := auto(WithIdempotencyKey(context.Background(), ""), testRequest(5, 1)); err != nil {
				t.Fatal(err)
			}
			if got := kl.snapshot()[8:]; got[0] != "" || got[1] != "" {
				t.Fatalf("keys %q sent for an export whose caller said none", got)
			}
		})
	}
}

// TestIdempotencyKeyRefused: a key that no header can carry (too long,
// not printable ASCII) fails the export before anything is sent, as a
// failure that is not retried.
func TestIdempotencyKeyRefused(t *testing.T) {
	kl := &keyLog{header: otlp.IdempotencyKeyMetadata, grpc: true}
	addr := startServer(t, kl)
	u := NewUnaryExporter(Config{Endpoint: addr})
	h := NewHTTPExporter(HTTPConfig{Config: Config{Endpoint: addr}, URL: "http://" + addr + "/v1/traces"})
	for _, key := range []string{strings.Repeat("k", otlp.MaxIdempotencyKeyLen+1), "caf\xc3\xa9", "a\nb"} {
		ctx := WithIdempotencyKey(context.Background(), key)
		if err := u.Export(ctx, testRequest(1, 1)); !errors.Is(err, ErrBadIdempotencyKey) || Classify(err) == Retryable {
			t.Fatalf("unary export with key %q: %v, want a final ErrBadIdempotencyKey", key, err)
		}
		if _, err := h.ExportResult(ctx, testRequest(1, 1)); !errors.Is(err, ErrBadIdempotencyKey) {
			t.Fatalf("HTTP export with key %q: %v, want ErrBadIdempotencyKey", key, err)
		}
	}
	if n := len(kl.snapshot()); n != 0 {
		t.Fatalf("%d requests sent with invalid keys", n)
	}
	for _, id := range []string{"bad\x00id", strings.Repeat("c", otlp.MaxStreamClientIDLen+1)} {
		e := NewStreamExporter(StreamConfig{Config: Config{Endpoint: addr}, ClientID: id})
		if err := e.Send(context.Background(), testRequest(1, 1), nil); !errors.Is(err, ErrBadIdempotencyKey) {
			t.Fatalf("Send with the ClientID %q: %v", id, err)
		}
		e.Close(context.Background())
	}
}

func TestSFString(t *testing.T) {
	for in, want := range map[string]string{`abc`: `"abc"`, `a"b\c`: `"a\"b\\c"`, ` `: `" "`} {
		if got := sfString(in); got != want {
			t.Errorf("sfString(%q) = %q, want %q", in, got, want)
		}
	}
}

// clientIDLog records the stream client identity of each stream opened.
type clientIDLog struct {
	*wireLog
	mu  sync.Mutex
	ids []string
}

func (c *clientIDLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.ids = append(c.ids, r.Header.Get(otlp.StreamClientIDHeader))
	c.mu.Unlock()
	c.wireLog.ServeHTTP(w, r)
}

// TestStreamClientIDAndFixedIDs: every stream of an exporter, rotations
// included, names the same ClientID; the ids SendID gives are the ids on
// the wire, a pending one cannot be given twice, and Send's ids continue
// above them.
func TestStreamClientIDAndFixedIDs(t *testing.T) {
	sink := newCountSink()
	cl := &clientIDLog{wireLog: &wireLog{h: newHandler(sink, handler.StreamConfig{MaxRequests: 3})}}
	addr := startServer(t, cl)
	e := NewStreamExporter(StreamConfig{Config: Config{Endpoint: addr}, ClientID: "log-1/traces", MaxPending: 4})
	o := newOutcomes()
	fixed := []uint64{1 << 32, 1<<32 + 100, 2<<32 + 7, 5<<32 + 1}
	for i, id := range fixed {
		if err := e.SendID(context.Background(), id, testRequest(uint64(i+1), 1), o.done(uint64(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Send(context.Background(), testRequest(5, 1), o.done(5)); err != nil {
		t.Fatal(err)
	}
	if err := e.SendID(context.Background(), 0, testRequest(6, 1), nil); err == nil {
		t.Fatal("SendID took id 0")
	}
	closeExporter(t, e)
	o.requireAllAcked(t, 5)
	seen := map[uint64]bool{}
	for _, ids := range cl.snapshot() {
		for _, id := range ids {
			seen[id] = true
		}
	}
	for _, id := range append(fixed, 5<<32+2) {
		if !seen[id] {
			t.Fatalf("id %d not on the wire (saw %v)", id, seen)
		}
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if len(cl.ids) < 2 {
		t.Fatalf("%d streams: want rotations", len(cl.ids))
	}
	for _, id := range cl.ids {
		if id != "log-1/traces" {
			t.Fatalf("stream client ids %q", cl.ids)
		}
	}
}

// TestStreamSendIDInUse: SendID refuses an id that is still pending and
// gives its slot back.
func TestStreamSendIDInUse(t *testing.T) {
	sink := newCountSink()
	sink.gate = make(chan struct{})
	addr := startServer(t, newHandler(sink, handler.StreamConfig{}))
	e := NewStreamExporter(StreamConfig{Config: Config{Endpoint: addr, IdempotencyKeys: true}, MaxPending: 2})
	if e.cfg.ClientID == "" {
		t.Fatal("IdempotencyKeys gave the stream no client identity")
	}
	o := newOutcomes()
	if err := e.SendID(context.Background(), 9, testRequest(1, 2), o.done(1)); err != nil {
		t.Fatal(err)
	}
	for range 3 { // more than MaxPending: each refusal gave its slot back
		if err := e.SendID(context.Background(), 9, testRequest(2, 2), nil); !errors.Is(err, ErrIDInUse) {
			t.Fatalf("SendID of a pending id: %v", err)
		}
	}
	close(sink.gate)
	closeExporter(t, e)
	o.requireAllAcked(t, 1)
}

// TestHTTPConflictRetriedWithKey: a 409 (the first request under the key
// still in flight) is retried when the request carries a key, and final
// without one, as OTLP/HTTP has it.
func TestHTTPConflictRetriedWithKey(t *testing.T) {
	var mu sync.Mutex
	calls := map[string]int{}
	addr := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		key := r.Header.Get(otlp.IdempotencyKeyHeader)
		mu.Lock()
		calls[key]++
		n := calls[key]
		mu.Unlock()
		if n == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusConflict)
			return
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	h := NewHTTPExporter(HTTPConfig{Config: Config{Endpoint: addr, HTTP: NewHTTPClient(nil, 0, 0), Backoff: Backoff{Initial: time.Millisecond}, RequestTimeout: 10 * time.Second},
		URL: "http://" + addr + "/v1/traces"})
	if _, err := h.ExportResult(WithIdempotencyKey(context.Background(), "k1"), testRequest(1, 1)); err != nil {
		t.Fatalf("keyed export after a 409: %v", err)
	}
	_, err := h.ExportResult(context.Background(), testRequest(2, 1))
	if he, ok := errors.AsType[*HTTPError](err); !ok || he.StatusCode != http.StatusConflict {
		t.Fatalf("export without a key answered 409: %v, want the 409 as final", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls[`"k1"`] != 2 || calls[""] != 1 {
		t.Fatalf("attempts %v", calls)
	}
}
