package handler

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
)

func TestParseIdempotencyKey(t *testing.T) {
	long := strings.Repeat("k", otlp.MaxIdempotencyKeyLen)
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{`"abc"`, "abc", true},
		{` "a b" `, "a b", true},
		{`"a\"b\\c"`, `a"b\c`, true},
		{`8e03978e-40d5-43e8-bc93-6894a57f9324`, "8e03978e-40d5-43e8-bc93-6894a57f9324", true},
		{`src:7/42`, "src:7/42", true},
		{`"` + long + `"`, long, true},
		{long, long, true},
		{`"` + long + `k"`, "", false},
		{long + "k", "", false},
		{``, "", false},
		{`""`, "", false},
		{`"abc`, "", false},
		{`"abc";p=1`, "", false},
		{`"a\nb"`, "", false},
		{`"a\tb"`, "", false},
		{"\"a\x01b\"", "", false},
		{`a b`, "", false},
		{`a"b`, "", false},
		{`a,b`, "", false},
		{"caf\xc3\xa9", "", false},
	} {
		got, err := parseIdempotencyKey(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseIdempotencyKey(%q) = %q, %v; want %q, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// FuzzParseIdempotencyKey: any value parses or is refused without a
// panic; a key is 1 to MaxIdempotencyKeyLen printable bytes, and written
// back as an sf-string it parses to itself.
func FuzzParseIdempotencyKey(f *testing.F) {
	for _, s := range []string{`"abc"`, `"a\"b\\c"`, `8e03978e-40d5`, `"abc`, `"a\x"`, ``, `"" `} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		key, err := parseIdempotencyKey(v)
		if err != nil {
			return
		}
		if key == "" || len(key) > otlp.MaxIdempotencyKeyLen {
			t.Fatalf("%q: key of %d bytes", v, len(key))
		}
		for i := range len(key) {
			if key[i] < 0x20 || key[i] > 0x7e {
				t.Fatalf("%q: key holds %#x", v, key[i])
			}
		}
		quoted := `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(key) + `"`
		if again, err := parseIdempotencyKey(quoted); err != nil || again != key {
			t.Fatalf("%q: key %q written as %s parses to %q, %v", v, key, quoted, again, err)
		}
	})
}

