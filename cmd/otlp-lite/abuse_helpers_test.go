package main

import (
	"bufio"
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/otlp-lite/otlp-lite/grpcwire"
)

// Helpers of the abuse and overload suites: a real `otlp-lite serve` with
// its admin listener, the process's CPU and memory from /proc, Prometheus
// scrapes, and a hand-driven HTTP/2 client (x/net/http2's Framer) that can
// send what no well-behaved client library would.

// abuseServer is an `otlp-lite serve` child process with its admin
// listener.
type abuseServer struct {
	*serveProc
	dataDir   string
	adminAddr string
	pid       int
	checks    int    // valid requests sent by mustServe, for unique ids
	token     string // bearer token mustServe sends, if set
}

// bearer adds an authorization header to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

var adminAddrRE = regexp.MustCompile(`admin_addr=(\S+)`)

// startAbuseServer starts `otlp-lite serve` with disk storage in a fresh
// directory, an admin listener on a free port, and the extra flags.
func startAbuseServer(t *testing.T, extra ...string) *abuseServer {
	t.Helper()
	dataDir := t.TempDir()
	// Logging stays at info: startServe waits for the info-level
	// "otlp-lite serving" line.
	p := startServe(t, dataDir, "", append([]string{"-admin-addr", "127.0.0.1:0"}, extra...)...)
	m := adminAddrRE.FindStringSubmatch(p.logs())
	if m == nil {
		t.Fatalf("no admin_addr in the serving line:\n%s", p.logs())
	}
	return &abuseServer{serveProc: p, dataDir: dataDir, adminAddr: m[1], pid: p.cmd.Process.Pid}
}

