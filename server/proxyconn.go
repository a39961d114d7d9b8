package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// ProxyProtocol configures the PROXY protocol (HAProxy's, versions 1 and
// 2) on every listener of a Server. It is off unless Trusted or TrustUnix
// is set.
//
// A connection from a trusted peer must begin with a PROXY header, as on
// an HAProxy listener with `tcp-request connection expect-proxy layer4 if
// { src TRUSTED }` (or `accept-proxy`) and an nginx one with `listen ...
// proxy_protocol`: a trusted peer is a proxy, and a connection from it
// without a header is refused (reason missing) rather than taken for the
// proxy's own. The client address the header names is then the
// connection's RemoteAddr, so it is what the request log, refusal logs and
// whatever is counted per connection see; a LOCAL command (the proxy's
// health check) keeps the proxy's address. A connection from any other
// peer that begins with a PROXY header is refused (untrusted): its header
// is never believed.
type ProxyProtocol struct {
	// Trusted are the networks of the proxies (load balancers) allowed to
	// send PROXY headers; a single address is a /32 or /128.
	Trusted []netip.Prefix
	// TrustUnix trusts connections accepted on Unix sockets (a proxy on
	// the same host, such as HAProxy with a unix@ server).
	TrustUnix bool
	// HeaderTimeout bounds the arrival of a trusted connection's header;
	// 0 means DefaultProxyHeaderTimeout.
	HeaderTimeout time.Duration
}

// DefaultProxyHeaderTimeout is how long a trusted peer has to send its
// PROXY header: a proxy sends it with, or before, the client's first
// bytes, in one packet, so 5 s is many round trips; a peer that sends less
// holds one connection (in its idle state, first to be shed at
// MaxConnections) for at most this long.
const DefaultProxyHeaderTimeout = 5 * time.Second

// Enabled reports whether any peer is trusted.
func (p ProxyProtocol) Enabled() bool { return len(p.Trusted) > 0 || p.TrustUnix }

// ParseTrustedProxies parses a comma-separated list of CIDRs (10.0.0.0/8),
// addresses (a /32 or /128) and "unix" (TrustUnix), as the
// -proxy-protocol-trusted-cidrs flag takes it. Empty is none.
func ParseTrustedProxies(s string) (ProxyProtocol, error) {
	var p ProxyProtocol
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		switch {
		case item == "":
		case item == "unix":
			p.TrustUnix = true
		case strings.Contains(item, "/"):
			pfx, err := netip.ParsePrefix(item)
			if err != nil {
				return p, fmt.Errorf("bad trusted proxy %q: %v", item, err)
			}
			if pfx != pfx.Masked() {
				return p, fmt.Errorf("bad trusted proxy %q: host bits set (did you mean %s?)", item, pfx.Masked())
			}
			p.Trusted = append(p.Trusted, pfx)
		default:
			a, err := netip.ParseAddr(item)
			if err != nil {
				return p, fmt.Errorf("bad trusted proxy %q: want a CIDR, an address or unix", item)
			}
			a = a.Unmap()
			p.Trusted = append(p.Trusted, netip.PrefixFrom(a, a.BitLen()))
		}
	}
	return p, nil
}

// proxyAcceptor is a Server's PROXY protocol state: the trust rules and
// the counters.
type proxyAcceptor struct {
	cfg     ProxyProtocol
	timeout time.Duration
	log     *slog.Logger
	headers [3]*metrics.Counter // by version
	refused map[string]*metrics.Counter
}

// The reasons a connection is refused for its PROXY header.
const (
	proxyUntrusted = "untrusted" // a header from a peer not trusted
	proxyMissing   = "missing"   // a trusted peer's connection without one
	proxyMalformed = "malformed" // not the protocol, or cut short by EOF
	proxyTooLarge  = "too_large" // a v2 header past maxProxyV2
	proxyTimeout   = "timeout"   // not complete within HeaderTimeout
)

func newProxyAcceptor(cfg ProxyProtocol, set *metrics.Set, log *slog.Logger) *proxyAcceptor {
	a := &proxyAcceptor{cfg: cfg, timeout: cfg.HeaderTimeout, log: log, refused: map[string]*metrics.Counter{}}
	if a.timeout <= 0 {
		a.timeout = DefaultProxyHeaderTimeout
	}
	// otlplite_proxy_protocol_headers_total{version}: PROXY headers
	// accepted from trusted peers.
	a.headers[1] = set.GetOrCreateCounter(`otlplite_proxy_protocol_headers_total{version="1"}`)
	a.headers[2] = set.GetOrCreateCounter(`otlplite_proxy_protocol_headers_total{version="2"}`)
	// otlplite_proxy_protocol_refused_total{reason}: connections closed
	// for their PROXY header (the reasons above).
	for _, r := range []string{proxyUntrusted, proxyMissing, proxyMalformed, proxyTooLarge, proxyTimeout} {
		a.refused[r] = set.GetOrCreateCounter(`otlplite_proxy_protocol_refused_total{reason="` + r + `"}`)
	}
	return a
}

// trusts reports whether the peer at addr may send a PROXY header.
func (a *proxyAcceptor) trusts(addr net.Addr) bool {
	switch addr := addr.(type) {
	case *net.TCPAddr:
		ip, ok := netip.AddrFromSlice(addr.IP)
		if !ok {
			return false
		}
		ip = ip.Unmap()
		for _, p := range a.cfg.Trusted {
			if p.Contains(ip) {
				return true
			}
		}
		return false
	case unixPeer, *net.UnixAddr:
		return a.cfg.TrustUnix
	}
	return false
}