// postKeyed posts an OTLP/HTTP protobuf request with the Idempotency-Key
// values given (none: no header).
func postKeyed(t *testing.T, c *grpcwire.Client, body []byte, keys ...string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", c.BaseURL+"/v1/traces", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-protobuf")
	for _, k := range keys {
		req.Header.Add(otlp.IdempotencyKeyHeader, k)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestIdempotencyKeyHTTP: over OTLP/HTTP, a request resent with its key
// (as a string or a bare token) is stored once and answered the same,
// partial success included; another body under the key is 422; a
// malformed, repeated or too long key is 400 and stores nothing.
func TestIdempotencyKeyHTTP(t *testing.T) {
	sink := &memSink{}
	c := startHandler(t, New(Config{Sink: sink, Logger: quietLogger()}))
	partial := traceRequest(goodID, []byte{1, 2, 3})
	code1, resp1 := postKeyed(t, c, partial, `"lost-ack-1"`)
	code2, resp2 := postKeyed(t, c, partial, `lost-ack-1`)
	if code1 != 200 || code2 != 200 || !bytes.Equal(resp1, resp2) || len(resp1) == 0 {
		t.Fatalf("first %d %x, resend %d %x", code1, resp1, code2, resp2)
	}
	if n := len(sink.all()); n != 1 {
		t.Fatalf("%d stored, want 1", n)
	}
	if code, body := postKeyed(t, c, traceRequest(goodID), `"lost-ack-1"`); code != http.StatusUnprocessableEntity {
		t.Fatalf("another body under the key: %d %s", code, body)
	}
	for _, keys := range [][]string{
		{`"unterminated`},
		{`"a", "b"`},
		{"a", "b"},
		{strings.Repeat("k", otlp.MaxIdempotencyKeyLen+1)},
	} {
		code, body := postKeyed(t, c, traceRequest(goodID), keys...)
		if code != http.StatusBadRequest || !bytes.Contains(body, []byte(otlp.IdempotencyKeyHeader)) {
			t.Errorf("key %.40q: %d %s, want 400 naming the header", keys, code, body)
		}
	}
	if n := len(sink.all()); n != 1 {
		t.Fatalf("%d stored, want 1", n)
	}
}

// invokeMeta is grpcwire.Client.Invoke with extra metadata pairs kv.
func invokeMeta(t *testing.T, c *grpcwire.Client, method string, msg []byte, kv ...string) ([]byte, *grpcwire.Status) {
	t.Helper()
	req, _ := http.NewRequest("POST", c.BaseURL+method, bytes.NewReader(frame(msg)))
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("Te", "trailers")
	for i := 0; i+1 < len(kv); i += 2 {
		req.Header.Add(kv[i], kv[i+1])
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	code := resp.Trailer.Get("Grpc-Status")
	msgText := resp.Trailer.Get("Grpc-Message")
	if code == "" {
		code, msgText = resp.Header.Get("Grpc-Status"), resp.Header.Get("Grpc-Message")
	}
	n, _ := strconv.Atoi(code)
	if n != 0 {
		return nil, &grpcwire.Status{Code: grpcwire.Code(n), Message: grpcwire.DecodeGRPCMessage(msgText)}
	}
	if len(body) >= 5 {
		body = body[5:]
	}
	return body, nil
}

// TestIdempotencyKeyGRPC: a gRPC export resent with its idempotency-key
// metadata is stored once and answered the same; another body under the
// key is INVALID_ARGUMENT; a key too long is INVALID_ARGUMENT.
func TestIdempotencyKeyGRPC(t *testing.T) {
	sink := &memSink{}
	c := startHandler(t, New(Config{Sink: sink, Logger: quietLogger()}))
	partial := traceRequest(goodID, []byte{1, 2, 3})
	r1, st1 := invokeMeta(t, c, traceExport, partial, otlp.IdempotencyKeyMetadata, "g-1")
	r2, st2 := invokeMeta(t, c, traceExport, partial, otlp.IdempotencyKeyMetadata, "g-1")
	if st1 != nil || st2 != nil || !bytes.Equal(r1, r2) || len(r1) == 0 {
		t.Fatalf("first %x %v, resend %x %v", r1, st1, r2, st2)
	}
	if n := len(sink.all()); n != 1 {
		t.Fatalf("%d stored, want 1", n)
	}
	if _, st := invokeMeta(t, c, traceExport, traceRequest(goodID), otlp.IdempotencyKeyMetadata, "g-1"); st == nil || st.Code != grpcwire.InvalidArgument || !strings.Contains(st.Message, "idempotency key reused") {
		t.Fatalf("another body under the key: %v", st)
	}
	if _, st := invokeMeta(t, c, traceExport, traceRequest(goodID), otlp.IdempotencyKeyMetadata, strings.Repeat("k", otlp.MaxIdempotencyKeyLen+1)); st == nil || st.Code != grpcwire.InvalidArgument {
		t.Fatalf("a key too long: %v", st)
	}
	if n := len(sink.all()); n != 1 {
		t.Fatalf("%d stored, want 1", n)
	}
}

// TestStreamClientIDKeys: a stream client that reconnects with the same
// identity and resends requests it had no acknowledgement for (as after a
// lost connection) gets them acknowledged and not stored again; its new
// requests are stored. UnaryExporter forms the same keys.
func TestStreamClientIDKeys(t *testing.T) {
	sink := &memSink{}
	c := startHandler(t, New(Config{Sink: sink, Logger: quietLogger()}))
	send := func(ids ...uint64) []ack {
		s := openStream(t, c, "ExportTraces", otlp.StreamClientIDHeader, "client-7")
		for _, id := range ids {
			s.send(id, traceRequest(goodID, []byte{byte(id), 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}))
		}
		s.pw.Close()
		acks, st := s.finish()
		if st.Code != grpcwire.OK || len(acks) != len(ids) {
			t.Fatalf("%d acks, %v", len(acks), st)
		}
		for _, a := range acks {
			if a.code != resultSuccess {
				t.Fatalf("ack %+v", a)
			}
		}
		return acks
	}
	send(1, 2)
	send(1, 2, 3)
	if n := len(sink.all()); n != 3 {
		t.Fatalf("%d stored, want 3", n)
	}
	// UnaryExporter, with the same identity: request 3 again.
	if _, st := invokeMeta(t, c, "/otlplite.v1.UnaryExporter/ExportTraces",
		envelope(3, traceRequest(goodID, []byte{3, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})),
		otlp.StreamClientIDHeader, "client-7"); st != nil {
		t.Fatal(st)
	}
	if n := len(sink.all()); n != 3 {
		t.Fatalf("%d stored, want 3", n)
	}
	// Another client's request 1 is its own.
	s := openStream(t, c, "ExportTraces", otlp.StreamClientIDHeader, "client-8")
	s.send(1, traceRequest(goodID))
	s.pw.Close()
	s.finish()
	if n := len(sink.all()); n != 4 {
		t.Fatalf("%d stored, want 4", n)
	}
	// An identity too long refuses the stream.
	bad := openStream(t, c, "ExportTraces", otlp.StreamClientIDHeader, strings.Repeat("c", otlp.MaxStreamClientIDLen+1))
	bad.pw.Close()
	if _, st := bad.finish(); st.Code != grpcwire.InvalidArgument {
		t.Fatalf("an identity too long: %v", st)
	}
}

// TestIdempotencyKeyAbsentCostsNothing: without a key, the request path
// allocates as it did (the header lookup is all it adds).
func TestIdempotencyKeyAbsentCostsNothing(t *testing.T) {
	h := http.Header{"Content-Type": {"application/grpc"}}
	if n := testing.AllocsPerRun(100, func() {
		if k, st := grpcIdempotencyKey(h); k != "" || st != nil {
			t.Fatal(k, st)
		}
		if k, st := httpIdempotencyKey(h); k != "" || st != nil {
			t.Fatal(k, st)
		}
	}); n != 0 {
		t.Fatalf("%v allocations without a key", n)
	}
}

// dropEveryThird serves every request, and for every third one throws
// the answer away and resets the stream: a proxy that loses responses.
type dropEveryThird struct {
	h *Handler
	n atomic.Int64
}

func (d *dropEveryThird) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if d.n.Add(1)%3 != 0 {
		d.h.ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	d.h.ServeHTTP(rec, r)
	panic(http.ErrAbortHandler) // the client never sees the answer
}

// TestIdempotencyKeyLostAcknowledgement: behind a proxy that loses every
// third answer, a client retrying each batch with its key until it is
// answered stores every batch exactly once (without keys: every lost
// answer is a duplicate).
func TestIdempotencyKeyLostAcknowledgement(t *testing.T) {
	for _, keyed := range []bool{true, false} {
		sink := &memSink{}
		h := New(Config{Sink: sink, Logger: quietLogger()})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: &dropEveryThird{h: h}, Protocols: new(http.Protocols), ErrorLog: log.New(io.Discard, "", 0)}
		srv.Protocols.SetUnencryptedHTTP2(true)
		go srv.Serve(ln)
		c := grpcwire.NewClient(ln.Addr().String(), nil)
		const batches = 30
		lost := 0
		for i := range batches {
			body := traceRequest([]byte{byte(i), 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
			for {
				req, _ := http.NewRequest("POST", c.BaseURL+"/v1/traces", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/x-protobuf")
				if keyed {
					req.Header.Set(otlp.IdempotencyKeyHeader, fmt.Sprintf(`"batch-%d"`, i))
				}
				resp, err := c.HTTP.Do(req)
				if err != nil {
					lost++
					continue // the answer was lost: send it again
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Fatalf("batch %d: HTTP %d", i, resp.StatusCode)
				}
				break
			}
		}
		srv.Close()
		stored := map[string]int{}
		for _, w := range sink.all() {
			stored[string(w.data)]++
		}
		dups := len(sink.all()) - len(stored)
		t.Logf("keyed %v: %d batches, %d answers lost, %d stored, %d duplicates", keyed, batches, lost, len(sink.all()), dups)
		if len(stored) != batches || lost == 0 {
			t.Fatalf("%d distinct batches stored of %d; %d answers lost", len(stored), batches, lost)
		}
		if keyed && dups != 0 {
			t.Fatalf("%d duplicates with keys", dups)
		}
		if !keyed && dups != lost {
			t.Fatalf("without keys %d duplicates, want %d (one per lost answer)", dups, lost)
		}
	}
}

// holdSink blocks every Write until release is closed, telling entered.
type holdSink struct {
	memSink
	entered chan struct{}
	release chan struct{}
}

func (s *holdSink) Write(ctx context.Context, sig storage.Signal, data []byte, items int) error {
	s.entered <- struct{}{}
	<-s.release
	return s.memSink.Write(ctx, sig, data, items)
}

// TestIdempotencyKeyInFlightHTTP: a resend while the first request with
// its key is still being stored is 409 with Retry-After; once the first is
// answered, the resend gets its answer.
func TestIdempotencyKeyInFlightHTTP(t *testing.T) {
	sink := &holdSink{entered: make(chan struct{}, 1), release: make(chan struct{})}
	c := startHandler(t, New(Config{Sink: sink, Logger: quietLogger()}))
	body := traceRequest(goodID)
	first := make(chan int)
	go func() {
		code, _ := postKeyed(t, c, body, `"in-flight"`)
		first <- code
	}()
	<-sink.entered
	req, _ := http.NewRequest("POST", c.BaseURL+"/v1/traces", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set(otlp.IdempotencyKeyHeader, `"in-flight"`)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("resend in flight: %d, Retry-After %q; want 409 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	close(sink.release)
	if code := <-first; code != 200 {
		t.Fatalf("first: %d", code)
	}
	if code, _ := postKeyed(t, c, body, `"in-flight"`); code != 200 {
		t.Fatalf("resend after the answer: %d", code)
	}
	if n := len(sink.all()); n != 1 {
		t.Fatalf("%d stored, want 1", n)
	}
}
