//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/otlp-lite/otlp-lite/server"
)

// The flood suite: one unauthenticated client (or a few hundred) holding
// streams, flow-control windows and connections against `otlp-lite serve`
// at its DEFAULT limits. Contract (issue 21, "One memory model,
// published"): whatever the flood, peak RSS stays below floodRSS,
// goroutines below floodGoroutines, and an honest Export succeeds within
// honestLatency. Each test keeps the attack up while the honest client
// runs, then checks the peaks the sampler saw.

const (
	floodRSS        = 450 << 20
	floodGoroutines = 50_000
)

// flood is a set of hand-driven HTTP/2 connections (h2Conn) opened in
// parallel.
type flood struct {
	conns []*h2Conn
}

// dialFlood opens n connections (zeroWindow: never opening a response
// window), 32 at a time, and closes them when the test ends. It fails the
// test if fewer than min connect.
func dialFlood(t *testing.T, addr string, n int, opt h2Options) *flood {
	t.Helper()
	f := &flood{conns: make([]*h2Conn, n)}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if c, err := dialH2With(addr, opt); err == nil {
				f.conns[i] = c
			}
		}()
	}
	wg.Wait()
	live := f.conns[:0]
	for _, c := range f.conns {
		if c != nil {
			live = append(live, c)
		}
	}
	f.conns = live
	t.Cleanup(f.close)
	return f
}

// each runs fn for every connection, in parallel.
func (f *flood) each(fn func(c *h2Conn)) {
	var wg sync.WaitGroup
	for _, c := range f.conns {
		wg.Go(func() { fn(c) })
	}
	wg.Wait()
}

func (f *flood) close() {
	for _, c := range f.conns {
		c.conn.Close()
	}
}

// streams opens as many streams on every connection as the server allows
// (SETTINGS_MAX_CONCURRENT_STREAMS, at most max), calling fn on each after
// its HEADERS; it returns how many were opened.
func (f *flood) streams(path string, max int, fn func(c *h2Conn, id uint32)) int {
	var mu sync.Mutex
	total := 0
	f.each(func(c *h2Conn) {
		n := min(int(c.maxConc), max)
		for range n {
			id, err := c.open(path, false)
			if err != nil {
				return
			}
			if fn != nil {
				fn(c, id)
			}
			mu.Lock()
			total++
			mu.Unlock()
		}
	})
	return total
}

// floodCheck samples the server while an honest client exports, and checks
// the contract: the honest Export OK within honestLatency, peak RSS below
// floodRSS and goroutines below floodGoroutines. It returns the ids
// acknowledged.
func floodCheck(t *testing.T, s *abuseServer, name, during string) []string {
	t.Helper()
	sm := startSampler(t, s)
	var acked []string
	if honest(t, s, name, during) {
		acked = append(acked, name)
	}
	sm.finish(2 * time.Second)
	hwm := readProc(t, s.pid).hwm
	t.Logf("%s: peak RSS %d MiB (VmHWM %d MiB), peak goroutines %.0f, peak budget %.1f MiB",
		during, sm.peakRSS>>20, hwm>>20, sm.peakGoroutines, sm.peakBudget/(1<<20))
	if hwm > floodRSS {
		t.Errorf("%s: peak RSS %d MiB (contract: below %d MiB)", during, hwm>>20, floodRSS>>20)
	}
	if sm.peakGoroutines > floodGoroutines {
		t.Errorf("%s: %.0f goroutines (contract: below %d)", during, sm.peakGoroutines, floodGoroutines)
	}
	return acked
}

