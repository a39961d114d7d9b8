package server

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
)

// pipeListener is an in-memory listener of net.Pipe connections, for tests
// in a synctest bubble: a goroutine blocked on a pipe is durably blocked, so
// fake time advances past read-header, idle and max-age deadlines at once.
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
	dials  atomic.Int64
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// DialContext connects to the listener; it fails once the listener is
// closed, as a refused TCP connection does.
func (l *pipeListener) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
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

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// servePipe serves h with cfg on a pipeListener and returns it with the
// server and an h2c client of it (base URL "http://pipe"). Call it inside a
// synctest bubble; cleanup closes all three.
func servePipe(t *testing.T, h http.Handler, cfg Config) (*pipeListener, *Server, *http.Client) {
	t.Helper()
	ln := newPipeListener()
	srv := New(h, cfg)
	done := make(chan struct{})
	go func() { srv.Serve(ln); close(done) }()
	tr := &http.Transport{Protocols: new(http.Protocols), DialContext: ln.DialContext}
	tr.Protocols.SetUnencryptedHTTP2(true)
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		srv.Close()
		<-done
	})
	return ln, srv, &http.Client{Transport: tr}
}
