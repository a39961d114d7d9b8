// Package pipenet is an in-memory network for tests in a synctest bubble:
// a Listener of net.Pipe connections. A goroutine blocked on a pipe is
// durably blocked, so fake time advances past read-header, idle, max-age
// and retry deadlines at once, and nothing listens on a real port.
package pipenet

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
)

// Listener is a net.Listener whose connections come from DialContext.
type Listener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
	dials  atomic.Int64
}

// Listen returns an open Listener.
func Listen() *Listener {
	return &Listener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

// Accept implements net.Listener.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

// Close implements net.Listener; it may be called more than once.
func (l *Listener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

// Addr implements net.Listener.
func (l *Listener) Addr() net.Addr { return addr{} }

// DialContext connects to the listener (network and address are ignored);
// it fails once the listener is closed, as a refused TCP connection does.
// Its signature is net.Dialer.DialContext's, for http.Transport.
func (l *Listener) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	client, srv := net.Pipe()
	select {
	case l.conns <- srv:
		l.dials.Add(1)
		return client, nil
	case <-l.closed:
	case <-ctx.Done():
	}
	client.Close()
	srv.Close()
	return nil, net.ErrClosed
}

// Dials returns how many connections DialContext made.
func (l *Listener) Dials() int64 { return l.dials.Load() }

type addr struct{}

func (addr) Network() string { return "pipe" }
func (addr) String() string  { return "pipe" }