// TestFloodIdleStreams (issue 21, finding 1): 10 connections, each opening
// every export stream the server allows, each stream sending 16 empty
// requests, the client never opening a window for the acknowledgements
// (1.3 MB sent in all). On the build before, 180,000 goroutines and 1 GB.
func TestFloodIdleStreams(t *testing.T) {
	s := startAbuseServer(t)
	s.mustServe(t)
	f := dialFlood(t, s.addr, 10, h2Options{zeroWindow: true})
	var reqs []byte
	for i := range 16 {
		reqs = append(reqs, streamRequest(t, uint64(i+1), nil)...)
	}
	n := f.streams(methodStreamTraces, 1000, func(c *h2Conn, id uint32) { c.data(id, false, reqs) })
	acked := floodCheck(t, s, "idle-streams", fmt.Sprintf("%d export streams of 16 unacknowledged requests", n))
	requireStored(t, s, "acknowledged", acked)
}

// TestFloodHeadersOnly (issue 21, finding 1): 40 connections, each opening
// every stream the server allows with HEADERS and nothing else. On the
// build before, 65-80k goroutines and 750 MB.
func TestFloodHeadersOnly(t *testing.T) {
	s := startAbuseServer(t)
	s.mustServe(t)
	f := dialFlood(t, s.addr, 40, h2Options{})
	n := f.streams(methodTraces, 1000, nil)
	acked := floodCheck(t, s, "headers-only", fmt.Sprintf("%d HEADERS-only streams", n))
	requireStored(t, s, "acknowledged", acked)
}

// TestFloodUnreadWindows (issue 21, finding 2): connections each filling
// their connection window with bytes on export streams the server is not
// reading (their request slots are held by acknowledgements the client
// does not take), as many connections as it takes to send 640 MiB (80 at
// the 8 MiB window of the build before, where it cost 795 MB), at most
// the default -max-connections (with the window derived from the budget,
// 256 KiB, it takes 2560).
func TestFloodUnreadWindows(t *testing.T) {
	s := startAbuseServer(t)
	s.mustServe(t)
	probe := dialH2(t, s.addr)
	probe.wait(2*time.Second, func() bool { return probe.connSendWin > 65535 })
	probe.mu.Lock()
	window := probe.connSendWin
	probe.mu.Unlock()
	n := int(min(max((640<<20)/window, 1), 4096))
	f := dialFlood(t, s.addr, n, h2Options{zeroWindow: true})
	var reqs []byte
	for i := range 16 {
		reqs = append(reqs, streamRequest(t, uint64(i+1), nil)...)
	}
	// Then a message declaring the whole limit, sent as far as the
	// windows let it go.
	big := append(lengthPrefix(64<<20), make([]byte, 16<<20)...)
	var mu sync.Mutex
	sent := 0
	f.each(func(c *h2Conn) {
		var ids []uint32
		for range 2 {
			id, err := c.open(methodStreamTraces, false)
			if err != nil {
				return
			}
			c.data(id, false, reqs)
			ids = append(ids, id)
		}
		for _, id := range ids {
			k, _ := c.send(id, big, false, 300*time.Millisecond)
			mu.Lock()
			sent += k
			mu.Unlock()
		}
	})
	acked := floodCheck(t, s, "unread-windows", fmt.Sprintf("%d MiB sent on %d connections' unread streams (connection window %d KiB)", sent>>20, len(f.conns), window>>10))
	requireStored(t, s, "acknowledged", acked)
}

