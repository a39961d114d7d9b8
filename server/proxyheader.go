package server

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
)

// The PROXY protocol (HAProxy's proxy-protocol.txt, versions 1 and 2): a
// proxy that relays a TCP connection sends, before the client's first
// byte, a header naming the client's and the proxy's addresses.

// proxyV1Prefix starts a version 1 header; proxyV2Sig starts a version 2
// one. Neither can start a TLS record, an HTTP/1 request or the HTTP/2
// preface.
var (
	proxyV1Prefix = []byte("PROXY ")
	proxyV2Sig    = []byte("\r\n\r\n\x00\r\nQUIT\n")
)

// maxProxyV1 is the longest version 1 header, CRLF included (the
// specification's bound: "PROXY UNKNOWN" and two IPv6 addresses with
// ports).
const maxProxyV1 = 107

// maxProxyV2 bounds a version 2 header, 16 bytes and its addresses and
// TLVs: the format allows 16+65535, but what proxies send is far smaller
// (addresses 12 or 36 bytes; AWS NLB's VPC endpoint TLV, HAProxy's ALPN,
// authority, unique ID (at most 128 bytes) and SSL TLVs with the client
// certificate's CN: hundreds). 4 KiB leaves room for all of them while
// bounding what a connection can make us buffer before its first request;
// a longer header is refused (too_large).
const maxProxyV2 = 4096

// proxyHeader is what a PROXY header says.
type proxyHeader struct {
	version int // 1 or 2
	// local: the connection's own address stands (a version 2 LOCAL
	// command, the proxy's health check; a version 1 UNKNOWN; a version
	// 2 UNSPEC or UNIX family, which carry no IP address).
	local    bool
	src, dst netip.AddrPort // when !local
}

// Parse errors. errProxyShort is not a refusal: the bytes so far may begin
// a valid header, and more are needed.
var (
	errProxyShort    = errors.New("PROXY header incomplete")
	errProxyMissing  = errors.New("no PROXY header")
	errProxyTooLarge = fmt.Errorf("PROXY v2 header longer than %d bytes", maxProxyV2)
	errProxyBad      = errors.New("malformed PROXY header")
)

// proxyHeaderPrefix reports whether b is a PROXY header's start or a
// prefix of one (true for an empty b): what an untrusted peer must not
// send, and what a trusted one must.
func proxyHeaderPrefix(b []byte) bool {
	return hasPrefixOrIsPrefix(b, proxyV1Prefix) || hasPrefixOrIsPrefix(b, proxyV2Sig)
}

func hasPrefixOrIsPrefix(b, sig []byte) bool {
	n := min(len(b), len(sig))
	return bytes.Equal(b[:n], sig[:n])
}

// parseProxyHeader parses the PROXY header at the start of b and returns it
// with its length. It returns errProxyShort when b is a proper prefix of
// what may still be a valid header, errProxyMissing when b does not begin
// with either signature, errProxyTooLarge for a version 2 header longer
// than maxProxyV2, and an error wrapping errProxyBad otherwise. It never
// reads past the header, so the bytes after it are the client's.
func parseProxyHeader(b []byte) (proxyHeader, int, error) {
	switch {
	case bytes.HasPrefix(b, proxyV1Prefix):
		return parseProxyV1(b)
	case bytes.HasPrefix(b, proxyV2Sig):
		return parseProxyV2(b)
	case proxyHeaderPrefix(b):
		return proxyHeader{}, 0, errProxyShort
	}
	return proxyHeader{}, 0, errProxyMissing
}

// parseProxyV1 parses "PROXY TCP4 SRC DST SPORT DPORT\r\n" (TCP6 alike) or
// "PROXY UNKNOWN ...\r\n": single spaces, addresses of the family named,
// ports in decimal.
func parseProxyV1(b []byte) (proxyHeader, int, error) {
	lf := bytes.IndexByte(b[:min(len(b), maxProxyV1)], '\n')
	switch {
	case lf < 0 && len(b) >= maxProxyV1:
		return proxyHeader{}, 0, fmt.Errorf("%w: v1 line longer than %d bytes", errProxyBad, maxProxyV1)
	case lf < 0:
		return proxyHeader{}, 0, errProxyShort
	case b[lf-1] != '\r':
		return proxyHeader{}, 0, fmt.Errorf("%w: v1 line ends without CR", errProxyBad)
	}
	end := lf - 1
	n := end + 2
	line := b[len(proxyV1Prefix):end]
	h := proxyHeader{version: 1}
	if bytes.HasPrefix(line, []byte("UNKNOWN")) && (len(line) == 7 || line[7] == ' ') {
		// The receiver "must ignore anything presented before the CRLF".
		h.local = true
		return h, n, nil
	}
	var f [5][]byte
	rest := line
	for i := range f {
		field, after, found := bytes.Cut(rest, []byte(" "))
		if (i < len(f)-1) != found || len(field) == 0 {
			return h, 0, fmt.Errorf("%w: v1 wants PROXY TCP4|TCP6 SRC DST SPORT DPORT", errProxyBad)
		}
		f[i], rest = field, after
	}
	var want4 bool
	switch string(f[0]) {
	case "TCP4":
		want4 = true
	case "TCP6":
	default:
		return h, 0, fmt.Errorf("%w: v1 protocol %q, want TCP4, TCP6 or UNKNOWN", errProxyBad, f[0])
	}
	src, err1 := parseV1Addr(f[1], f[3], want4)
	dst, err2 := parseV1Addr(f[2], f[4], want4)
	if err := errors.Join(err1, err2); err != nil {
		return h, 0, err
	}
	h.src, h.dst = src, dst
	return h, n, nil
}

