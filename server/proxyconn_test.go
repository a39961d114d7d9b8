package server

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/internal/pipenet"
)

// addrListener gives each connection of a pipenet listener the peer
// address remote, so that trust by address can be tested in a bubble.
type addrListener struct {
	*pipenet.Listener
	remote net.Addr
}

type addrConn struct {
	net.Conn
	remote net.Addr
}

func (c addrConn) RemoteAddr() net.Addr { return c.remote }

func (l addrListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return addrConn{c, l.remote}, nil
}

var (
	proxyPeer    = &net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 5555}  // in the trusted 10.0.0.0/8
	strangerPeer = &net.TCPAddr{IP: net.ParseIP("192.0.2.9"), Port: 4444} // not trusted
)

// proxyServer serves peerHandler in a bubble with 10.0.0.0/8 trusted, on
// one listener whose peer is the proxy and one whose peer is a stranger.
func proxyServer(t *testing.T) (trusted, untrusted *pipenet.Listener, reg *metrics.Set) {
	t.Helper()
	pp, err := ParseTrustedProxies("10.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	reg = metrics.NewSet()
	srv := New(peerHandler, Config{Limits: testLimits(), Metrics: reg, ProxyProtocol: pp})
	trusted, untrusted = pipenet.Listen(), pipenet.Listen()
	go srv.Serve(addrListener{trusted, proxyPeer})
	go srv.Serve(addrListener{untrusted, strangerPeer})
	t.Cleanup(func() { srv.Close() })
	return trusted, untrusted, reg
}

// exchange sends prefix and an HTTP/1.1 request on a new connection of ln
// and returns the answer's body, or the error that stopped it.
func exchange(ln *pipenet.Listener, prefix []byte) (string, error) {
	c, err := ln.DialContext(context.Background(), "", "")
	if err != nil {
		return "", err
	}
	defer c.Close()
	go c.Write(append(append([]byte(nil), prefix...), "GET / HTTP/1.1\r\nHost: x\r\n\r\n"...))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func refusedCount(reg *metrics.Set, reason string) uint64 {
	return reg.GetOrCreateCounter(`otlplite_proxy_protocol_refused_total{reason="` + reason + `"}`).Get()
}

// From a trusted peer the header's client address is the request's
// RemoteAddr (v1, v2, IPv4, IPv6); a LOCAL command keeps the proxy's; a
// connection without a header is refused. From another peer a header is
// refused, never believed, and a connection without one is served with its
// own address.
func TestProxyProtocolTrust(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		trusted, untrusted, reg := proxyServer(t)
		served := []struct {
			name   string
			ln     *pipenet.Listener
			prefix []byte
			want   string
		}{
			{"v1", trusted, []byte("PROXY TCP4 203.0.113.7 10.0.0.1 51234 4317\r\n"), "203.0.113.7:51234"},
			{"v1 ipv6", trusted, []byte("PROXY TCP6 2001:db8::7 2001:db8::1 51234 4318\r\n"), "[2001:db8::7]:51234"},
			{"v1 unknown", trusted, []byte("PROXY UNKNOWN\r\n"), proxyPeer.String()},
			{"v2", trusted, proxyV2Inet(src4, dst4, []byte{0x04, 0, 1, 0}), "203.0.113.7:51234"},
			{"v2 ipv6", trusted, proxyV2Inet(src6, dst6, nil), "[2001:db8::7]:51234"},
			{"v2 mapped ipv4", trusted, proxyV2Inet(netip.MustParseAddrPort("[::ffff:203.0.113.7]:1"), dst6, nil), "203.0.113.7:1"},
			{"v2 local", trusted, proxyV2(0, 0, nil), proxyPeer.String()},
			{"untrusted without header", untrusted, nil, strangerPeer.String()},
		}
		for _, c := range served {
			if got, err := exchange(c.ln, c.prefix); err != nil || got != c.want {
				t.Errorf("%s: peer %q, %v; want %q", c.name, got, err, c.want)
			}
		}
		refused := []struct {
			name, reason string
			ln           *pipenet.Listener
			prefix       []byte
		}{
			{"untrusted v1", proxyUntrusted, untrusted, []byte("PROXY TCP4 203.0.113.7 10.0.0.1 51234 4317\r\n")},
			{"untrusted v2", proxyUntrusted, untrusted, proxyV2Inet(src4, dst4, nil)},
			{"trusted without header", proxyMissing, trusted, nil},
			{"trusted bad header", proxyMalformed, trusted, []byte("PROXY TCP4 203.0.113.7 10.0.0.1 51234 99999\r\n")},
			{"trusted huge v2", proxyTooLarge, trusted, proxyV2(1, 0x11, make([]byte, maxProxyV2))},
		}
		for _, c := range refused {
			before := refusedCount(reg, c.reason)
			if got, err := exchange(c.ln, c.prefix); err == nil {
				t.Errorf("%s: served as %q, want the connection refused", c.name, got)
			}
			if refusedCount(reg, c.reason)-before != 1 {
				t.Errorf("%s: %s not counted", c.name, c.reason)
			}
		}
		if v1, v2 := reg.GetOrCreateCounter(`otlplite_proxy_protocol_headers_total{version="1"}`).Get(),
			reg.GetOrCreateCounter(`otlplite_proxy_protocol_headers_total{version="2"}`).Get(); v1 != 3 || v2 != 4 {
			t.Errorf("headers v1=%d v2=%d, want 3 and 4", v1, v2)
		}
	})
}

