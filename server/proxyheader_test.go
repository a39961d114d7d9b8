package server

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// proxyV2 builds a version 2 header: cmd 0 LOCAL or 1 PROXY, fam the
// family and transport byte, then the addresses and TLVs in body.
func proxyV2(cmd, fam byte, body []byte) []byte {
	b := append([]byte(nil), proxyV2Sig...)
	b = append(b, 0x20|cmd, fam)
	b = binary.BigEndian.AppendUint16(b, uint16(len(body)))
	return append(b, body...)
}

// proxyV2Inet is a PROXY command for TCP over IPv4 (fam 0x11) or IPv6
// (0x21) from src to dst, followed by tlvs.
func proxyV2Inet(src, dst netip.AddrPort, tlvs []byte) []byte {
	var body []byte
	fam := byte(0x11)
	if src.Addr().Is4() {
		s, d := src.Addr().As4(), dst.Addr().As4()
		body = append(append(body, s[:]...), d[:]...)
	} else {
		fam = 0x21
		s, d := src.Addr().As16(), dst.Addr().As16()
		body = append(append(body, s[:]...), d[:]...)
	}
	body = binary.BigEndian.AppendUint16(body, src.Port())
	body = binary.BigEndian.AppendUint16(body, dst.Port())
	return proxyV2(1, fam, append(body, tlvs...))
}

var (
	src4 = netip.MustParseAddrPort("203.0.113.7:51234")
	dst4 = netip.MustParseAddrPort("10.0.0.1:4317")
	src6 = netip.MustParseAddrPort("[2001:db8::7]:51234")
	dst6 = netip.MustParseAddrPort("[2001:db8::1]:4318")
)