// proxyListener gives each accepted connection the PROXY protocol's rules.
type proxyListener struct {
	net.Listener // a bufferedListener
	a            *proxyAcceptor
}

func (l proxyListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	bc := c.(*bufferedConn)
	return &proxyConn{bufferedConn: bc, a: l.a, trusted: l.a.trusts(bc.RemoteAddr())}, nil
}

// errProxyRefused is what reads return on a connection refused for its
// PROXY header (it is closed too).
var errProxyRefused = errors.New("connection refused for its PROXY header")

// proxyConn reads its PROXY header, if it must have one, or refuses one,
// if it must not, before its first byte is read. Nothing is read in
// Accept, which would let one slow peer stall every accept: a trusted
// connection's header is read when net/http first asks for its
// RemoteAddr (the first thing its connection goroutine does) or reads,
// under HeaderTimeout; an untrusted connection's first bytes are checked
// on its first read, under the read deadline net/http has set for it
// (ReadHeaderTimeout, or the TLS handshake's).
type proxyConn struct {
	*bufferedConn
	a       *proxyAcceptor
	trusted bool

	once   sync.Once
	remote net.Addr // the client's address, once the header is read
	err    error    // why reads fail: the connection was refused
}

// RemoteAddr is the client's address the PROXY header names (trusted
// peers), else the peer's.
func (c *proxyConn) RemoteAddr() net.Addr {
	if !c.trusted {
		return c.bufferedConn.RemoteAddr()
	}
	c.once.Do(c.readHeader)
	return c.remote
}

func (c *proxyConn) Read(p []byte) (int, error) {
	c.once.Do(c.check)
	if c.err != nil {
		return 0, c.err
	}
	return c.bufferedConn.Read(p)
}

func (c *proxyConn) check() {
	if c.trusted {
		c.readHeader()
		return
	}
	// Enough of the first bytes to tell a PROXY signature: every
	// protocol served here sends more than 12 bytes first (a TLS
	// ClientHello, the 24-byte HTTP/2 preface, an HTTP/1 request line),
	// so peeking never waits for bytes a client withholds.
	r := c.bufferedConn.r
	b, err := r.Peek(1)
	for err == nil && proxyHeaderPrefix(b) && !startsProxyHeader(b) {
		b, err = r.Peek(len(b) + 1) // a proper prefix of a signature: < 12 bytes
	}
	if err != nil {
		// EOF, a deadline: net/http's read sees it again and ends the
		// connection as it would have.
		return
	}
	if startsProxyHeader(b) {
		c.refuse(proxyUntrusted, errors.New("PROXY header from a peer not in the trusted list"))
	}
}

// startsProxyHeader reports whether b begins with a PROXY signature.
func startsProxyHeader(b []byte) bool {
	return bytes.HasPrefix(b, proxyV1Prefix) || bytes.HasPrefix(b, proxyV2Sig)
}

// readHeader reads a trusted connection's PROXY header and sets remote,
// or refuses the connection.
func (c *proxyConn) readHeader() {
	peer := c.bufferedConn.RemoteAddr()
	c.remote = peer
	if !c.trusted {
		return
	}
	// Nothing else has set a deadline yet: net/http asks for RemoteAddr
	// before its first read, and sets its own deadlines after.
	c.bufferedConn.SetReadDeadline(time.Now().Add(c.a.timeout))
	defer c.bufferedConn.SetReadDeadline(time.Time{})
	r := c.bufferedConn.r
	b, err := r.Peek(1)
	for err == nil {
		h, n, perr := parseProxyHeader(b)
		switch {
		case perr == errProxyShort:
			// More, at least one byte more: Peek returns what is
			// buffered once it has the bytes asked for.
			b, err = r.Peek(min(len(b)+1, maxProxyV2))
			if err == nil {
				b, _ = r.Peek(r.Buffered())
			}
			continue
		case perr == errProxyMissing:
			c.refuse(proxyMissing, perr)
		case perr == errProxyTooLarge:
			c.refuse(proxyTooLarge, perr)
		case perr != nil:
			c.refuse(proxyMalformed, perr)
		default:
			r.Discard(n)
			c.a.headers[h.version].Inc()
			if !h.local {
				c.remote = net.TCPAddrFromAddrPort(netip.AddrPortFrom(h.src.Addr().Unmap(), h.src.Port()))
			}
		}
		return
	}
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		c.refuse(proxyTimeout, fmt.Errorf("PROXY header not complete within %v", c.a.timeout))
	case err == io.EOF && r.Buffered() > 0:
		c.refuse(proxyMalformed, errors.New("connection closed within its PROXY header"))
	default:
		// Closed before sending anything (a TCP health check), or shed:
		// nothing to refuse; reads fail with the same error.
		c.err = err
	}
}

// refuse closes the connection for its PROXY header, counting and logging
// why; later reads fail.
func (c *proxyConn) refuse(reason string, err error) {
	c.err = errProxyRefused
	c.a.refused[reason].Inc()
	c.a.log.Debug("connection refused for its PROXY header", "peer", c.bufferedConn.RemoteAddr().String(), "reason", reason, "err", err)
	c.bufferedConn.Close()
}
