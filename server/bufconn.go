package server

import (
	"bufio"
	"net"
	"time"
)

// readBufferSize is the read buffer per connection. net/http's HTTP/2
// server reads each frame with two unbuffered reads (9-byte header, then
// payload): about 2 syscalls per 16 KiB frame a gRPC client sends. Reading
// through 64 KiB cuts that several-fold; measured with bench/cmd/sidebyside,
// read syscalls were 14% of server CPU at 500 spans per request.
const readBufferSize = 64 << 10

// bufferedListener wraps accepted connections with a read buffer.
type bufferedListener struct{ net.Listener }

func (l bufferedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &bufferedConn{Conn: newCoalescingConn(c), r: bufio.NewReaderSize(c, readBufferSize)}, nil
}

// bufferedConn is a net.Conn whose reads go through a buffer. Deadlines
// still apply: a read that needs the socket blocks on it with the
// connection's deadline.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// CloseWrite keeps net/http's graceful HTTP/1 close (a half-close before
// closing) working through the wrapper.
func (c *bufferedConn) CloseWrite() error {
	raw := c.Conn
	if cc, ok := raw.(*coalescingConn); ok {
		// The response net/http just wrote may still be pending: send it
		// before the half-close, or the client sees EOF instead of it.
		cc.drain(time.Second)
		raw = cc.Conn
	}
	if cw, ok := raw.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
