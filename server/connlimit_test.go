package server

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// startLimited serves h with MaxConnections = maxConns on a free port.
func startLimited(t *testing.T, h http.Handler, maxConns int) (string, *metrics.Set, *Server) {
	t.Helper()
	limits := DefaultLimits()
	limits.MaxConnections = maxConns
	reg := metrics.NewSet()
	srv := New(h, Config{Limits: &limits, Metrics: reg})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), reg, srv
}

// rawGet sends one keep-alive HTTP/1.1 request on c and reads the answer's
// status line, or returns the read error.
func rawGet(c net.Conn, r *bufio.Reader) (string, error) {
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return "", err
	}
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		return "", err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.Status, nil
}

func dialConn(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

// At MaxConnections, a new connection makes room by closing the oldest idle
// one; when every connection is busy, the new one is closed instead.
func TestMaxConnectionsShedsOldestIdle(t *testing.T) {
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/busy" {
			<-release
		}
	})
	addr, reg, srv := startLimited(t, h, 2)
	oldest, oldestR := dialConn(t, addr)
	if _, err := rawGet(oldest, oldestR); err != nil {
		t.Fatal(err)
	}
	// The server marks a connection idle just after its response: wait
	// for it, so that "oldest idle" is this one.
	waitFor(t, func() bool { return connsIn(srv.conns, http.StateIdle) == 1 })
	newer, newerR := dialConn(t, addr)
	if _, err := rawGet(newer, newerR); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return connsIn(srv.conns, http.StateIdle) == 2 })
	third, thirdR := dialConn(t, addr)
	if st, err := rawGet(third, thirdR); err != nil || st != "200 OK" {
		t.Fatalf("a new connection at the limit: %q %v", st, err)
	}
	// The oldest idle connection was closed; the newer one still serves.
	oldest.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := oldestR.ReadByte(); !errors.Is(err, io.EOF) && !isReset(err) {
		t.Fatalf("oldest idle connection: read %v, want it closed", err)
	}
	if _, err := rawGet(newer, newerR); err != nil {
		t.Fatalf("the newer idle connection was closed too: %v", err)
	}

	// Both open connections busy: a new one is refused.
	for _, c := range []net.Conn{newer, third} {
		io.WriteString(c, "GET /busy HTTP/1.1\r\nHost: x\r\n\r\n")
	}
	waitFor(t, func() bool { return connsIn(srv.conns, http.StateActive) == 2 })
	refused, _ := dialConn(t, addr)
	refused.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := refused.Read(make([]byte, 1)); n != 0 || (!errors.Is(err, io.EOF) && !isReset(err)) {
		t.Fatalf("a connection over the limit with none idle: read %d, %v; want it closed", n, err)
	}
	close(release)
	if !strings.Contains(scrape(reg), `otlplite_connections_dropped_total{reason="shed_idle"} 1`) ||
		!strings.Contains(scrape(reg), `otlplite_connections_dropped_total{reason="refused"} 1`) {
		t.Fatalf("metrics:\n%s", scrape(reg))
	}
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op)
}

func scrape(reg *metrics.Set) string {
	var b strings.Builder
	reg.WritePrometheus(&b)
	return b.String()
}

// connsIn counts the connections in state.
func connsIn(t *connTracker, state http.ConnState) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, tc := range t.conns {
		if tc.state == state {
			n++
		}
	}
	return n
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 10 s")
		}
		time.Sleep(time.Millisecond) // polling state the server does not signal
	}
}
