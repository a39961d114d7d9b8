package otlpclient

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/handler"
)

// echoServer echoes every connection.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

// TestDialAddsRoundTrip: a ping-pong over the delayed connection takes at
// least the added round-trip time, and pipelined messages share the delay
// instead of paying it one after the other (Write does not block, the
// bytes queue on the "link").
func TestDialAddsRoundTrip(t *testing.T) {
	const rtt = 200 * time.Millisecond
	c, err := Dial(context.Background(), &net.Dialer{}, "tcp", echoServer(t), rtt)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 4)

	start := time.Now()
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("%q %v", buf, err)
	}
	if d := time.Since(start); d < rtt {
		t.Fatalf("round trip took %v, want at least %v", d, rtt)
	}

	// Twenty 64 KiB writes, all in flight at once: Write returns at once,
	// and everything comes back after about one round trip, not twenty.
	const n, size = 20, 64 << 10
	msg := make([]byte, size)
	start = time.Now()
	for range n {
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d >= rtt {
		t.Fatalf("writes blocked for %v: the delay must not hold the writer", d)
	}
	if _, err := io.ReadFull(c, make([]byte, n*size)); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < rtt || d >= n*rtt/2 {
		t.Fatalf("%d pipelined messages took %v with a %v round trip", n, d, rtt)
	}
}

func TestDialReadDeadlineAndClose(t *testing.T) {
	c, err := Dial(context.Background(), &net.Dialer{}, "tcp", echoServer(t), 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(30 * time.Millisecond))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("read past the deadline succeeded")
	}
	c.SetReadDeadline(time.Time{})
	done := make(chan error)
	go func() { _, err := c.Read(make([]byte, 1)); done <- err }()
	c.Close()
	if err := <-done; err == nil {
		t.Fatal("read after close succeeded")
	}
	if _, err := c.Write([]byte("x")); err == nil {
		t.Fatal("write after close succeeded")
	}
}

// TestStreamOverDelayedConnection runs an exporter over a 40ms link: the
// stream pipelines, so 50 requests need far fewer than 50 round trips.
func TestStreamOverDelayedConnection(t *testing.T) {
	sink := newCountSink()
	addr := startServer(t, newHandler(sink, handler.StreamConfig{}))
	e := NewStreamExporter(StreamConfig{Config: Config{Endpoint: addr, Latency: 40 * time.Millisecond}})
	o := newOutcomes()
	for i := uint64(1); i <= 50; i++ {
		if err := e.Send(context.Background(), testRequest(i, 10), o.done(i)); err != nil {
			t.Fatal(err)
		}
	}
	closeExporter(t, e)
	o.requireAllAcked(t, 50)
}