// TestFloodTokenlessWatch (issue 21, finding 3): with -auth-token-file,
// connections that never present a token, each holding one health Watch,
// as many as -max-connections. On the build before, every new client,
// authenticated or not, was reset at accept. Contract: tokenless
// connections have their own share of the limit, so an authenticated
// client still connects and exports within honestLatency.
func TestFloodTokenlessWatch(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("flood-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, maxConns := range []int{24, 4096} {
		t.Run(fmt.Sprint(maxConns), func(t *testing.T) {
			args := []string{"-auth-token-file", tokens}
			if maxConns != 4096 { // 4096 is the default
				args = append(args, "-max-connections", fmt.Sprint(maxConns))
			}
			s := startAbuseServer(t, args...)
			s.token = "flood-token"
			s.mustServe(t)
			// Each connection's Watch is answered before the next
			// connection opens (so a new connection does not shed one
			// that has not opened its stream yet), 32 at a time, a few
			// more than the limit.
			f := &flood{}
			t.Cleanup(f.close)
			var mu sync.Mutex
			var wg sync.WaitGroup
			sem := make(chan struct{}, 32)
			for range maxConns + 8 {
				sem <- struct{}{}
				wg.Go(func() {
					defer func() { <-sem }()
					c, err := dialH2With(s.addr, h2Options{})
					if err != nil {
						return
					}
					mu.Lock()
					f.conns = append(f.conns, c)
					mu.Unlock()
					if id, err := c.open(methodHealthWatch, false); err == nil {
						c.data(id, true, grpcBody(false, nil))
						c.wait(5*time.Second, func() bool { st := c.stream(id); return len(st.data) > 0 || st.ended })
					}
				})
			}
			wg.Wait()
			n := 0
			for _, c := range f.conns {
				if data, ended := c.received(1, 0); len(data) > 0 && !ended && !c.closed() {
					n++
				}
			}
			// Their share is a quarter of the limit (server: the
			// quietest tokenless connection is shed past it).
			if share := maxConns / 4; n > share+1 {
				t.Errorf("%d tokenless connections held a Watch (contract: their share, %d)", n, share)
			}
			acked := floodCheck(t, s, "tokenless-watch", fmt.Sprintf("%d tokenless connections holding a Watch", n))
			requireStored(t, s, "acknowledged", acked)
		})
	}
}

// TestFloodHeaderLists: streams whose header lists decode to near
// -max-header-bytes from a few hundred bytes on the wire (one 4 KB header
// in HPACK's dynamic table, then referenced by index, one byte each), a
// unary Export that never sends its body: each holds its decoded headers
// until the body read timeout, as many streams as the server takes.
func TestFloodHeaderLists(t *testing.T) {
	s := startAbuseServer(t)
	s.mustServe(t)
	f := dialFlood(t, s.addr, 16, h2Options{})
	value := strings.Repeat("h", 4000)
	var kv []string
	// Up to the default -max-header-bytes less room for the rest: the
	// list size counts 32 bytes per field besides name and value.
	for range server.DefaultLimits().MaxHeaderBytes/(4000+3+32) - 2 {
		kv = append(kv, "x-h", value)
	}
	var mu sync.Mutex
	wire := 0
	n := 0
	f.each(func(c *h2Conn) {
		for range int(c.maxConc) {
			c.openMu.Lock()
			id := c.nextID
			c.nextID += 2
			c.wmu.Lock()
			c.hbuf.Reset()
			for _, fld := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", methodTraces},
				{":authority", c.addr}, {"content-type", "application/grpc"}} {
				c.henc.WriteField(hpack.HeaderField{Name: fld[0], Value: fld[1]})
			}
			for i := 0; i < len(kv); i += 2 {
				c.henc.WriteField(hpack.HeaderField{Name: kv[i], Value: kv[i+1]})
			}
			size := c.hbuf.Len()
			err := writeHeaderBlock(c.fr, id, c.hbuf.Bytes(), int(c.peerMaxFrame))
			c.wmu.Unlock()
			c.openMu.Unlock()
			if err != nil {
				return
			}
			mu.Lock()
			wire += size
			n++
			mu.Unlock()
		}
	})
	acked := floodCheck(t, s, "header-lists", fmt.Sprintf("%d streams of %d KiB header lists (%d KiB on the wire in all)", n, len(kv)/2*4000>>10, wire>>10))
	requireStored(t, s, "acknowledged", acked)
}

// writeHeaderBlock writes block as a HEADERS frame and CONTINUATION frames
// of at most frame bytes each, without END_STREAM.
func writeHeaderBlock(fr *http2.Framer, id uint32, block []byte, frame int) error {
	first := min(frame, len(block))
	err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block[:first], EndHeaders: first == len(block)})
	for off := first; err == nil && off < len(block); off += frame {
		end := min(off+frame, len(block))
		err = fr.WriteContinuation(id, end == len(block), block[off:end])
	}
	return err
}