func parseV1Addr(ip, port []byte, want4 bool) (netip.AddrPort, error) {
	a, err := netip.ParseAddr(string(ip))
	if err != nil || a.Zone() != "" || a.Is4() != want4 {
		return netip.AddrPort{}, fmt.Errorf("%w: v1 address %q", errProxyBad, ip)
	}
	// Decimal, 0-65535, no sign, no leading zero (as HAProxy writes it).
	if len(port) == 0 || len(port) > 5 || (len(port) > 1 && port[0] == '0') {
		return netip.AddrPort{}, fmt.Errorf("%w: v1 port %q", errProxyBad, port)
	}
	p, err := strconv.ParseUint(string(port), 10, 16)
	if err != nil || port[0] == '+' {
		return netip.AddrPort{}, fmt.Errorf("%w: v1 port %q", errProxyBad, port)
	}
	return netip.AddrPortFrom(a, uint16(p)), nil
}

// parseProxyV2 parses the binary header: the signature, version and
// command, family and transport, the length of what follows, the
// addresses, then TLVs, which are skipped.
func parseProxyV2(b []byte) (proxyHeader, int, error) {
	const fixed = 16
	if len(b) < fixed {
		return proxyHeader{}, 0, errProxyShort
	}
	h := proxyHeader{version: 2}
	if b[12]>>4 != 2 {
		return h, 0, fmt.Errorf("%w: v2 version %d", errProxyBad, b[12]>>4)
	}
	n := fixed + int(binary.BigEndian.Uint16(b[14:16]))
	if n > maxProxyV2 {
		return h, 0, errProxyTooLarge
	}
	switch b[12] & 0xf {
	case 0:
		// LOCAL: the proxy's own connection (a health check); the
		// receiver "must use the real connection endpoints and discard
		// the protocol block including the family".
		if len(b) < n {
			return h, 0, errProxyShort
		}
		h.local = true
		return h, n, nil
	case 1: // PROXY
	default:
		return h, 0, fmt.Errorf("%w: v2 command %d", errProxyBad, b[12]&0xf)
	}
	family, transport := b[13]>>4, b[13]&0xf
	if family > 3 || transport > 2 {
		return h, 0, fmt.Errorf("%w: v2 family %d transport %d", errProxyBad, family, transport)
	}
	var addrLen int
	switch family {
	case 1:
		addrLen = 12
	case 2:
		addrLen = 36
	case 3:
		addrLen = 216
	}
	if n-fixed < addrLen {
		return h, 0, fmt.Errorf("%w: v2 length %d too short for its addresses (%d)", errProxyBad, n-fixed, addrLen)
	}
	if len(b) < n {
		return h, 0, errProxyShort
	}
	if transport == 2 {
		return h, 0, fmt.Errorf("%w: v2 DGRAM on a stream connection", errProxyBad)
	}
	a := b[fixed:]
	switch family {
	case 1:
		h.src = netip.AddrPortFrom(netip.AddrFrom4([4]byte(a[0:4])), binary.BigEndian.Uint16(a[8:10]))
		h.dst = netip.AddrPortFrom(netip.AddrFrom4([4]byte(a[4:8])), binary.BigEndian.Uint16(a[10:12]))
	case 2:
		h.src = netip.AddrPortFrom(netip.AddrFrom16([16]byte(a[0:16])), binary.BigEndian.Uint16(a[32:34]))
		h.dst = netip.AddrPortFrom(netip.AddrFrom16([16]byte(a[16:32])), binary.BigEndian.Uint16(a[34:36]))
	default:
		// UNSPEC ("the receiver is free to ... use the real endpoint
		// addresses") and UNIX (a path, no client address): the
		// connection's own address stands.
		h.local = true
	}
	return h, n, nil
}