// h2cHTTPClient speaks HTTP/2 with prior knowledge (h2c), as gRPC clients
// do; each call of newH2CClient has its own connection pool.
func newH2CClient() *http.Client {
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// newHTTP1Client speaks only HTTP/1.1.
func newHTTP1Client() *http.Client {
	tr := &http.Transport{Protocols: new(http.Protocols), DisableKeepAlives: true}
	tr.Protocols.SetHTTP1(true)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// mustServe proves the server still does its job: a valid gRPC export
// and a valid OTLP/HTTP export (over HTTP/1.1), each on a new connection,
// both answered OK within a few seconds.
func (s *abuseServer) mustServe(t *testing.T) {
	t.Helper()
	s.checks++
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := grpcwire.NewClient(s.addr, nil)
	defer c.HTTP.CloseIdleConnections()
	hc := newHTTP1Client()
	if s.token != "" {
		c.HTTP.Transport = bearer{s.token, c.HTTP.Transport}
		hc.Transport = bearer{s.token, hc.Transport}
	}
	if _, err := c.Invoke(ctx, methodTraces, tracesRequest(nil, fmt.Sprintf("check-grpc-%d", s.checks))); err != nil {
		t.Fatalf("server no longer serves a valid gRPC export: %v\nserver log:\n%s", err, s.logs())
	}
	got := doHTTP(t, hc, http.MethodPost, "http://"+s.addr+"/v1/traces",
		map[string]string{"Content-Type": "application/x-protobuf"}, tracesRequest(nil, fmt.Sprintf("check-http-%d", s.checks)))
	if got.HTTP != http.StatusOK {
		t.Fatalf("server no longer serves a valid OTLP/HTTP export: %+v\nserver log:\n%s", got, s.logs())
	}
}

// outcome is how the server answered one request: its HTTP status, its
// gRPC status (code name) if it sent one, or the HTTP/2 error code it reset
// the stream with.
type outcome struct {
	HTTP  int    // 0 if no response headers came
	GRPC  string // grpc-status as a code name; "" if none
	Reset string // RST_STREAM or GOAWAY error code; "" if none
	Msg   string `json:"-"` // grpc-message or a body excerpt, for failure messages
}

func (o outcome) same(want outcome) bool {
	return o.HTTP == want.HTTP && o.GRPC == want.GRPC && o.Reset == want.Reset
}

func codeName(v string) string {
	n, err := strconv.Atoi(v)
	if err != nil {
		return "malformed(" + v + ")"
	}
	return grpcwire.Code(n).String()
}

// doHTTP sends one request and reads the whole response, trailers
// included.
func doHTTP(t *testing.T, c *http.Client, method, url string, hdr map[string]string, body []byte) outcome {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body == nil {
		req.Body = http.NoBody
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		var se http2.StreamError
		if errors.As(err, &se) {
			return outcome{Reset: se.Code.String(), Msg: err.Error()}
		}
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	out := outcome{HTTP: resp.StatusCode}
	gs, gm := resp.Trailer.Get("Grpc-Status"), resp.Trailer.Get("Grpc-Message")
	if gs == "" {
		gs, gm = resp.Header.Get("Grpc-Status"), resp.Header.Get("Grpc-Message")
	}
	if gs != "" {
		out.GRPC = codeName(gs)
		out.Msg = grpcwire.DecodeGRPCMessage(gm)
	} else {
		out.Msg = string(data[:min(len(data), 200)])
	}
	return out
}

// grpcBody frames msg as one gRPC Length-Prefixed-Message.
func grpcBody(compressed bool, msg []byte) []byte {
	b := []byte{0, 0, 0, 0, 0}
	if compressed {
		b[0] = 1
	}
	n := len(msg)
	b[1], b[2], b[3], b[4] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	return append(b, msg...)
}

var (
	bombOnce sync.Once
	bomb     []byte
)

// gzipBomb returns a valid gzip member that decompresses to 1 GiB of
// zeros, about 1 MiB long. Compressing 1 GiB takes seconds, so it is built
// from byte-aligned deflate blocks: after a sync flush, each further MiB of
// zeros compresses to the same bytes (the window holds only zeros), which
// are repeated; the trailer carries the real CRC-32 and size (RFC 1952).
func gzipBomb(t testing.TB) []byte {
	bombOnce.Do(func() {
		var b bytes.Buffer
		zw, _ := flate.NewWriter(&b, flate.BestCompression)
		zeros := make([]byte, 1<<20)
		var chunks [3][]byte
		for i := range chunks {
			zw.Write(zeros)
			zw.Flush()
			chunks[i] = bytes.Clone(b.Bytes())
			b.Reset()
		}
		zw.Close()
		tail := b.Bytes()
		if !bytes.Equal(chunks[1], chunks[2]) {
			return // detected below
		}
		out := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255} // gzip header: deflate, no flags, unknown OS
		out = append(out, chunks[0]...)
		crc := crc32.NewIEEE()
		crc.Write(zeros)
		for range 1023 {
			out = append(out, chunks[1]...)
			crc.Write(zeros)
		}
		out = append(out, tail...)
		sum := crc.Sum32()
		size := uint32(1 << 30) // ISIZE: length mod 2^32
		out = append(out, byte(sum), byte(sum>>8), byte(sum>>16), byte(sum>>24), byte(size), byte(size>>8), byte(size>>16), byte(size>>24))
		bomb = out
	})
	if bomb == nil {
		t.Fatal("cannot build the gzip bomb: deflate blocks of zeros are not periodic")
	}
	return bomb
}

// procStats is what /proc says about a process.
type procStats struct {
	cpu      time.Duration // user + system
	rss, hwm int64         // bytes: resident now, peak resident (VmHWM)
}

// readProc reads the CPU time and memory of pid from /proc.
func readProc(t testing.TB, pid int) procStats {
	t.Helper()
	var ps procStats
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("cannot read process stats: %v", err)
	}
	// Fields after the command name, which is in parentheses and may hold
	// spaces (proc(5)): state is field 3, utime 14, stime 15.
	rest := string(stat[bytes.LastIndexByte(stat, ')')+2:])
	f := strings.Fields(rest)
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	// USER_HZ is 100 on every Linux ABI Go supports.
	ps.cpu = time.Duration(utime+stime) * 10 * time.Millisecond
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("cannot read process status: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			ps.rss = kb << 10
		case "VmHWM":
			ps.hwm = kb << 10
		}
	}
	return ps
}