// A trusted peer that sends one byte of a header and stops holds its
// connection for the header timeout, no longer; an honest client is served
// meanwhile. One that closes part way is refused as malformed.
func TestProxyProtocolSlowHeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		trusted, _, reg := proxyServer(t)
		open := reg.GetOrCreateGauge("otlplite_open_connections", nil)
		slow, err := trusted.DialContext(context.Background(), "", "")
		if err != nil {
			t.Fatal(err)
		}
		defer slow.Close()
		start := time.Now()
		slow.Write([]byte("\r")) // the fewest bytes: one of the v2 signature
		if got, err := exchange(trusted, []byte("PROXY TCP4 203.0.113.7 10.0.0.1 51234 4317\r\n")); err != nil || got != "203.0.113.7:51234" {
			t.Fatalf("honest client beside a slow header: %q, %v", got, err)
		}
		time.Sleep(DefaultProxyHeaderTimeout - time.Millisecond - time.Since(start))
		synctest.Wait()
		if n := refusedCount(reg, proxyTimeout); n != 0 || open.Get() != 1 {
			t.Fatalf("before the timeout: timeout refusals %d, open connections %v; want 0 and 1", n, open.Get())
		}
		if _, err := slow.Read(make([]byte, 1)); err != io.EOF {
			t.Fatalf("slow header's connection read %v, want EOF at the timeout", err)
		}
		if n := refusedCount(reg, proxyTimeout); n != 1 || time.Since(start) != DefaultProxyHeaderTimeout {
			t.Fatalf("timeout refusals %d after %v, want 1 after %v", n, time.Since(start), DefaultProxyHeaderTimeout)
		}
		synctest.Wait()
		if open.Get() != 0 {
			t.Fatalf("open connections %v after the timeout, want 0", open.Get())
		}

		cut, err := trusted.DialContext(context.Background(), "", "")
		if err != nil {
			t.Fatal(err)
		}
		cut.Write([]byte("PROXY TCP4 203.0.113.7"))
		cut.Close()
		synctest.Wait()
		if n := refusedCount(reg, proxyMalformed); n != 1 {
			t.Fatalf("a header cut by EOF: malformed %d, want 1", n)
		}
	})
}

// h2c with prior knowledge, the way gRPC clients connect, after a header.
func TestProxyProtocolH2C(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		trusted, _, _ := proxyServer(t)
		tr := &http.Transport{Protocols: new(http.Protocols), DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			c, err := trusted.DialContext(ctx, "", "")
			if err == nil {
				_, err = c.Write(proxyV2Inet(src6, dst6, nil)) // before the preface
			}
			return c, err
		}}
		tr.Protocols.SetUnencryptedHTTP2(true)
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr}).Get("http://pipe/")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.ProtoMajor != 2 || string(b) != "[2001:db8::7]:51234" {
			t.Fatalf("%s from %q, want HTTP/2 from [2001:db8::7]:51234", resp.Proto, b)
		}
	})
}

