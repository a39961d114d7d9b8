package main

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
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
// by a later Write instead of being lost, and Close does not hang on a
// peer that never reads.
func TestCoalescingConnReportsWriteErrors(t *testing.T) {
	a, b := net.Pipe()
	c := newCoalescingConn(a)
	b.Close()
	var err error
	deadline := time.Now().Add(5 * time.Second)
	for err == nil && time.Now().Before(deadline) {
		_, err = c.Write([]byte("data"))
		time.Sleep(time.Millisecond)
	}
	if !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("err = %v, want the pipe's error", err)
	}

	x, _ := net.Pipe() // nobody reads
	c = newCoalescingConn(x)
	c.Write(make([]byte, 1000))
	start := time.Now()
	c.Close()
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("Close took %v with an unread peer", d)
	}
}
