package otlpclient

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"
)

// An endpoint is where a client connects, written as users write it for
// the OpenTelemetry exporters and grpc-go:
//
//	host:port            TCP (:port: the local system, as net.Dial reads it)
//	unix:PATH            a Unix domain socket, PATH relative or absolute
//	unix:///ABS/PATH     the same, in URL form (an absolute PATH only)
//
// This file is the one place that reads an endpoint and dials it: Config,
// the exporters, the clients built here, forward's destinations and the
// commands all go through ParseEndpoint and DialEndpoint.

// UnixAuthority is the authority (HTTP/2 :authority, HTTP/1.1 Host) of
// the requests sent over a Unix socket: a path is no host, HTTP/1.1 needs
// a Host header all the same (RFC 9112 section 3.2) and HTTP/2 an
// :authority, and "localhost" is what grpc-go sends for a unix: target and
// what curl --unix-socket users write. It is also the host of the URLs
// built for such an endpoint (AuthorityOf).
const UnixAuthority = "localhost"

// maxSocketPath is the longest socket path a dial can use: Linux's
// sockaddr_un.sun_path holds 108 bytes with the terminating NUL (macOS's,
// 104); a longer path fails at connect with an EINVAL that names nothing,
// so it is refused when the endpoint is read.
const maxSocketPath = 107

// Endpoint is a parsed endpoint: Network is "tcp" or "unix", Address the
// host:port or the socket's path.
type Endpoint struct {
	Network string
	Address string
}

// IsUnix reports whether the endpoint is a Unix domain socket.
func (e Endpoint) IsUnix() bool { return e.Network == "unix" }

// String is the endpoint as ParseEndpoint reads it: host:port or
// unix:PATH (unix://PATH for a PATH starting with //, which unix:PATH
// would make a URL with a host).
func (e Endpoint) String() string {
	if e.IsUnix() {
		if strings.HasPrefix(e.Address, "//") {
			return "unix://" + e.Address
		}
		return "unix:" + e.Address
	}
	return e.Address
}

// Authority is the host[:port] of the endpoint's URLs and requests:
// host:port itself, or UnixAuthority for a socket.
func (e Endpoint) Authority() string {
	if e.IsUnix() {
		return UnixAuthority
	}
	return e.Address
}

// EndpointError is ParseEndpoint's error: "cannot parse endpoint
// "ENDPOINT": REASON (want host:port, unix:PATH or unix:///ABSOLUTE/PATH)".
type EndpointError struct {
	Endpoint string
	Reason   string
}

func (e *EndpointError) Error() string {
	return fmt.Sprintf("cannot parse endpoint %q: %s (want host:port, unix:PATH or unix:///ABSOLUTE/PATH)", e.Endpoint, e.Reason)
}

// ParseEndpoint reads s, host:port or unix:PATH (see the top of this
// file). Its errors are *EndpointError.
func ParseEndpoint(s string) (Endpoint, error) {
	bad := func(reason string) (Endpoint, error) {
		return Endpoint{}, &EndpointError{Endpoint: s, Reason: reason}
	}
	if rest, ok := strings.CutPrefix(s, "unix:"); ok {
		path := rest
		if after, ok := strings.CutPrefix(rest, "//"); ok {
			// URL form, as grpc-go reads it: the authority must be
			// empty, so the path is absolute.
			if !strings.HasPrefix(after, "/") {
				return bad("unix://HOST/... names a host, a socket has none")
			}
			path = after
		}
		switch {
		case path == "":
			return bad("the socket path is empty")
		case len(path) > maxSocketPath:
			return bad(fmt.Sprintf("the socket path is %d bytes, more than the %d a Unix socket address holds: use a shorter (or relative) path", len(path), maxSocketPath))
		case strings.ContainsFunc(path, func(r rune) bool { return r < ' ' || r == 0x7f || r == '?' || r == '#' }):
			// NUL ends sun_path, a control character would break the
			// lines it is logged on; ? and # would be a URL's query or
			// fragment written after the path by mistake.
			return bad("the socket path has a control character, ? or #")
		}
		return Endpoint{Network: "unix", Address: path}, nil
	}
	if strings.Contains(s, "://") {
		return bad("it is a URL")
	}
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return bad(addrErrText(err))
	}
	// An empty host is the local system, as net.Dial reads it (and as
	// host:port endpoints were taken before unix:PATH): :4317 is
	// serve -grpc-addr's own default spelling. An empty port dials
	// nothing.
	if port == "" {
		return bad("no port")
	}
	return Endpoint{Network: "tcp", Address: s}, nil
}

// addrErrText is err's text without the address net repeats in it.
func addrErrText(err error) string {
	if ae, ok := err.(*net.AddrError); ok {
		return ae.Err
	}
	return err.Error()
}

// AuthorityOf is ParseEndpoint(endpoint).Authority(), or endpoint itself
// when it does not parse (the request then fails in the dial, which says
// why).
func AuthorityOf(endpoint string) string {
	e, err := ParseEndpoint(endpoint)
	if err != nil {
		return endpoint
	}
	return e.Authority()
}

// DialEndpoint returns the DialFunc of the connections to endpoint, made
// with base. For host:port (or an empty endpoint: a client given a URL)
// it is base itself, nil included (the client's default: TCP); for a
// socket it dials the socket with base (nil: a net.Dialer with a 10 s
// timeout) whatever address it is asked for (the URL's, UnixAuthority:80
// or :443), so any HTTP client built on it reaches the socket. A unix:
// endpoint that does not parse gives a DialFunc that fails with the
// reason.
func DialEndpoint(endpoint string, base DialFunc) DialFunc {
	if !strings.HasPrefix(endpoint, "unix:") {
		return base
	}
	e, err := ParseEndpoint(endpoint)
	if err != nil {
		return func(context.Context, string, string) (net.Conn, error) { return nil, err }
	}
	if base == nil {
		d := &net.Dialer{Timeout: 10 * time.Second}
		base = d.DialContext
	}
	return func(ctx context.Context, _, _ string) (net.Conn, error) {
		return base(ctx, "unix", e.Address)
	}
}

// ServerName is the name a client checks in the certificate of endpoint's
// server: explicit (a -tls-server-name flag, a tls-server-name parameter)
// if given, else the endpoint's host. A socket's path is no host, so a
// TLS connection to unix:PATH needs explicit, unless the certificate is
// not verified at all (skipVerify). The one rule of loadgen, replay and
// forward's destinations.
func ServerName(endpoint, explicit string, skipVerify bool) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	e, err := ParseEndpoint(endpoint)
	if err != nil {
		return "", err
	}
	if e.IsUnix() {
		if skipVerify {
			return "", nil
		}
		return "", fmt.Errorf("cannot verify the server of %s: a socket path names no host, so the name its certificate has must be given", e)
	}
	host, _, _ := net.SplitHostPort(e.Address)
	if host == "" && !skipVerify {
		// crypto/tls would refuse the handshake with an error that
		// names neither the endpoint nor the flag to set.
		return "", fmt.Errorf("cannot verify the server of %s: it names no host, so the name its certificate has must be given", e)
	}
	return host, nil
}
