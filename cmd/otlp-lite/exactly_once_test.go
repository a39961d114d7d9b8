package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/otlpclient"
	"github.com/otlp-lite/otlp-lite/storage"
)

// The end-to-end proof of issue 24 (docs/exactly-once.md): keys that our
// senders derive survive their crashes, and a receiver keeping a window of
// keys stores each acknowledged item exactly once.

// exactlyOnceRounds is how many times the kill tests SIGKILL their
// victim: 8 by default, OTLP_LITE_EXACTLY_ONCE_ROUNDS for more.
func exactlyOnceRounds(t *testing.T) int {
	if s := os.Getenv("OTLP_LITE_EXACTLY_ONCE_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("bad OTLP_LITE_EXACTLY_ONCE_ROUNDS %q", s)
		}
		return n
	}
	return 8
}

// keyedSender is an SDK-like sender: workers export requests of unique
// span ids through otlpclient with a random idempotency key per request,
// kept across its retries, until stopped; it remembers what was
// acknowledged.
type keyedSender struct {
	mu     sync.Mutex
	sent   map[string]bool
	acked  map[string]bool
	failed []error
	stop   chan struct{}
	wg     sync.WaitGroup
}

// startKeyedSender starts workers exporting to export, each request with
// perReq spans named PREFIX-wW-sN-iI.
func startKeyedSender(prefix string, workers, perReq int, export func(context.Context, []byte) error) *keyedSender {
	s := &keyedSender{sent: map[string]bool{}, acked: map[string]bool{}, stop: make(chan struct{})}
	for w := range workers {
		s.wg.Go(func() {
			for seq := 0; ; seq++ {
				select {
				case <-s.stop:
					return
				default:
				}
				ids := make([]string, perReq)
				for i := range ids {
					ids[i] = fmt.Sprintf("%s-w%d-s%d-i%d", prefix, w, seq, i)
				}
				s.mu.Lock()
				for _, id := range ids {
					s.sent[id] = true
				}
				s.mu.Unlock()
				err := export(context.Background(), tracesRequest(nil, ids...))
				s.mu.Lock()
				if err == nil {
					for _, id := range ids {
						s.acked[id] = true
					}
				} else {
					s.failed = append(s.failed, err)
				}
				s.mu.Unlock()
			}
		})
	}
	return s
}

// finish stops issuing requests and waits for those in flight (each
// retried until acknowledged or its timeout).
func (s *keyedSender) finish(t *testing.T) (acked []string) {
	t.Helper()
	close(s.stop)
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.failed) > 0 {
		t.Errorf("%d requests were never acknowledged; first: %v", len(s.failed), s.failed[0])
	}
	for id := range s.acked {
		acked = append(acked, id)
	}
	return acked
}

// duplicates checks stored against what the sender sent and acknowledged:
// nothing acknowledged is missing, nothing unknown is stored; it returns
// the items stored more than once (the surplus copies).
func (s *keyedSender) duplicates(t *testing.T, stored map[string]int) int {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	dups := 0
	for id, n := range stored {
		if !s.sent[id] {
			t.Fatalf("stored item %q was never sent", id)
		}
		dups += n - 1
	}
	for id := range s.acked {
		if stored[id] == 0 {
			t.Fatalf("acknowledged item %q lost", id)
		}
	}
	return dups
}

// waitForwarded polls `otlp-lite stats` on a forwarder's data directory
// until every destination's lag is zero.
func waitForwarded(t *testing.T, dataDir string) {
	t.Helper()
	var out string
	pollUntil(t, func() string { return "the forwarder never caught up:\n" + out }, func() bool {
		o, _, code := runCmd(t, "stats", "-data-dir", dataDir, "-format", "json")
		out = o
		return code == 0 && strings.Contains(out, `"lag_records": 0`) && !strings.Contains(out, `"lag_records": 1`) &&
			!strings.Contains(strings.ReplaceAll(out, `"lag_records": 0`, ""), `"lag_records"`)
	})
}

