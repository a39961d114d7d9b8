package otlpclient

import (
	"context"
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// Dial connects to addr with d and, if rtt is positive, returns a connection
// that adds rtt to every round trip: each byte written reaches the peer
// rtt/2 later than it would, and each byte the peer sends is readable rtt/2
// later.
//
// Bytes are delayed, not the reader or the writer: a chunk is timestamped
// when it is written (or arrives) and released when its time comes, while
// more chunks queue behind it, as on a long link. Write never blocks, so
// throughput is not capped at one buffer per delay; what limits the bytes
// in flight is the protocol above, here HTTP/2 flow control, exactly as on
// a real long-distance connection. (Sleeping in Read or Write instead
// would cap a connection at one buffer per rtt/2.)
func Dial(ctx context.Context, d *net.Dialer, network, addr string, rtt time.Duration) (net.Conn, error) {
	return dialRTT(ctx, d.DialContext, network, addr, rtt)
}

func dialRTT(ctx context.Context, dial DialFunc, network, addr string, rtt time.Duration) (net.Conn, error) {
	c, err := dial(ctx, network, addr)
	if err != nil || rtt <= 0 {
		return c, err
	}
	return newDelayConn(c, rtt/2), nil
}

// delayConn is a net.Conn whose two directions each pass through a delay
// line.
type delayConn struct {
	net.Conn
	out *delayLine // our writes on their way to Conn

	mu       sync.Mutex
	cond     *sync.Cond
	ready    []byte // delayed incoming bytes, readable now
	readErr  error  // the peer's EOF or error, delivered after the data
	closed   bool
	deadline time.Time
	timer    *time.Timer
}

func newDelayConn(c net.Conn, oneWay time.Duration) *delayConn {
	dc := &delayConn{Conn: c}
	dc.cond = sync.NewCond(&dc.mu)
	dc.out = newDelayLine(oneWay, func(b []byte, err error) error {
		if err != nil {
			return err
		}
		_, werr := c.Write(b)
		return werr
	})
	in := newDelayLine(oneWay, dc.deliver)
	go dc.readFromPeer(in)
	return dc
}

// readFromPeer moves what arrives from the peer into the incoming delay
// line, stamped with its arrival time.
func (dc *delayConn) readFromPeer(in *delayLine) {
	for {
		buf := make([]byte, 64<<10)
		n, err := dc.Conn.Read(buf)
		if n > 0 {
			in.push(buf[:n], nil)
		}
		if err != nil {
			in.push(nil, err)
			in.close()
			return
		}
	}
}

// deliver is the incoming line's sink: delayed bytes become readable.
func (dc *delayConn) deliver(b []byte, err error) error {
	dc.mu.Lock()
	dc.ready = append(dc.ready, b...)
	if err != nil && dc.readErr == nil {
		dc.readErr = err
	}
	dc.cond.Broadcast()
	dc.mu.Unlock()
	return nil
}

func (dc *delayConn) Read(p []byte) (int, error) {
	dc.mu.Lock()
	defer dc.mu.Unlock()
	for len(dc.ready) == 0 {
		switch {
		case dc.closed:
			return 0, net.ErrClosed
		case dc.readErr != nil:
			return 0, dc.readErr
		case !dc.deadline.IsZero() && !time.Now().Before(dc.deadline):
			return 0, os.ErrDeadlineExceeded
		}
		dc.cond.Wait()
	}
	n := copy(p, dc.ready)
	// Shift rather than reslice so the buffer is reused instead of
	// growing without bound.
	m := copy(dc.ready, dc.ready[n:])
	dc.ready = dc.ready[:m]
	return n, nil
}

// Write queues a copy of p for release after the delay and never blocks.
// An error of an earlier delayed write is returned by the next Write.
func (dc *delayConn) Write(p []byte) (int, error) {
	if err := dc.out.push(append([]byte(nil), p...), nil); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (dc *delayConn) Close() error {
	dc.mu.Lock()
	dc.closed = true
	dc.cond.Broadcast()
	dc.mu.Unlock()
	dc.out.close()
	return dc.Conn.Close()
}

func (dc *delayConn) SetDeadline(t time.Time) error {
	dc.SetReadDeadline(t)
	return dc.SetWriteDeadline(t)
}

// SetWriteDeadline is accepted and has nothing to bound: Write never blocks.
func (dc *delayConn) SetWriteDeadline(time.Time) error { return nil }

func (dc *delayConn) SetReadDeadline(t time.Time) error {
	dc.mu.Lock()
	defer dc.mu.Unlock()
	dc.deadline = t
	if dc.timer != nil {
		dc.timer.Stop()
	}
	if !t.IsZero() {
		dc.timer = time.AfterFunc(time.Until(t), func() {
			dc.mu.Lock()
			dc.cond.Broadcast()
			dc.mu.Unlock()
		})
	}
	return nil
}

// delayLine releases chunks to sink, in order, delay after they were
// pushed. One goroutine per line sleeps until the oldest chunk is due and
// then releases every chunk that is due, so the line's throughput is
// whatever sink can take.
type delayLine struct {
	delay time.Duration
	sink  func([]byte, error) error

	mu     sync.Mutex
	cond   *sync.Cond
	q      []delayedChunk
	closed bool
	err    error
}

type delayedChunk struct {
	b   []byte
	err error
	due time.Time
}

func newDelayLine(delay time.Duration, sink func([]byte, error) error) *delayLine {
	l := &delayLine{delay: delay, sink: sink}
	l.cond = sync.NewCond(&l.mu)
	go l.run()
	return l
}

func (l *delayLine) push(b []byte, err error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return l.err
	}
	if l.closed {
		return net.ErrClosed
	}
	l.q = append(l.q, delayedChunk{b: b, err: err, due: time.Now().Add(l.delay)})
	l.cond.Signal()
	return nil
}

func (l *delayLine) close() {
	l.mu.Lock()
	l.closed = true
	l.cond.Signal()
	l.mu.Unlock()
}

func (l *delayLine) run() {
	var batch []delayedChunk
	for {
		l.mu.Lock()
		for len(l.q) == 0 && !l.closed {
			l.cond.Wait()
		}
		if len(l.q) == 0 {
			l.mu.Unlock()
			return
		}
		due := l.q[0].due
		l.mu.Unlock()
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		now := time.Now()
		l.mu.Lock()
		i := 0
		for i < len(l.q) && !l.q[i].due.After(now) {
			i++
		}
		batch = append(batch[:0], l.q[:i]...)
		clear(l.q[:i])
		l.q = l.q[i:]
		if len(l.q) == 0 {
			l.q = l.q[:0:0] // let the drained backing array go
		}
		l.mu.Unlock()
		for _, c := range batch {
			if err := l.sink(c.b, c.err); err != nil {
				l.mu.Lock()
				if l.err == nil {
					l.err = err
				}
				l.q = nil
				l.closed = true
				l.mu.Unlock()
				return
			}
		}
		clear(batch)
	}
}

var _ io.ReadWriteCloser = (*delayConn)(nil)
