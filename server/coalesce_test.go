package server

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestCoalescingConnKeepsOrderAndFlushesOnClose writes many small chunks
// from several goroutines in turn and checks the peer reads every byte, in
// order, including what was pending when Close was called.
func TestCoalescingConnKeepsOrderAndFlushesOnClose(t *testing.T) {
	a, b := net.Pipe()
	c := newCoalescingConn(a)
	var want bytes.Buffer
	got := make(chan []byte, 1)
	go func() {
		data, _ := io.ReadAll(b)
		got <- data
	}()
	var mu sync.Mutex // writers take turns, as net/http's one writer does
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				mu.Lock()
				chunk := bytes.Repeat([]byte{byte(g*31 + i)}, 1+i%50)
				want.Write(chunk)
				if _, err := c.Write(chunk); err != nil {
					t.Error(err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if data := <-got; !bytes.Equal(data, want.Bytes()) {
		t.Fatalf("peer read %d bytes, want %d (or order differs)", len(data), want.Len())
	}
	if _, err := c.Write([]byte("x")); err == nil {
		t.Fatal("write after Close succeeded")
	}
}

// TestCoalescingConnReportsWriteErrors: a failed socket write is returned
// by the next Write instead of being lost, and Close gives up on a peer that
// never reads after a second.
func TestCoalescingConnReportsWriteErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := net.Pipe()
		c := newCoalescingConn(a)
		b.Close()
		if _, err := c.Write([]byte("data")); err != nil {
			t.Fatalf("first Write: %v, want it buffered", err)
		}
		synctest.Wait() // the flusher has written and failed
		if _, err := c.Write([]byte("data")); !errors.Is(err, io.ErrClosedPipe) {
			t.Fatalf("Write after the socket failed: %v, want the pipe's error", err)
		}

		x, y := net.Pipe() // nobody reads y
		defer y.Close()
		c = newCoalescingConn(x)
		c.Write(make([]byte, 1000))
		start := time.Now()
		c.Close()
		if d := time.Since(start); d != time.Second {
			t.Fatalf("Close took %v with an unread peer, want 1s", d)
		}
	})
}