// Under TLS the header comes before the handshake, on a real TCP port; the
// loopback peer is trusted by address.
func TestProxyProtocolTLS(t *testing.T) {
	dir := t.TempDir()
	ca, caKey := writeCert(t, dir, "ca", true, nil, nil)
	writeCert(t, dir, "server", false, ca, caKey)
	cfg, err := LoadTLS(TLSFiles{CertFile: filepath.Join(dir, "server.crt"), KeyFile: filepath.Join(dir, "server.key")})
	if err != nil {
		t.Fatal(err)
	}
	pp, _ := ParseTrustedProxies("127.0.0.1")
	reg := metrics.NewSet()
	addr := serveTCP(t, peerHandler, Config{TLS: cfg, Limits: testLimits(), ProxyProtocol: pp, Metrics: reg})
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: true,
		DialContext: func(ctx context.Context, network, a string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, a)
			if err == nil {
				_, err = c.Write([]byte("PROXY TCP4 203.0.113.7 10.0.0.1 51234 443\r\n"))
			}
			return c, err
		}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get("https://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.ProtoMajor != 2 || string(b) != "203.0.113.7:51234" {
		t.Fatalf("%s from %q, want HTTP/2 by ALPN from 203.0.113.7:51234", resp.Proto, b)
	}
	// A TLS client that sends no header is refused, and counted.
	plain := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	if _, err := plain.Get("https://" + addr + "/"); err == nil {
		t.Fatal("a TLS connection without a PROXY header was served")
	}
	if n := refusedCount(reg, proxyMissing); n != 1 {
		t.Fatalf("missing = %d, want 1", n)
	}
}

func TestParseTrustedProxies(t *testing.T) {
	p, err := ParseTrustedProxies(" 10.0.0.0/8, 192.168.1.5,2001:db8::/32 ,unix,::ffff:172.16.0.1")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"10.0.0.0/8", "192.168.1.5/32", "2001:db8::/32", "172.16.0.1/32"}
	var got []string
	for _, pfx := range p.Trusted {
		got = append(got, pfx.String())
	}
	if strings.Join(got, " ") != strings.Join(want, " ") || !p.TrustUnix || !p.Enabled() {
		t.Fatalf("parsed %v unix=%v, want %v unix=true", got, p.TrustUnix, want)
	}
	for _, bad := range []string{"10.0.0.1/8", "10.0.0.0/33", "example.com", "unix:/x"} {
		if _, err := ParseTrustedProxies(bad); err == nil {
			t.Errorf("ParseTrustedProxies(%q) accepted", bad)
		}
	}
	if p, err := ParseTrustedProxies(""); err != nil || p.Enabled() {
		t.Fatalf("empty list: %+v, %v; want off", p, err)
	}
}

// A header that arrives a byte at a time (each byte its own read) is read
// whole, and the request after it is the client's.
func TestProxyProtocolHeaderByteByByte(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		trusted, _, _ := proxyServer(t)
		for _, header := range [][]byte{proxyV2Inet(src6, dst6, []byte{0x04, 0, 2, 0, 0}), []byte("PROXY TCP4 203.0.113.7 10.0.0.1 51234 4317\r\n")} {
			c, err := trusted.DialContext(context.Background(), "", "")
			if err != nil {
				t.Fatal(err)
			}
			go func() {
				for i := range header {
					if _, err := c.Write(header[i : i+1]); err != nil {
						return
					}
				}
				c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
			}()
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			c.Close()
			if want := map[bool]string{true: "[2001:db8::7]:51234", false: "203.0.113.7:51234"}[header[0] == '\r']; string(b) != want {
				t.Fatalf("peer %q, want %q", b, want)
			}
		}
	})
}