// TestExactlyOnceForwardKill: an SDK-like sender (otlpclient, a key per
// request) exports to otlp-lite A, which forwards to otlp-lite B over
// grpc:// or stream://; A is SIGKILLed repeatedly, mid-load, and restarted
// on its data directory and address. Every span acknowledged to the sender
// is in B exactly once: the sender's retries into A carry their keys (A's
// window), and A's forwarder resends after each kill with the keys of the
// records' positions in A's log (B's window).
func TestExactlyOnceForwardKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills servers repeatedly")
	}
	rounds := exactlyOnceRounds(t)
	for _, scheme := range []string{"grpc://", "stream://"} {
		t.Run(strings.TrimSuffix(scheme, "://"), func(t *testing.T) {
			dstDir, srcDir := t.TempDir(), t.TempDir()
			dst := startServe(t, dstDir, "")
			addrA := freeAddr(t)
			fwd := "b=" + scheme + dst.addr + "?signals=traces&retry-initial-backoff=10ms&retry-max-backoff=100ms"
			src := startServe(t, srcDir, addrA, "-forward", fwd)
			exp := otlpclient.NewUnaryExporter(otlpclient.Config{
				Endpoint:        addrA,
				IdempotencyKeys: true,
				RequestTimeout:  60 * time.Second,
				AttemptTimeout:  5 * time.Second,
				Backoff:         otlpclient.Backoff{Initial: 10 * time.Millisecond, Max: 100 * time.Millisecond},
			})
			sender := startKeyedSender("k", 4, 5, exp.Export)
			for range rounds {
				time.Sleep(time.Duration(150+rand.IntN(350)) * time.Millisecond) // the kill lands at a random moment of the load
				src.kill()
				src = startServe(t, srcDir, addrA, "-forward", fwd)
			}
			acked := sender.finish(t)
			waitStored(t, dstDir, storage.Traces, acked)
			waitForwarded(t, srcDir)
			src.stop(t)
			dst.stop(t)
			stored := storedIDs(t, dstDir, storage.Traces)
			dups := sender.duplicates(t, stored)
			st := exp.Stats()
			t.Logf("%s: %d kills of A, %d requests (%d retried), %d spans acknowledged, %d stored in B, %d duplicates",
				scheme, rounds, st.Sent, st.Retried, len(acked), len(stored), dups)
			if dups > 0 {
				t.Errorf("%d spans stored more than once in B", dups)
			}
		})
	}
}

// dropEveryThird is a reverse proxy in front of a receiver that drops the
// response of every third request: the receiver has handled it (stored
// it), then the proxy resets the request instead of passing the answer on
// (HTTP/2 RST_STREAM, or an HTTP/1.1 connection closed), the lost
// acknowledgement of a timeout or a reset on the way back. An OTLP/HTTP
// answer is dropped when its headers arrive (the receiver stored the
// request before answering); a gRPC one when its first message (a unary
// response, a stream's acknowledgement) arrives, its headers passed on.
func dropEveryThird(t *testing.T, target string) (addr string, dropped *atomic.Int64) {
	t.Helper()
	dropped = new(atomic.Int64)
	var n atomic.Int64
	h1 := &http.Transport{}
	h2c := &http.Transport{Protocols: new(http.Protocols)}
	h2c.Protocols.SetUnencryptedHTTP2(true)
	u, _ := url.Parse("http://" + target)
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(u) },
		Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
			if strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
				return h2c.RoundTrip(r) // gRPC needs HTTP/2 end to end
			}
			return h1.RoundTrip(r)
		}),
		ModifyResponse: func(resp *http.Response) error {
			if n.Add(1)%3 != 0 {
				return nil
			}
			if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/grpc") {
				resp.Body = &dropBody{ReadCloser: resp.Body, dropped: dropped}
				return nil
			}
			resp.Body.Close()
			return errDropped
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if errors.Is(err, errDropped) {
				dropped.Add(1)
				panic(http.ErrAbortHandler) // a reset, not an answer
			}
			w.WriteHeader(http.StatusBadGateway)
		},
		ErrorLog: log.New(io.Discard, "", 0),
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: proxy, Protocols: new(http.Protocols), ErrorLog: log.New(io.Discard, "", 0)}
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), dropped
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

var errDropped = errors.New("response dropped by the test proxy")

// dropBody fails the copy of a gRPC response at its first bytes, which
// makes the ReverseProxy reset the request.
type dropBody struct {
	io.ReadCloser
	dropped *atomic.Int64
}

func (d *dropBody) Read(p []byte) (int, error) {
	n, err := d.ReadCloser.Read(p)
	if n > 0 {
		d.dropped.Add(1)
		return 0, errDropped
	}
	return n, err
}

