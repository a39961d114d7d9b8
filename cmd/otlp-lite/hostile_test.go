//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/net/http2"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlpclient"
	"github.com/otlp-lite/otlp-lite/storage"
)

// The hostile-client suite: clients that lie, stall, or refuse to read,
// each trying to make the server hold a resource (memory, the admission
// budget, goroutines, streams, connections) for less than it costs them.
// Each test states the contract a production receiver owes honest clients
// while the attack runs, and checks it with figures: an honest client's
// latency, the server's RSS from /proc, the admission budget gauge, and
// the stored data (nothing acknowledged is lost). Linux only: /proc and
// prlimit(2).

const (
	methodStreamTraces = "/otlplite.v1.StreamExporter/ExportTraces"
	methodHealthCheck  = "/grpc.health.v1.Health/Check"
	methodHealthWatch  = "/grpc.health.v1.Health/Watch"

	budgetGauge = "otlplite_admission_bytes_in_flight"

	// honestLatency is how long an honest client's export may take while
	// an attack runs: typically a few ms; 2 s leaves room for a CI machine
	// of 2 cores running several of these servers at once.
	honestLatency = 2 * time.Second
	// nearZeroBudget is "near 0, well below one request": what a few
	// hundred attackers that each sent a handful of bytes, plus honest
	// requests in flight, may hold of the budget.
	nearZeroBudget = 1 << 20
)

// lengthPrefix is a gRPC message prefix claiming n bytes, uncompressed.
func lengthPrefix(n int) []byte {
	return []byte{0, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}
}

// streamRequest is one otlplite.v1.StreamExporter request
// (proto/otlplite/v1/stream.proto) with the given id, carrying one span per
// name with pad bytes of padding each, framed as a gRPC message.
func streamRequest(t testing.TB, id uint64, pad []byte, names ...string) []byte {
	env, err := otlpclient.AppendEnvelope(nil, id, tracesRequest(pad, names...))
	if err != nil {
		t.Fatal(err)
	}
	return grpcBody(false, env)
}

// honest runs the honest client's gRPC export and checks the contract: OK
// within honestLatency. It returns whether the export was acknowledged
// (then id must be stored).
func honest(t *testing.T, s *abuseServer, id, during string) bool {
	t.Helper()
	return checkHonest(t, "Export", during, s.honestExport, id)
}

// honestHTTP is honest over OTLP/HTTP.
func honestHTTP(t *testing.T, s *abuseServer, id, during string) bool {
	t.Helper()
	return checkHonest(t, "OTLP/HTTP export", during, s.honestHTTPExport, id)
}

// checkHonest runs one honest export and checks it was OK within
// honestLatency.
func checkHonest(t *testing.T, what, during string, export func(id string) (time.Duration, error), id string) bool {
	t.Helper()
	took, err := export(id)
	if err != nil {
		t.Errorf("%s: an honest %s failed after %v: %v", during, what, took.Round(time.Millisecond), err)
		return false
	}
	if took > honestLatency {
		t.Errorf("%s: an honest %s took %v (contract: %v)", during, what, took.Round(time.Millisecond), honestLatency)
	} else {
		t.Logf("%s: honest %s OK in %v", during, what, took.Round(time.Millisecond))
	}
	return true
}