func TestParseProxyHeader(t *testing.T) {
	tlv := []byte{0x01, 0x00, 0x02, 'h', '2', 0x04, 0x00, 0x00} // ALPN "h2", an empty NOOP
	cases := []struct {
		name  string
		in    string
		want  proxyHeader
		n     int
		error error
	}{
		{"v1 tcp4", "PROXY TCP4 203.0.113.7 10.0.0.1 51234 4317\r\nGET", proxyHeader{version: 1, src: src4, dst: dst4}, 44, nil},
		{"v1 tcp6", "PROXY TCP6 2001:db8::7 2001:db8::1 51234 4318\r\n", proxyHeader{version: 1, src: src6, dst: dst6}, 47, nil},
		{"v1 unknown", "PROXY UNKNOWN\r\n", proxyHeader{version: 1, local: true}, 15, nil},
		{"v1 unknown with addresses", "PROXY UNKNOWN ffff:f...f:ffff 1 2\r\nx", proxyHeader{version: 1, local: true}, 35, nil},
		{"v1 longest", "PROXY TCP6 ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 65535\r\n",
			proxyHeader{version: 1, src: netip.MustParseAddrPort("[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535"),
				dst: netip.MustParseAddrPort("[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535")}, 104, nil},
		{"v2 tcp4 with TLVs", string(proxyV2Inet(src4, dst4, tlv)) + "PRI", proxyHeader{version: 2, src: src4, dst: dst4}, 16 + 12 + len(tlv), nil},
		{"v2 tcp6", string(proxyV2Inet(src6, dst6, nil)), proxyHeader{version: 2, src: src6, dst: dst6}, 16 + 36, nil},
		{"v2 local", string(proxyV2(0, 0, nil)), proxyHeader{version: 2, local: true}, 16, nil},
		{"v2 local ignores its family", string(proxyV2(0, 0xff, []byte{1, 2, 3})), proxyHeader{version: 2, local: true}, 19, nil},
		{"v2 unspec", string(proxyV2(1, 0x00, nil)), proxyHeader{version: 2, local: true}, 16, nil},
		{"v2 unix", string(proxyV2(1, 0x31, make([]byte, 216))), proxyHeader{version: 2, local: true}, 232, nil},

		{"empty", "", proxyHeader{}, 0, errProxyShort},
		{"v1 prefix", "PROX", proxyHeader{}, 0, errProxyShort},
		{"v1 no CRLF yet", "PROXY TCP4 203.0.113.7 ", proxyHeader{}, 0, errProxyShort},
		{"v2 prefix", "\r\n\r\n\x00", proxyHeader{}, 0, errProxyShort},
		{"v2 addresses not yet", string(proxyV2Inet(src4, dst4, nil)[:20]), proxyHeader{}, 0, errProxyShort},
		{"h2c preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", proxyHeader{}, 0, errProxyMissing},
		{"http/1", "POST /v1/traces HTTP/1.1\r\n", proxyHeader{}, 0, errProxyMissing},
		{"tls", "\x16\x03\x01\x02\x00\x01", proxyHeader{}, 0, errProxyMissing},
		{"v2 too large", string(proxyV2(1, 0x11, make([]byte, maxProxyV2))), proxyHeader{}, 0, errProxyTooLarge},

		{"v1 too long", "PROXY TCP6 " + strings.Repeat("1", 120), proxyHeader{}, 0, errProxyBad},
		{"v1 LF only", "PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n", proxyHeader{}, 0, errProxyBad},
		{"v1 family mismatch", "PROXY TCP4 2001:db8::7 10.0.0.1 1 2\r\n", proxyHeader{}, 0, errProxyBad},
		{"v1 double space", "PROXY TCP4 1.2.3.4  5.6.7.8 1 2\r\n", proxyHeader{}, 0, errProxyBad},
		{"v1 missing port", "PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n", proxyHeader{}, 0, errProxyBad},
		{"v1 extra field", "PROXY TCP4 1.2.3.4 5.6.7.8 1 2 3\r\n", proxyHeader{}, 0, errProxyBad},
		{"v1 port range", "PROXY TCP4 1.2.3.4 5.6.7.8 65536 2\r\n", proxyHeader{}, 0, errProxyBad},
		{"v1 port sign", "PROXY TCP4 1.2.3.4 5.6.7.8 +1 2\r\n", proxyHeader{}, 0, errProxyBad},
		{"v1 port leading zero", "PROXY TCP4 1.2.3.4 5.6.7.8 01 2\r\n", proxyHeader{}, 0, errProxyBad},
		{"v1 udp", "PROXY UDP4 1.2.3.4 5.6.7.8 1 2\r\n", proxyHeader{}, 0, errProxyBad},
		{"v1 zone", "PROXY TCP6 fe80::1%eth0 fe80::2 1 2\r\n", proxyHeader{}, 0, errProxyBad},
		{"v2 version 1", string(append(append([]byte(nil), proxyV2Sig...), 0x11, 0x11, 0, 0)), proxyHeader{}, 0, errProxyBad},
		{"v2 command 2", string(proxyV2(2, 0x11, make([]byte, 12))), proxyHeader{}, 0, errProxyBad},
		{"v2 family 4", string(proxyV2(1, 0x41, make([]byte, 12))), proxyHeader{}, 0, errProxyBad},
		{"v2 short addresses", string(proxyV2(1, 0x21, make([]byte, 12))), proxyHeader{}, 0, errProxyBad},
		{"v2 dgram", string(proxyV2(1, 0x12, make([]byte, 12))), proxyHeader{}, 0, errProxyBad},
	}
	for _, c := range cases {
		h, n, err := parseProxyHeader([]byte(c.in))
		if !errors.Is(err, c.error) || (c.error == nil && err != nil) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.error)
			continue
		}
		if err == nil && (h != c.want || n != c.n) {
			t.Errorf("%s: %+v, %d; want %+v, %d", c.name, h, n, c.want, c.n)
		}
	}
}

// FuzzParseProxyHeader: any input parses without panic, within its bounds
// and without reading past the header; a header parsed is the same when
// the bytes after it are cut, and every proper prefix of it is short.
func FuzzParseProxyHeader(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/proxy/*")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(proxyV2Inet(src6, dst6, []byte{0x05, 0x00, 0x01, 'x'}))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, n, err := parseProxyHeader(b)
		if err != nil {
			if n != 0 {
				t.Fatalf("error %v with length %d", err, n)
			}
			return
		}
		if n > len(b) || (h.version == 1 && n > maxProxyV1) || n > maxProxyV2 || (h.version != 1 && h.version != 2) {
			t.Fatalf("header %+v of %d bytes from %d", h, n, len(b))
		}
		h2, n2, err := parseProxyHeader(b[:n])
		if err != nil || h2 != h || n2 != n {
			t.Fatalf("cut after the header: %+v %d %v, was %+v %d", h2, n2, err, h, n)
		}
		for i := range n {
			if _, _, err := parseProxyHeader(b[:i]); err != errProxyShort {
				t.Fatalf("prefix of %d bytes of a %d-byte header: %v, want errProxyShort", i, n, err)
			}
		}
	})
}