// metric scrapes /metrics and returns the sum of the samples of name
// (every label set), or 0 if there are none.
func (s *abuseServer) metric(t testing.TB, name string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + s.adminAddr + "/metrics")
	if err != nil {
		t.Fatalf("cannot scrape /metrics: %v", err)
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) || len(line) == len(name) {
			continue
		}
		if c := line[len(name)]; c != ' ' && c != '{' {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("bad sample %q", line)
		}
		sum += v
	}
	return sum
}

// ready reports whether /readyz answers 200.
func (s *abuseServer) ready(t testing.TB) bool {
	t.Helper()
	resp, err := http.Get("http://" + s.adminAddr + "/readyz")
	if err != nil {
		t.Fatalf("cannot get /readyz: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// h2Conn is a hand-driven HTTP/2 client connection (RFC 9113) over h2c
// with prior knowledge.
type h2Conn struct {
	conn net.Conn
	fr   *http2.Framer
	wmu  sync.Mutex // framer writes
	henc *hpack.Encoder
	hbuf bytes.Buffer
	addr string

	// Filled by the reader goroutine.
	mu       sync.Mutex
	streams  map[uint32]*h2Stream
	goaway   *http2.GoAwayFrame
	readErr  error
	changed  chan struct{} // closed and replaced on every change
	maxConc  uint32        // the server's SETTINGS_MAX_CONCURRENT_STREAMS
	settings chan struct{} // closed at the server's first SETTINGS
}

// h2Stream is what the server sent on one stream.
type h2Stream struct {
	status, grpcStatus, grpcMessage string
	reset                           *http2.ErrCode
	ended                           bool // END_STREAM or RST_STREAM received
}

func (s *h2Stream) outcome() outcome {
	var o outcome
	o.HTTP, _ = strconv.Atoi(s.status)
	if s.grpcStatus != "" {
		o.GRPC = codeName(s.grpcStatus)
		o.Msg = s.grpcMessage
	}
	if s.reset != nil {
		o.Reset = s.reset.String()
	}
	return o
}

// dialH2 opens an h2c connection: the client preface and our SETTINGS
// (RFC 9113 section 3.4). A goroutine reads the server's frames,
// acknowledges its SETTINGS and PINGs, and records responses by stream.
func dialH2(t testing.TB, addr string) *h2Conn {
	t.Helper()
	c, err := dialH2Err(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.conn.Close() })
	return c
}

// dialH2Err is dialH2 for goroutines other than the test's: it returns
// errors, and the caller closes the connection.
func dialH2Err(addr string) (*h2Conn, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	c := &h2Conn{conn: conn, addr: addr, streams: map[uint32]*h2Stream{},
		changed: make(chan struct{}), settings: make(chan struct{})}
	c.fr = http2.NewFramer(conn, conn)
	c.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	c.fr.MaxHeaderListSize = 1 << 20
	c.henc = hpack.NewEncoder(&c.hbuf)
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		conn.Close()
		return nil, err
	}
	// A large window, so responses never stall on our side.
	if err := c.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 30}); err != nil {
		conn.Close()
		return nil, err
	}
	c.fr.WriteWindowUpdate(0, 1<<30)
	go c.readLoop()
	select {
	case <-c.settings:
	case <-time.After(5 * time.Second):
		conn.Close()
		return nil, errors.New("no SETTINGS from the server within 5s")
	}
	return c, nil
}

func hpackField(name, value string) hpack.HeaderField {
	return hpack.HeaderField{Name: name, Value: value, Sensitive: true}
}

func (c *h2Conn) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

func (c *h2Conn) stream(id uint32) *h2Stream {
	s := c.streams[id]
	if s == nil {
		s = &h2Stream{}
		c.streams[id] = s
	}
	return s
}