// requireStored stops the server gracefully and checks that every one of
// ids is stored; what says what they are ("acknowledged").
func requireStored(t *testing.T, s *abuseServer, what string, ids []string) {
	t.Helper()
	s.stop(t)
	stored := storedIDs(t, s.dataDir, storage.Traces)
	lost := 0
	for _, id := range ids {
		if stored[id] == 0 {
			if lost < 5 {
				t.Errorf("%s request %s is not stored", what, id)
			}
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d %s requests are not stored", lost, len(ids), what)
	}
}

// sampler polls the budget gauge and the server's RSS and goroutines every
// 20 ms until stopped, keeping the peaks: the figures of an attack.
type sampler struct {
	peakBudget, peakGoroutines float64
	peakRSS                    int64
	stop, done                 chan struct{}
}

func startSampler(t *testing.T, s *abuseServer) *sampler {
	sm := &sampler{stop: make(chan struct{}), done: make(chan struct{})}
	tb := bgTB{t}
	go func() {
		defer close(sm.done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			sm.peakBudget = max(sm.peakBudget, s.metric(tb, budgetGauge))
			sm.peakGoroutines = max(sm.peakGoroutines, s.metric(tb, "otlplite_go_goroutines"))
			sm.peakRSS = max(sm.peakRSS, readProc(tb, s.pid).rss)
			select {
			case <-sm.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return sm
}

// finish stops the sampler after it has sampled for at least d.
func (sm *sampler) finish(d time.Duration) *sampler {
	time.AfterFunc(d, func() { close(sm.stop) })
	<-sm.done
	return sm
}

// bgTB is a testing.TB for helpers called from a goroutine other than the
// test's: Fatal reports the error and ends only that goroutine
// (FailNow must not be called off the test goroutine).
type bgTB struct{ testing.TB }

func (b bgTB) Fatal(args ...any) {
	b.Helper()
	b.Error(args...)
	runtime.Goexit()
}

func (b bgTB) Fatalf(format string, args ...any) {
	b.Helper()
	b.Errorf(format, args...)
	runtime.Goexit()
}

func closeAll(cs []io.Closer) {
	for _, c := range cs {
		c.Close()
	}
}

// TestHostileLyingLength: 100 connections each declare a request of the
// message limit (64 MiB, the default) and send a few bytes of it, over gRPC
// (the length prefix), HTTP/1.1 and HTTP/2 OTLP/HTTP (Content-Length), and
// stall. Contract: they cost what they sent — the budget gauge stays near 0,
// far below one request — and an honest client's Export meanwhile succeeds
// within 2 s. A declared size over the limit is refused at once
// (RESOURCE_EXHAUSTED / 413), before any of the body is sent.
func TestHostileLyingLength(t *testing.T) {
	t.Parallel()
	s := startAbuseServer(t)
	s.mustServe(t)
	idle := readProc(t, s.pid)
	const attackers = 100
	const limit = grpcwire.DefaultMaxRecvMsgSize
	const httpClaim = 60 << 20
	var acked []string

	attack := func(t *testing.T, name string, open func() (io.Closer, error)) {
		var closers []io.Closer
		defer func() { closeAll(closers) }()
		for i := range attackers {
			c, err := open()
			if err != nil {
				closeAll(closers)
				t.Fatalf("attacker %d: %v", i, err)
			}
			closers = append(closers, c)
		}
		sm := startSampler(t, s)
		if honest(t, s, "lying-"+name, name+": 100 lying requests held") {
			acked = append(acked, "lying-"+name)
		}
		sm.finish(time.Second)
		t.Logf("%s: %d attackers; peak budget in flight %.0f bytes; peak RSS %d MiB (idle %d MiB); peak goroutines %.0f",
			name, attackers, sm.peakBudget, sm.peakRSS>>20, idle.rss>>20, sm.peakGoroutines)
		if sm.peakBudget > nearZeroBudget {
			t.Errorf("%s: the budget gauge reached %.1f MiB for %d requests that sent a few bytes each (contract: below %d KiB)",
				name, sm.peakBudget/(1<<20), attackers, nearZeroBudget>>10)
		}
		if limit := idle.rss + 64<<20; sm.peakRSS > limit {
			t.Errorf("%s: RSS reached %d MiB (idle %d MiB; contract: at most 64 MiB more)", name, sm.peakRSS>>20, idle.rss>>20)
		}
		closeAll(closers)
		closers = nil
		if v, ok := s.waitMetric(t, 10*time.Second, budgetGauge, func(v float64) bool { return v == 0 }); !ok {
			t.Errorf("%s: %.0f bytes of budget still held 10 s after the attackers left", name, v)
		}
	}

	t.Run("grpc length prefix", func(t *testing.T) {
		attack(t, "grpc", func() (io.Closer, error) {
			c, err := dialH2Err(s.addr)
			if err != nil {
				return nil, err
			}
			if err := c.headers(1, methodTraces, false); err != nil {
				c.conn.Close()
				return nil, err
			}
			if err := c.data(1, false, lengthPrefix(limit)); err != nil {
				c.conn.Close()
				return nil, err
			}
			return c.conn, nil
		})
	})
	t.Run("http/1.1 Content-Length", func(t *testing.T) {
		attack(t, "http1", func() (io.Closer, error) {
			c, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
			if err != nil {
				return nil, err
			}
			_, err = fmt.Fprintf(c, "POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Length: %d\r\n\r\n%s",
				httpClaim, tracesRequest(nil, "lie")[:10])
			if err != nil {
				c.Close()
				return nil, err
			}
			return c, nil
		})
	})
	t.Run("http/2 Content-Length", func(t *testing.T) {
		attack(t, "h2", func() (io.Closer, error) {
			c, err := dialH2Err(s.addr)
			if err != nil {
				return nil, err
			}
			if err := c.headers(1, "/v1/traces", false, "content-type", "application/x-protobuf", "content-length", fmt.Sprint(httpClaim)); err != nil {
				c.conn.Close()
				return nil, err
			}
			if err := c.data(1, false, tracesRequest(nil, "lie")[:10]); err != nil {
				c.conn.Close()
				return nil, err
			}
			return c.conn, nil
		})
	})

	// Over the limit: answered before the client sends any of the body.
	overLimit := []struct {
		name string
		send func(t *testing.T) outcome
		want outcome
	}{
		{"grpc prefix over the limit", func(t *testing.T) outcome {
			c := dialH2(t, s.addr)
			c.headers(1, methodTraces, false)
			c.data(1, false, lengthPrefix(limit+1))
			return c.result(1, 5*time.Second)
		}, grpcCode("RESOURCE_EXHAUSTED")},
		{"http/1.1 Content-Length over the limit", func(t *testing.T) outcome {
			return rawHTTP1(fmt.Sprintf("POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Length: %d\r\n\r\n", limit+1), "", 0)(t, s)
		}, outcome{HTTP: 413}},
		{"http/2 Content-Length over the limit", func(t *testing.T) outcome {
			c := dialH2(t, s.addr)
			c.headers(1, "/v1/traces", false, "content-type", "application/x-protobuf", "content-length", fmt.Sprint(limit+1))
			return c.result(1, 5*time.Second)
		}, outcome{HTTP: 413}},
	}
	for _, tc := range overLimit {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			got := tc.send(t)
			took := time.Since(start)
			t.Logf("answered %+v in %v", got, took.Round(time.Millisecond))
			if !got.same(tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if took > time.Second {
				t.Errorf("answered after %v, want at once (under 1 s)", took.Round(time.Millisecond))
			}
		})
	}
	requireStored(t, s, "acknowledged", acked)
}

// TestHostileHealthFlood: with -auth-token-file, grpc.health.v1.Health is
// the one service open to anyone. 12 unauthenticated Check streams each
// declare a 60 MB request and send as much of it as flow control lets
// them, then stall. Contract: the server's RSS stays below 100 MiB; each
// is refused with RESOURCE_EXHAUSTED at once (a HealthCheckRequest is a
// service name: its size is capped, tiny); honest clients are unaffected.
func TestHostileHealthFlood(t *testing.T) {
	t.Parallel()
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("hostile-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startAbuseServer(t, "-auth-token-file", tokens)
	s.token = "hostile-token"
	s.mustServe(t)
	idle := readProc(t, s.pid)

	const streams = 12
	const claim = 60_000_000
	const rssBound = 100 << 20
	// A safety valve, not the contract: a server that buffers everything
	// would take 720 MB; the attack stops once it has proven the point.
	const valve = 2 * rssBound
	chunk := bytes.Repeat([]byte{0x0a}, 1<<20)
	var (
		stopSending atomic.Bool
		sentTotal   atomic.Int64
		wg          sync.WaitGroup
		conns       []*h2Conn
		results     = make([]outcome, streams)
		answerAfter = make([]time.Duration, streams)
	)
	for i := range streams {
		c := dialH2(t, s.addr)
		conns = append(conns, c)
		start := time.Now()
		if err := c.headers(1, methodHealthCheck, false); err != nil {
			t.Fatal(err)
		}
		if err := c.data(1, false, lengthPrefix(claim)); err != nil {
			t.Fatal(err)
		}
		wg.Add(2)
		go func() {
			defer wg.Done()
			for sent := 0; sent < claim && !stopSending.Load(); {
				n, err := c.send(1, chunk[:min(len(chunk), claim-sent)], false, 500*time.Millisecond)
				sent += n
				sentTotal.Add(int64(n))
				if err != nil {
					return // the window stayed shut (the stall), or the server answered
				}
			}
		}()
		go func() {
			defer wg.Done()
			results[i] = c.result(1, 5*time.Second)
			answerAfter[i] = time.Since(start)
		}()
	}
	sendersDone := make(chan struct{})
	go func() { wg.Wait(); close(sendersDone) }()
	var peakRSS int64
	tick := time.NewTicker(20 * time.Millisecond)
	for done := false; !done; {
		select {
		case <-sendersDone:
			done = true
		case <-tick.C:
		}
		if rss := readProc(t, s.pid).rss; rss > peakRSS {
			peakRSS = rss
			if rss > valve {
				stopSending.Store(true)
			}
		}
	}
	tick.Stop()
	// The attackers now stall, holding what they sent.
	acked := []string{}
	if honest(t, s, "health-flood", "12 health floods stalled") {
		acked = append(acked, "health-flood")
	}
	after := readProc(t, s.pid)
	peakRSS = max(peakRSS, after.rss)
	t.Logf("attackers sent %d MiB in all; server RSS peak %d MiB, VmHWM %d MiB (idle %d MiB)",
		sentTotal.Load()>>20, peakRSS>>20, after.hwm>>20, idle.rss>>20)
	if stopSending.Load() {
		t.Errorf("RSS passed %d MiB: the attack was stopped there", valve>>20)
	}
	if after.hwm > rssBound {
		t.Errorf("server peak RSS (VmHWM) %d MiB during the health flood (contract: below %d MiB)", after.hwm>>20, rssBound>>20)
	}
	for i, o := range results {
		if o.GRPC != "RESOURCE_EXHAUSTED" || answerAfter[i] > time.Second {
			t.Errorf("health check %d: answered %+v after %v (contract: RESOURCE_EXHAUSTED at once)", i, o, answerAfter[i].Round(time.Millisecond))
		}
	}
	for _, c := range conns {
		c.conn.Close()
	}
	requireStored(t, s, "acknowledged", acked)
}

// TestHostileZeroWindowStream: a client whose SETTINGS_INITIAL_WINDOW_SIZE
// is 0 never lets the server write an acknowledgement. It opens 64
// StreamExporter streams and pipelines 16 valid requests on each — in all
// a little more than the admission budget (made 32 MiB here, so the test
// moves 34 MiB rather than 130). Contract: the budget gauge returns to ~0
// once the requests are stored (the budget is released before the ack is
// written); an honest unary Export succeeds within 2 s; every request is
// stored (none could be acknowledged, so none may be lost); and the
// streams are reset once the ack write deadline (-response-write-timeout)
// passes.
func TestHostileZeroWindowStream(t *testing.T) {
	t.Parallel()
	const (
		conns, streamsPerConn, depth = 4, 16, 16
		requests                     = conns * streamsPerConn * depth
		budget                       = 8 << 20
		ackTimeout                   = 3 * time.Second
	)
	s := startAbuseServer(t, "-admission-request-limit", fmt.Sprint(budget), "-response-write-timeout", ackTimeout.String())
	s.mustServe(t)
	// 9 KiB per request: 1024 of them are 9 MiB, more than the budget.
	// (No more: the HTTP/2 windows no longer hold what the server has not
	// read, so the client sends at the pace the disk stores.)
	pad := bytes.Repeat([]byte("z"), 9<<10)

	type zstream struct {
		c  *h2Conn
		id uint32
	}
	var (
		zs      []zstream
		names   []string
		wg      sync.WaitGroup
		sendErr atomic.Value
	)
	start := time.Now()
	for ci := range conns {
		c, err := dialH2With(s.addr, h2Options{zeroWindow: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.conn.Close() })
		for si := range streamsPerConn {
			id, err := c.open(methodStreamTraces, false)
			if err != nil {
				t.Fatal(err)
			}
			zs = append(zs, zstream{c, id})
			var reqs [][]byte
			for r := range depth {
				name := fmt.Sprintf("zw-%d-%d-%d", ci, si, r)
				names = append(names, name)
				reqs = append(reqs, streamRequest(t, uint64(r+1), pad, name))
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, req := range reqs {
					// A server that stops reading stops the sender here:
					// 8 s without window is reported, not waited out.
					if _, err := c.send(id, req, false, 8*time.Second); err != nil {
						sendErr.Store(fmt.Sprintf("stream %d: %v", id, err))
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	sent := time.Since(start)
	if e := sendErr.Load(); e != nil {
		t.Errorf("the server stopped reading the streams: %v", e)
	}
	// Every request read gets an outcome (OK or a refusal) in the request
	// counter; wait for all of them, or for the count to stop moving.
	counted := func() float64 { return s.metricWith(t, "otlplite_requests_total", `transport="grpc_stream"`) }
	var n float64
	last, lastChange := -1.0, time.Now()
	for {
		n = counted()
		if n >= requests || time.Since(lastChange) > 6*time.Second {
			break
		}
		if n != last {
			last, lastChange = n, time.Now()
		}
		time.Sleep(20 * time.Millisecond) // polling a metric
	}
	storedAt := time.Now()
	okCount := s.metricWith(t, "otlplite_requests_total", `transport="grpc_stream"`, `code="OK"`)
	t.Logf("%d requests sent on %d zero-window streams in %v; server counted %.0f, %.0f OK", requests, len(zs), sent.Round(time.Millisecond), n, okCount)
	if okCount < requests {
		t.Errorf("%.0f of %d requests stored OK (contract: all, the budget being released as they are stored)", okCount, requests)
	}
	budgetLeft, ok := s.waitMetric(t, 2*time.Second, budgetGauge, func(v float64) bool { return v <= nearZeroBudget })
	if !ok {
		t.Errorf("the budget gauge is at %.1f MiB with every request read and none acknowledged (contract: ~0 once stored, before the ack is written)", budgetLeft/(1<<20))
	} else {
		t.Logf("budget in flight %.0f bytes after the requests were stored", budgetLeft)
	}
	acked := []string{}
	if honest(t, s, "zero-window-honest", "64 zero-window streams open") {
		acked = append(acked, "zero-window-honest")
	}
	// The streams: each must be reset once its ack write deadline passes.
	allEnded := func() bool {
		for _, z := range zs {
			if _, ended := z.c.received(z.id, 0); !ended {
				return false
			}
		}
		return true
	}
	waitFor := ackTimeout + 3*time.Second
	deadline := time.Now().Add(waitFor)
	for !allEnded() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond) // polling the streams' state
	}
	open := 0
	resets := map[string]int{}
	for _, z := range zs {
		z.c.mu.Lock()
		st := z.c.streams[z.id]
		switch {
		case !st.ended:
			open++
		case st.reset != nil:
			resets[st.reset.String()]++
		default:
			resets["trailers "+codeName(st.grpcStatus)]++
		}
		z.c.mu.Unlock()
	}
	t.Logf("%v after the requests were stored: %d streams still open, ended: %v; open-streams gauge %.0f",
		time.Since(storedAt).Round(time.Millisecond), open, resets, s.metric(t, "otlplite_open_streams"))
	if open > 0 {
		t.Errorf("%d of %d zero-window streams still open %v after the requests were stored (contract: reset once the %v ack write deadline passes)",
			open, len(zs), time.Since(storedAt).Round(time.Millisecond), ackTimeout)
	}
	for _, z := range zs {
		z.c.conn.Close()
	}
	requireStored(t, s, "acknowledged", acked)
	// The zero-window streams' requests: none could be acknowledged, so
	// each must have been stored (the server reads a request only to store
	// it or answer it).
	if stored := storedIDs(t, s.dataDir, storage.Traces); len(stored) > 0 {
		var lost []string
		for _, name := range names {
			if stored[name] == 0 {
				lost = append(lost, name)
			}
		}
		if len(lost) > 0 {
			t.Errorf("%d of %d requests sent on zero-window streams are not stored, e.g. %s", len(lost), len(names), lost[0])
		}
	}
}

// TestHostileReuseIDAfterAck: a stream client that resends id k as soon as
// the acknowledgement for k arrives (stream.proto allows reuse once a
// request is acknowledged), on 4 streams with 16 requests in flight each,
// for 3 s. The resend is written by the connection's reader the moment the
// ack is parsed, from a request built beforehand, so it reaches the server
// as early as a client can make it. Contract: no stream ends with
// INVALID_ARGUMENT ("id reused while still in flight"); after a rotation a
// new stream resends what was not acknowledged; every acknowledged request
// is stored.
func TestHostileReuseIDAfterAck(t *testing.T) {
	t.Parallel()
	s := startAbuseServer(t)
	c := dialH2(t, s.addr)
	const lanes, depth = 4, 16
	const duration = 3 * time.Second
	var (
		mu      sync.Mutex
		acked   []string
		ends    = map[string]int{}
		reused  atomic.Int64
		failure []string
		wg      sync.WaitGroup
	)
	stopAt := time.Now().Add(duration)
	tb := bgTB{t}
	for lane := range lanes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fail := func(format string, args ...any) {
				mu.Lock()
				failure = append(failure, fmt.Sprintf("lane %d: ", lane)+fmt.Sprintf(format, args...))
				mu.Unlock()
			}
			// Lane state, shared with the onData reaction: under c.mu.
			seq := 0
			type req struct {
				name string
				body []byte
			}
			build := func(id uint64) req {
				seq++
				name := fmt.Sprintf("reuse-%d-%d", lane, seq)
				return req{name, streamRequest(tb, id, nil, name)}
			}
			pending := map[uint64]req{} // sent, not acknowledged
			next := map[uint64]req{}    // the request that reuses id next
			var deferred []req          // reactions the windows did not allow
			closed := false
			var bad string
			for id := uint64(1); id <= depth; id++ {
				pending[id] = build(id)
				next[id] = build(id)
			}
			for streamN := 0; ; streamN++ {
				if streamN > 50 {
					fail("more than 50 streams")
					return
				}
				sid, err := c.open(methodStreamTraces, false)
				if err != nil {
					fail("open: %v", err)
					return
				}
				offset := 0
				c.mu.Lock()
				deferred = deferred[:0]
				for _, r := range pending {
					deferred = append(deferred, r)
				}
				c.stream(sid).onData = func(st *h2Stream) {
					msgs, k := grpcMessages(st.data[offset:])
					offset += k
					for _, m := range msgs {
						var a otlpclient.Ack
						if err := otlpclient.ParseAck(m, &a); err != nil {
							bad = fmt.Sprintf("bad ack: %v", err)
							return
						}
						r, ok := pending[a.ID]
						if !ok {
							bad = fmt.Sprintf("ack for id %d, which is not in flight", a.ID)
							return
						}
						switch a.Code {
						case otlpclient.Success:
							mu.Lock()
							acked = append(acked, r.name)
							mu.Unlock()
							delete(pending, a.ID)
							if time.Now().Before(stopAt) && !closed {
								// Reuse the id at once, with new data.
								r := next[a.ID]
								pending[a.ID] = r
								reused.Add(1)
								if !c.writeLocked(sid, st, r.body, false) {
									deferred = append(deferred, r)
								}
								next[a.ID] = build(a.ID)
							}
						case otlpclient.FailedRetryable:
							deferred = append(deferred, r)
						default:
							bad = fmt.Sprintf("id %d: %v %s", a.ID, a.Code, a.Message)
							return
						}
					}
				}
				c.mu.Unlock()
				for {
					var send []req
					var ended, halfClose bool
					var problem string
					if !c.wait(10*time.Second, func() bool {
						ended, problem = c.stream(sid).ended, bad
						send = append(send[:0], deferred...)
						deferred = deferred[:0]
						if !closed && !time.Now().Before(stopAt) && len(pending) == 0 && len(send) == 0 {
							closed, halfClose = true, true
						}
						return ended || problem != "" || len(send) > 0 || halfClose
					}) && !time.Now().Before(stopAt) {
						fail("no acknowledgement or end within 10 s")
						return
					}
					if problem != "" {
						fail("%s", problem)
						return
					}
					for _, r := range send {
						c.send(sid, r.body, false, 5*time.Second)
					}
					if halfClose {
						c.data(sid, true, nil) // all acknowledged
					}
					if ended {
						break
					}
				}
				c.mu.Lock()
				o := c.streams[sid].outcome()
				done := closed && len(pending) == 0
				c.mu.Unlock()
				key := o.GRPC
				if key == "" {
					key = "reset " + o.Reset
				}
				mu.Lock()
				ends[key]++
				mu.Unlock()
				switch {
				case o.GRPC == "OK" && done:
					return
				case o.GRPC == "UNAVAILABLE":
					// Rotation: resend what was not acknowledged.
				default:
					fail("stream ended with %+v", o)
					return
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d requests acknowledged, %d ids reused the moment their ack arrived; stream ends: %v", len(acked), reused.Load(), ends)
	for _, f := range failure {
		t.Error(f)
	}
	if ends["INVALID_ARGUMENT"] > 0 {
		t.Errorf("%d streams ended with INVALID_ARGUMENT for an id reused after its acknowledgement", ends["INVALID_ARGUMENT"])
	}
	if reused.Load() < 100 {
		t.Errorf("only %d ids were reused: the attack did not happen", reused.Load())
	}
	c.conn.Close()
	requireStored(t, s, "acknowledged", acked)
}

// TestHostileStalls: streams that stall inside a message — after 2 bytes
// of a 5-byte prefix, or in the body of a message that admission refused
// (declared larger than the whole budget, or refused as busy while the
// budget is held) — and, with such streams open, SIGTERM. Contract: each
// stream ends within -stream-max-age + -body-read-timeout; shutdown
// completes within -shutdown-timeout without having to force connections
// closed (every stalled read has a deadline shorter than it).
func TestHostileStalls(t *testing.T) {
	t.Parallel()
	const (
		maxAge          = 2 * time.Second
		bodyTimeout     = time.Second
		shutdownTimeout = 3 * time.Second
		budget          = 64 << 10
	)
	s := startAbuseServer(t,
		"-stream-max-age", maxAge.String(),
		"-body-read-timeout", bodyTimeout.String(),
		"-shutdown-timeout", shutdownTimeout.String(),
		"-admission-request-limit", fmt.Sprint(budget),
		"-admission-max-wait", "100ms")
	s.mustServe(t)

	type stalled struct {
		name  string
		c     *h2Conn
		id    uint32
		start time.Time
	}
	var conns []*h2Conn
	dial := func() *h2Conn {
		c := dialH2(t, s.addr)
		conns = append(conns, c)
		return c
	}
	openStream := func(name string, msg []byte) stalled {
		c := dial()
		id, err := c.open(methodStreamTraces, false)
		if err != nil {
			t.Fatal(err)
		}
		st := stalled{name, c, id, time.Now()}
		if _, err := c.send(id, msg, false, 5*time.Second); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return st
	}
	// openAll opens one stream of each kind and waits until the refused
	// ones are refused.
	openAll := func() []stalled {
		var out []stalled
		out = append(out, openStream("partial prefix (2 of 5 bytes)", []byte{0, 0}))
		tooLarge := s.metric(t, "otlplite_admission_refusals_too_large_total")
		busy := s.metric(t, "otlplite_admission_refusals_busy_total")
		// Declared 1 MiB (under the message limit, over the whole
		// budget); 100 bytes of it, then nothing.
		out = append(out, openStream("refused as larger than the budget, body stalled",
			append(lengthPrefix(1<<20), make([]byte, 100)...)))
		// Busy: a unary request holds 63 KiB of the 64 KiB budget (it
		// declared 64 KiB - 1 and stalls), then a stream message needs 4
		// KiB more than is left.
		holder := dial()
		holder.headers(1, methodTraces, false)
		if _, err := holder.send(1, append(lengthPrefix(budget-1), make([]byte, 63<<10)...), false, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		if v, ok := s.waitMetric(t, 2*time.Second, budgetGauge, func(v float64) bool { return v >= 60<<10 }); !ok {
			t.Logf("the holder's bytes are not charged yet (%.0f bytes in flight)", v)
		}
		out = append(out, openStream("refused as busy, body stalled",
			append(lengthPrefix(8<<10), make([]byte, 4<<10)...)))
		if _, ok := s.waitMetric(t, 2*time.Second, "otlplite_admission_refusals_too_large_total", func(v float64) bool { return v > tooLarge }); !ok {
			t.Log("no too-large refusal counted: the oversize stream message was not refused by admission")
		}
		if _, ok := s.waitMetric(t, 2*time.Second, "otlplite_admission_refusals_busy_total", func(v float64) bool { return v > busy }); !ok {
			t.Log("no busy refusal counted: the stream message was admitted")
		}
		return out
	}

	bound := maxAge*11/10 + bodyTimeout
	streams := openAll()
	var wg sync.WaitGroup
	for _, st := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Slack for a loaded 2-core CI machine under -race: the
			// contract is a bound, not a latency.
			o := st.c.result(st.id, bound+5*time.Second)
			took := time.Since(st.start)
			t.Logf("%s: ended %+v after %v", st.name, o, took.Round(time.Millisecond))
			if o.Reset == "timeout" || took > bound+3*time.Second {
				t.Errorf("%s: still open %v after it stalled (contract: ended within -stream-max-age + -body-read-timeout = %v)",
					st.name, took.Round(time.Millisecond), bound)
			}
		}()
	}
	wg.Wait()
	for _, c := range conns {
		c.conn.Close()
	}
	conns = nil
	if _, ok := s.waitMetric(t, 5*time.Second, budgetGauge, func(v float64) bool { return v == 0 }); !ok {
		t.Error("budget still held after the stalled streams' connections closed")
	}

	// SIGTERM with stalled streams open.
	openAll()
	took, code := s.stopTimed(shutdownTimeout + 10*time.Second)
	t.Logf("SIGTERM with 3 stalled streams open: exited %d after %v", code, took.Round(time.Millisecond))
	if code != 0 {
		t.Errorf("exit code %d after SIGTERM:\n%s", code, s.logs())
	}
	if took > shutdownTimeout+2*time.Second {
		t.Errorf("shutdown took %v (contract: within -shutdown-timeout %v)", took.Round(time.Millisecond), shutdownTimeout)
	}
	if strings.Contains(s.logs(), "did not finish in time") {
		t.Errorf("shutdown had to close connections on streams that never ended by themselves")
	}
}

// TestHostileGRPCTimeout: calls whose grpc-timeout expires while the client
// holds them open — an export stream with a request acknowledged, a unary
// Export whose body stalls, a health Watch. Contract: each ends with
// DEADLINE_EXCEEDED (not CANCELLED) soon after its deadline; the server does
// not hold a call its client has given up on until its own timeouts (the
// 30 s body read timeout) fire.
func TestHostileGRPCTimeout(t *testing.T) {
	t.Parallel()
	s := startAbuseServer(t)
	s.mustServe(t)
	const timeout = 500 * time.Millisecond
	const slack = 1500 * time.Millisecond
	cases := []struct {
		name string
		path string
		msg  []byte
		end  bool
	}{
		{"export stream, one request acknowledged", methodStreamTraces, streamRequest(t, 1, nil, "timeout-stream"), false},
		{"unary Export, body stalled", methodTraces, grpcBody(false, tracesRequest(nil, "timeout-unary"))[:20], false},
		{"health Watch", methodHealthWatch, grpcBody(false, nil), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := dialH2(t, s.addr)
			start := time.Now()
			c.headers(1, tc.path, false, "grpc-timeout", fmt.Sprintf("%dm", timeout.Milliseconds()))
			c.data(1, tc.end, tc.msg)
			o := c.result(1, timeout+4*time.Second)
			took := time.Since(start)
			data, _ := c.received(1, 0)
			msgs, _ := grpcMessages(data)
			t.Logf("ended %+v after %v, %d response messages before", o, took.Round(time.Millisecond), len(msgs))
			if o.GRPC != "DEADLINE_EXCEEDED" || took > timeout+slack {
				t.Errorf("ended %+v after %v (contract: DEADLINE_EXCEEDED within %v of the %v deadline)",
					o, took.Round(time.Millisecond), slack, timeout)
			}
		})
	}
}

// TestHostileWatchFlood: health Watch streams are unauthenticated (load
// balancers send no credentials) and never end while the server runs.
// 8 connections each open as many as SETTINGS_MAX_CONCURRENT_STREAMS allows
// (1000 by default) — 8000 streams for under a megabyte sent. Contract: the
// server's RSS stays below 100 MiB (unauthenticated streams are capped or
// cost next to nothing), every Watch is answered at once (held or refused),
// and honest clients are unaffected.
func TestHostileWatchFlood(t *testing.T) {
	t.Parallel()
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("hostile-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startAbuseServer(t, "-auth-token-file", tokens)
	s.token = "hostile-token"
	s.mustServe(t)
	idle := readProc(t, s.pid)
	goroutinesBefore := s.metric(t, "otlplite_go_goroutines")
	const conns = 8
	const rssBound = 100 << 20
	total := 0
	refused := map[string]int{}
	var attackers []*h2Conn
	for range conns {
		c := dialH2(t, s.addr)
		attackers = append(attackers, c)
		n := int(c.maxConc)
		for range n {
			id, err := c.open(methodHealthWatch, false)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.data(id, true, grpcBody(false, nil)); err != nil {
				t.Fatal(err)
			}
		}
		// Every Watch is answered at once: SERVING (held) or refused.
		if !c.wait(10*time.Second, func() bool {
			k := 0
			for _, st := range c.streams {
				if len(st.data) > 0 || st.ended {
					k++
				}
			}
			return k >= n
		}) {
			t.Errorf("some of %d Watch streams got no answer within 10 s", n)
		}
		c.mu.Lock()
		for _, st := range c.streams {
			switch {
			case len(st.data) > 0 && !st.ended:
				total++
			case st.ended:
				refused[st.outcome().GRPC]++
			}
		}
		c.mu.Unlock()
	}
	after := readProc(t, s.pid)
	goroutines := s.metric(t, "otlplite_go_goroutines")
	perStream := float64(after.rss-idle.rss) / float64(max(total, 1))
	t.Logf("%d Watch streams held on %d connections, refused: %v; RSS %d MiB (idle %d MiB, %.1f KiB per stream held), goroutines %.0f (before %.0f)",
		total, conns, refused, after.rss>>20, idle.rss>>20, perStream/1024, goroutines, goroutinesBefore)
	if total < 100 {
		t.Fatalf("only %d Watch streams held: the attack did not happen", total)
	}
	acked := []string{}
	if honest(t, s, "watch-flood", fmt.Sprintf("%d Watch streams held", total)) {
		acked = append(acked, "watch-flood")
	}
	if after.rss > rssBound {
		t.Errorf("RSS %d MiB with %d unauthenticated Watch streams held (contract: below %d MiB)", after.rss>>20, total, rssBound>>20)
	}
	// An honest health client (a load balancer, a Kubernetes probe) is
	// served too: the flood must not make the server look unhealthy.
	hc := dialH2(t, s.addr)
	start := time.Now()
	hc.headers(1, methodHealthCheck, false)
	hc.data(1, true, grpcBody(false, nil))
	if o := hc.result(1, 5*time.Second); !o.same(grpcOK()) || time.Since(start) > honestLatency {
		t.Errorf("an honest health Check got %+v after %v during the Watch flood (contract: OK within %v)", o, time.Since(start).Round(time.Millisecond), honestLatency)
	}
	start = time.Now()
	hc.headers(3, methodHealthWatch, false)
	hc.data(3, true, grpcBody(false, nil))
	hc.wait(5*time.Second, func() bool { st := hc.stream(3); return len(st.data) > 0 || st.ended })
	if data, ended := hc.received(3, 0); len(data) == 0 || ended {
		hc.mu.Lock()
		o := hc.stream(3).outcome()
		hc.mu.Unlock()
		t.Errorf("an honest health Watch got %+v after %v during the Watch flood (contract: SERVING within %v)", o, time.Since(start).Round(time.Millisecond), honestLatency)
	} else {
		t.Logf("honest health Watch got its first status in %v", time.Since(start).Round(time.Millisecond))
	}
	for _, c := range attackers {
		c.conn.Close()
	}
	requireStored(t, s, "acknowledged", acked)
}

// TestHostileStalledStreamFlood: many connections, each with as many
// streams as SETTINGS_MAX_CONCURRENT_STREAMS allows, each a unary Export
// that declares 1 MiB, sends one byte of it and stalls — held until the 30 s
// body read timeout. Contract: the budget gauge stays near 0 (the server
// holds what was sent), the server's memory grows by at most 25 KiB per
// stalled stream (so it does not allocate for bytes that never came), and
// an honest Export succeeds within 2 s.
func TestHostileStalledStreamFlood(t *testing.T) {
	t.Parallel()
	s := startAbuseServer(t)
	s.mustServe(t)
	idle := readProc(t, s.pid)
	// About 3600 streams (within the 4096 of the stream bound), as many connections as that takes
	// (SETTINGS_MAX_CONCURRENT_STREAMS each), so the fixed costs of the
	// measurement weigh little per stream.
	const streams = 3600
	total := 0
	var attackers []*h2Conn
	msg := append(lengthPrefix(1<<20), 0x0a)
	for total < streams {
		c := dialH2(t, s.addr)
		attackers = append(attackers, c)
		for range int(c.maxConc) {
			id, err := c.open(methodTraces, false)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.data(id, false, msg); err != nil {
				t.Fatal(err)
			}
			total++
		}
	}
	sm := startSampler(t, s)
	acked := []string{}
	if honest(t, s, "stalled-flood", fmt.Sprintf("%d stalled streams", total)) {
		acked = append(acked, "stalled-flood")
	}
	sm.finish(1500 * time.Millisecond)
	answered := 0
	for _, c := range attackers {
		c.mu.Lock()
		for _, st := range c.streams {
			if st.ended {
				answered++
			}
		}
		c.mu.Unlock()
	}
	growth := sm.peakRSS - idle.rss
	t.Logf("%d stalled streams on %d connections (%d already answered): peak budget %.0f bytes, peak RSS %d MiB (idle %d MiB, %.1f KiB per stream), peak goroutines %.0f",
		total, len(attackers), answered, sm.peakBudget, sm.peakRSS>>20, idle.rss>>20, float64(growth)/float64(total)/1024, sm.peakGoroutines)
	if sm.peakBudget > nearZeroBudget {
		t.Errorf("the budget gauge reached %.1f MiB for streams that sent one byte each (contract: below %d KiB)", sm.peakBudget/(1<<20), nearZeroBudget>>10)
	}
	if limit := int64(total) * 25 << 10; growth > limit {
		t.Errorf("RSS grew by %d MiB for %d stalled streams (contract: at most 25 KiB each, %d MiB)", growth>>20, total, limit>>20)
	}
	for _, c := range attackers {
		c.conn.Close()
	}
	requireStored(t, s, "acknowledged", acked)
}

// setNoFile sets the RLIMIT_NOFILE of process pid (soft and hard) with
// prlimit(2).
func setNoFile(t *testing.T, pid int, n uint64) {
	t.Helper()
	lim := struct{ cur, max uint64 }{n, n}
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, uintptr(pid), uintptr(syscall.RLIMIT_NOFILE),
		uintptr(unsafe.Pointer(&lim)), 0, 0, 0); errno != 0 {
		t.Fatalf("prlimit: %v", errno)
	}
}

// TestHostileIdleConnections: every connection holds a file descriptor,
// and an h2c connection that sent its preface is held for -idle-timeout (5
// minutes) even if it never sends a request. The server runs with an fd
// limit of its current use plus 64 (so the test needs 80 connections, not
// the 1M a production limit would take); the attacker opens 80 such
// connections and sends nothing more. Contract: an honest client is still
// served within 2 s (the server limits connections below its fd limit and
// sheds idle ones rather than stop accepting), and it recovers when the
// attacker leaves.
func TestHostileIdleConnections(t *testing.T) {
	t.Parallel()
	s := startAbuseServer(t)
	s.mustServe(t)
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", s.pid))
	if err != nil {
		t.Fatal(err)
	}
	limit := uint64(len(fds) + 64)
	setNoFile(t, s.pid, limit)
	const attackers = 80
	var conns []io.Closer
	defer func() { closeAll(conns) }()
	settings := []byte{0, 0, 0, byte(http2.FrameSettings), 0, 0, 0, 0, 0}
	for range attackers {
		c, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if _, err := io.WriteString(c, http2.ClientPreface+string(settings)); err != nil {
			t.Fatal(err)
		}
	}
	// The server's descriptors, from /proc: a scrape of /metrics would
	// need one too (the admin listener starves with the others).
	inUse := func() int {
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", s.pid))
		if err != nil {
			t.Fatal(err)
		}
		return len(fds)
	}
	deadline := time.Now().Add(2 * time.Second)
	for uint64(inUse()) < limit && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // polling /proc
	}
	t.Logf("fd limit %d (%d in use before the attack); %d idle connections opened; the server has %d descriptors open", limit, len(fds), attackers, inUse())
	took, err := s.honestExportWithin("idle-conns", 3*time.Second)
	acked := []string{}
	switch {
	case err != nil:
		t.Errorf("an honest Export failed after %v while idle connections filled the fd limit: %v", took.Round(time.Millisecond), err)
	case took > honestLatency:
		t.Errorf("an honest Export took %v while idle connections filled the fd limit (contract: %v)", took.Round(time.Millisecond), honestLatency)
		acked = append(acked, "idle-conns")
	default:
		t.Logf("honest Export OK in %v", took.Round(time.Millisecond))
		acked = append(acked, "idle-conns")
	}
	closeAll(conns)
	conns = nil
	// Recovery: once the attacker leaves, the server serves again.
	if _, err := s.honestExport("idle-conns-after"); err != nil {
		t.Errorf("the server does not serve after the idle connections closed: %v", err)
	} else {
		acked = append(acked, "idle-conns-after")
	}
	requireStored(t, s, "acknowledged", acked)
}

// TestHostileUnreadResponses: a zero-window client that never reads
// responses, sending unary gRPC Exports and OTLP/HTTP requests over HTTP/2
// (1000 in all, on one connection), then only answering PINGs. Contract:
// what such a client holds is its streams, not the budget — the gauge
// returns to ~0 once the requests are stored, every request is stored, the
// server's memory grows by at most 32 KiB per unread response, and honest
// clients are served within 2 s — and not for ever: the streams (and their
// handler goroutines) are released once the response write deadline passes
// (the ack write deadline of export streams, -response-write-timeout,
// applied to unary responses too; there is no other default write timeout).
func TestHostileUnreadResponses(t *testing.T) {
	t.Parallel()
	const writeTimeout = 2 * time.Second
	s := startAbuseServer(t, "-response-write-timeout", writeTimeout.String())
	s.mustServe(t)
	idle := readProc(t, s.pid)
	goroutinesBefore := s.metric(t, "otlplite_go_goroutines")
	base := s.metric(t, "otelcol_receiver_accepted_spans_total")
	c, err := dialH2With(s.addr, h2Options{zeroWindow: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.conn.Close()
	n := int(c.maxConc)
	var names []string
	for i := range n {
		name := fmt.Sprintf("unread-%d", i)
		names = append(names, name)
		var id uint32
		var body []byte
		if i%2 == 0 {
			id, err = c.open(methodTraces, false)
			body = grpcBody(false, tracesRequest(nil, name))
		} else {
			id, err = c.open("/v1/traces", false, "content-type", "application/x-protobuf")
			body = tracesRequest(nil, name)
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.send(id, body, true, 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	accepted := func(v float64) bool { return v >= base+float64(n) }
	if v, ok := s.waitMetric(t, 10*time.Second, "otelcol_receiver_accepted_spans_total", accepted); !ok {
		t.Errorf("%.0f of %d requests stored", v-base, n)
	}
	budgetLeft, ok := s.waitMetric(t, 2*time.Second, budgetGauge, func(v float64) bool { return v <= nearZeroBudget })
	if !ok {
		t.Errorf("the budget gauge is at %.0f bytes with %d responses unread (contract: ~0)", budgetLeft, n)
	}
	after := readProc(t, s.pid)
	goroutines := s.metric(t, "otlplite_go_goroutines")
	growth := after.rss - idle.rss
	t.Logf("%d unread responses: budget %.0f bytes, RSS %d MiB (idle %d MiB, %.1f KiB per response), goroutines %.0f (before %.0f)",
		n, budgetLeft, after.rss>>20, idle.rss>>20, float64(growth)/float64(n)/1024, goroutines, goroutinesBefore)
	if limit := int64(n) * 32 << 10; growth > limit {
		t.Errorf("RSS grew by %d MiB for %d unread responses (contract: at most 32 KiB each)", growth>>20, n)
	}
	acked := []string{}
	if honest(t, s, "unread-honest", fmt.Sprintf("%d unread responses", n)) {
		acked = append(acked, "unread-honest")
	}
	if honestHTTP(t, s, "unread-honest-http", fmt.Sprintf("%d unread responses", n)) {
		acked = append(acked, "unread-honest-http")
	}
	// Released: the handlers of the unread responses end.
	wait := writeTimeout*3/2 + 2*time.Second
	released := func(v float64) bool { return v <= goroutinesBefore+20 }
	if v, ok := s.waitMetric(t, wait, "otlplite_go_goroutines", released); !ok {
		t.Errorf("%.0f goroutines (%.0f before) %v after the responses were due: the unread responses are held for ever (contract: released after a %v write deadline)",
			v, goroutinesBefore, wait, writeTimeout)
	}
	c.conn.Close()
	requireStored(t, s, "acknowledged", acked)
	// The client read no response, but the server read every request:
	// each must be stored.
	stored := storedIDs(t, s.dataDir, storage.Traces)
	lost := 0
	for _, name := range names {
		if stored[name] == 0 {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d requests whose responses went unread are not stored", lost, len(names))
	}
}