// TestExactlyOnceLostAck: the response of every third request is lost on
// its way back (dropEveryThird); the client retries with the request's
// key, and the store holds each batch once, over OTLP/gRPC, OTLP/HTTP and
// the streaming mode (whose requests are resent on a new stream with
// their ids, under the exporter's client identity).
func TestExactlyOnceLostAck(t *testing.T) {
	for _, proto := range []string{"grpc", "http", "stream"} {
		t.Run(proto, func(t *testing.T) {
			dir := t.TempDir()
			httpAddr := freeAddr(t)
			dst := startServe(t, dir, "", "-http-addr", httpAddr)
			target := dst.addr
			if proto == "http" {
				target = httpAddr
			}
			addr, dropped := dropEveryThird(t, target)
			cfg := otlpclient.Config{
				Endpoint:        addr,
				IdempotencyKeys: true,
				RequestTimeout:  30 * time.Second,
				Backoff:         otlpclient.Backoff{Initial: 5 * time.Millisecond, Max: 50 * time.Millisecond},
			}
			const batches = 60
			var export func(context.Context, []byte) error
			var finish func()
			switch proto {
			case "grpc":
				export = otlpclient.NewUnaryExporter(cfg).Export
			case "http":
				h := otlpclient.NewHTTPExporter(otlpclient.HTTPConfig{Config: cfg, URL: "http://" + addr + "/v1/traces"})
				export = func(ctx context.Context, req []byte) error { _, err := h.ExportResult(ctx, req); return err }
			case "stream":
				// Each request on its own stream (RebalanceRequests 1), so
				// that a dropped stream loses one acknowledgement.
				e := otlpclient.NewStreamExporter(otlpclient.StreamConfig{Config: cfg, RebalanceRequests: 1})
				export = func(ctx context.Context, req []byte) error {
					done := make(chan error, 1)
					if err := e.Send(ctx, req, func(err error) { done <- err }); err != nil {
						return err
					}
					return <-done
				}
				finish = func() { e.Close(context.Background()) }
			}
			s := &keyedSender{sent: map[string]bool{}, acked: map[string]bool{}}
			for b := range batches {
				ids := make([]string, 5)
				for i := range ids {
					ids[i] = fmt.Sprintf("%s-b%d-i%d", proto, b, i)
					s.sent[ids[i]] = true
				}
				if err := export(context.Background(), tracesRequest(nil, ids...)); err != nil {
					t.Fatalf("batch %d: %v", b, err)
				}
				for _, id := range ids {
					s.acked[id] = true
				}
			}
			if finish != nil {
				finish()
			}
			dst.stop(t)
			dups := s.duplicates(t, storedIDs(t, dir, storage.Traces))
			t.Logf("%s: %d batches, %d responses dropped, %d duplicate spans", proto, batches, dropped.Load(), dups)
			if dropped.Load() < batches/3 {
				t.Fatalf("only %d responses dropped: the proxy did not lose acknowledgements", dropped.Load())
			}
			if dups > 0 {
				t.Errorf("%d spans stored more than once", dups)
			}
		})
	}
}

// TestExactlyOnceReplayKill: replay (with a cursor) is SIGKILLed several
// times mid-run and run again until it finishes, then the whole log is
// replayed once more without a cursor: each record carries the key of its
// position in the replayed log (its identity, DATA/ID), so the target
// stores every item exactly once, over OTLP/gRPC and the stream.
func TestExactlyOnceReplayKill(t *testing.T) {
	if testing.Short() {
		t.Skip("runs servers")
	}
	src := t.TempDir()
	ids, _ := fillSource(t, src, "rk", 300, 0)
	for _, proto := range []string{"grpc", "stream"} {
		t.Run(proto, func(t *testing.T) {
			dir := t.TempDir()
			dst := startServe(t, dir, "")
			args := []string{"replay", "-data-dir", src, "-endpoint", dst.addr, "-insecure", "-protocol", proto, "-signal", "traces", "-cursor", "kill-" + proto}
			kills := 0
			for range 4 {
				p := startCmd(t, args...)
				time.Sleep(time.Duration(10+rand.IntN(60)) * time.Millisecond) // the kill lands at a random moment of the replay
				p.cmd.Process.Signal(syscall.SIGKILL)
				<-p.done
				if !p.cmd.ProcessState.Exited() {
					kills++
				}
			}
			if code := startCmd(t, args...).exitCode(t); code != 0 {
				t.Fatalf("the replay after the kills exited %d", code)
			}
			again := startCmd(t, args[:len(args)-2]...) // no cursor: everything again
			if code := again.exitCode(t); code != 0 {
				t.Fatalf("the second full replay exited %d:\n%s", code, again.stderr.String())
			}
			dst.stop(t)
			got := storedIDs(t, dir, storage.Traces)
			dups := 0
			for _, id := range ids {
				if got[id] == 0 {
					t.Fatalf("item %s never arrived", id)
				}
				dups += got[id] - 1
			}
			t.Logf("%s: %d kills of replay, then two full runs: %d items, %d stored more than once", proto, kills, len(ids), dups)
			if dups > 0 {
				t.Errorf("%d items stored more than once", dups)
			}
		})
	}
}