func (c *h2Conn) readLoop() {
	sawSettings := false
	for {
		f, err := c.fr.ReadFrame()
		c.mu.Lock()
		if err != nil {
			c.readErr = err
			c.notifyLocked()
			c.mu.Unlock()
			if !sawSettings {
				close(c.settings)
			}
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				if v, ok := f.Value(http2.SettingMaxConcurrentStreams); ok {
					c.maxConc = v
				}
				c.wmu.Lock()
				c.fr.WriteSettingsAck()
				c.wmu.Unlock()
				if !sawSettings {
					sawSettings = true
					close(c.settings)
				}
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				c.wmu.Lock()
				c.fr.WritePing(true, f.Data)
				c.wmu.Unlock()
			}
		case *http2.MetaHeadersFrame:
			s := c.stream(f.StreamID)
			for _, hf := range f.Fields {
				switch hf.Name {
				case ":status":
					s.status = hf.Value
				case "grpc-status":
					s.grpcStatus = hf.Value
				case "grpc-message":
					s.grpcMessage = grpcwire.DecodeGRPCMessage(hf.Value)
				}
			}
			s.ended = s.ended || f.StreamEnded()
		case *http2.DataFrame:
			s := c.stream(f.StreamID)
			s.ended = s.ended || f.StreamEnded()
			if n := len(f.Data()); n > 0 {
				// Give the window back, so long responses never stall.
				c.wmu.Lock()
				c.fr.WriteWindowUpdate(0, uint32(n))
				c.wmu.Unlock()
			}
		case *http2.RSTStreamFrame:
			// A reset after the response ended (NO_ERROR: "stop sending
			// the body I did not read", RFC 9113 section 8.1) does not
			// change the answer.
			if s := c.stream(f.StreamID); !s.ended {
				code := f.ErrCode
				s.reset, s.ended = &code, true
			}
		case *http2.GoAwayFrame:
			c.goaway = f
		}
		c.notifyLocked()
		c.mu.Unlock()
	}
}

// headers sends a HEADERS frame opening stream id: a POST of path with
// content-type ct (gRPC's when empty) and the extra header pairs.
func (c *h2Conn) headers(id uint32, path string, endStream bool, kv ...string) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.hbuf.Reset()
	fields := append([]string{":method", "POST", ":scheme", "http", ":path", path, ":authority", c.addr,
		"content-type", "application/grpc", "te", "trailers"}, kv...)
	for i := 0; i < len(fields); i += 2 {
		c.henc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	return c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: c.hbuf.Bytes(),
		EndStream: endStream, EndHeaders: true})
}

func (c *h2Conn) data(id uint32, endStream bool, b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.fr.WriteData(id, endStream, b)
}

func (c *h2Conn) reset(id uint32) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.fr.WriteRSTStream(id, http2.ErrCodeCancel)
}

// wait waits until done (called under the lock) holds, the connection
// fails, or the timeout passes; it reports whether done held.
func (c *h2Conn) wait(timeout time.Duration, done func() bool) bool {
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		ok, failed, ch := done(), c.readErr != nil, c.changed
		c.mu.Unlock()
		if ok {
			return true
		}
		if failed {
			return false
		}
		select {
		case <-ch:
		case <-deadline:
			return false
		}
	}
}

// result waits for stream id to end and returns how it ended; a
// connection-level end (GOAWAY, closed connection) is reported in Reset.
func (c *h2Conn) result(id uint32, timeout time.Duration) outcome {
	c.wait(timeout, func() bool { s := c.streams[id]; return s != nil && s.ended })
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.streams[id]; s != nil && s.ended {
		return s.outcome()
	}
	switch {
	case c.goaway != nil:
		return outcome{Reset: "GOAWAY " + c.goaway.ErrCode.String()}
	case c.readErr != nil:
		return outcome{Reset: "connection closed", Msg: c.readErr.Error()}
	}
	return outcome{Reset: "timeout"}
}

// closed reports whether the server closed the connection.
func (c *h2Conn) closed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readErr != nil
}
