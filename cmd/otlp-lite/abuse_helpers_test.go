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
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
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
	return s.metricWith(t, name)
}

// metricWith is metric summed over the samples whose labels include every
// one of labels, each written as in the exposition format
// (`transport="grpc_stream"`).
func (s *abuseServer) metricWith(t testing.TB, name string, labels ...string) float64 {
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
		matches := true
		for _, l := range labels {
			if !strings.Contains(line, l) {
				matches = false
			}
		}
		if !matches {
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

// waitMetric polls metricWith every 20 ms until ok holds for its value or
// timeout passes, and returns the last value and whether ok held.
func (s *abuseServer) waitMetric(t testing.TB, timeout time.Duration, name string, ok func(float64) bool, labels ...string) (float64, bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		v := s.metricWith(t, name, labels...)
		if ok(v) {
			return v, true
		}
		if time.Now().After(deadline) {
			return v, false
		}
		<-tick.C
	}
}

// honestExport is a well-behaved client's export: one valid gRPC Export
// carrying the span id, on a new connection, with the server's token if
// it has one and a 10 s deadline (so a slow answer is measured, not cut
// off). It returns how long the call took.
func (s *abuseServer) honestExport(id string) (time.Duration, error) {
	return s.honestExportWithin(id, 10*time.Second)
}

// honestExportWithin is honestExport with the given deadline.
func (s *abuseServer) honestExportWithin(id string, timeout time.Duration) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c := grpcwire.NewClient(s.addr, nil)
	defer c.HTTP.CloseIdleConnections()
	if s.token != "" {
		c.HTTP.Transport = bearer{s.token, c.HTTP.Transport}
	}
	start := time.Now()
	_, err := c.Invoke(ctx, methodTraces, tracesRequest(nil, id))
	return time.Since(start), err
}

// honestHTTPExport is honestExport over OTLP/HTTP (HTTP/1.1, protobuf).
func (s *abuseServer) honestHTTPExport(id string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+s.addr+"/v1/traces", bytes.NewReader(tracesRequest(nil, id)))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	start := time.Now()
	resp, err := newHTTP1Client().Do(req)
	if err != nil {
		return time.Since(start), err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	if resp.StatusCode != http.StatusOK {
		return took, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return took, nil
}

// stopTimed sends SIGTERM and returns how long the process took to exit
// and its exit code; after limit it is killed and the code is -1.
func (p *serveProc) stopTimed(limit time.Duration) (time.Duration, int) {
	start := time.Now()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return time.Since(start), p.cmd.ProcessState.ExitCode()
	case <-time.After(limit):
		took := time.Since(start)
		p.kill()
		return took, -1
	}
}

// grpcMessages splits the complete gRPC Length-Prefixed-Messages at the
// start of b and returns them with the number of bytes they span.
func grpcMessages(b []byte) (msgs [][]byte, n int) {
	for len(b)-n >= 5 {
		l := int(b[n+1])<<24 | int(b[n+2])<<16 | int(b[n+3])<<8 | int(b[n+4])
		if len(b)-n-5 < l {
			break
		}
		msgs = append(msgs, b[n+5:n+5+l])
		n += 5 + l
	}
	return msgs, n
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

	// Flow control of what we send (RFC 9113 section 6.9), kept by
	// send: the server's SETTINGS_INITIAL_WINDOW_SIZE and
	// SETTINGS_MAX_FRAME_SIZE, and the connection's send window. A
	// stream's window is peerInitWin plus its winDelta.
	peerInitWin  int64
	peerMaxFrame uint32
	connSendWin  int64

	openMu sync.Mutex // stream id allocation and HEADERS, in order
	nextID uint32
}

// h2Stream is what the server sent on one stream.
type h2Stream struct {
	status, grpcStatus, grpcMessage string
	reset                           *http2.ErrCode
	ended                           bool   // END_STREAM or RST_STREAM received
	data                            []byte // the DATA received: the response's gRPC messages
	winDelta                        int64  // WINDOW_UPDATEs received minus DATA sent
	// onData, if set, is called by the reader under the connection's lock
	// each time DATA arrives, to react without a goroutine switch (it may
	// call writeLocked).
	onData func(*h2Stream)
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
func dialH2Err(addr string) (*h2Conn, error) { return dialH2With(addr, h2Options{}) }

// h2Options change how dialH2With's client behaves.
type h2Options struct {
	// zeroWindow sets our SETTINGS_INITIAL_WINDOW_SIZE to 0 and never
	// opens a stream's window: the server can send headers and trailers
	// but not one byte of a response message.
	zeroWindow bool
}

// dialH2With is dialH2Err with options.
func dialH2With(addr string, opt h2Options) (*h2Conn, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	c := &h2Conn{conn: conn, addr: addr, streams: map[uint32]*h2Stream{},
		changed: make(chan struct{}), settings: make(chan struct{}),
		// RFC 9113 section 6.5.2 and 6.9.2 defaults, until the server's
		// SETTINGS and WINDOW_UPDATEs say otherwise.
		peerInitWin: 65535, peerMaxFrame: 16384, connSendWin: 65535, nextID: 1}
	c.fr = http2.NewFramer(conn, conn)
	c.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	c.fr.MaxHeaderListSize = 1 << 20
	c.henc = hpack.NewEncoder(&c.hbuf)
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		conn.Close()
		return nil, err
	}
	// A large window, so responses never stall on our side, unless the
	// caller wants them all to stall.
	window := uint32(1 << 30)
	if opt.zeroWindow {
		window = 0
	}
	if err := c.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: window}); err != nil {
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
				if v, ok := f.Value(http2.SettingInitialWindowSize); ok {
					c.peerInitWin = int64(v)
				}
				if v, ok := f.Value(http2.SettingMaxFrameSize); ok {
					c.peerMaxFrame = v
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
			s.data = append(s.data, f.Data()...)
			if s.onData != nil {
				s.onData(s)
			}
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
		case *http2.WindowUpdateFrame:
			if f.StreamID == 0 {
				c.connSendWin += int64(f.Increment)
			} else {
				c.stream(f.StreamID).winDelta += int64(f.Increment)
			}
		}
		c.notifyLocked()
		c.mu.Unlock()
	}
}

// headers sends a HEADERS frame opening stream id: a POST of path with
// content-type application/grpc and te: trailers, and the extra header
// pairs; a "content-type" pair replaces the default one (and its te).
func (c *h2Conn) headers(id uint32, path string, endStream bool, kv ...string) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.hbuf.Reset()
	fields := []string{":method", "POST", ":scheme", "http", ":path", path, ":authority", c.addr}
	if !slices.Contains(kv, "content-type") {
		fields = append(fields, "content-type", "application/grpc", "te", "trailers")
	}
	fields = append(fields, kv...)
	for i := 0; i < len(fields); i += 2 {
		c.henc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	return c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: c.hbuf.Bytes(),
		EndStream: endStream, EndHeaders: true})
}

// data sends b in one DATA frame, whatever the flow-control windows (send
// respects them).
func (c *h2Conn) data(id uint32, endStream bool, b []byte) error {
	c.mu.Lock()
	c.stream(id).winDelta -= int64(len(b))
	c.connSendWin -= int64(len(b))
	c.mu.Unlock()
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.fr.WriteData(id, endStream, b)
}

// errNoWindow is send's error when the server's flow-control windows stayed
// closed; errStreamEnded when the server ended the stream first.
var (
	errNoWindow    = errors.New("flow-control window closed")
	errStreamEnded = errors.New("stream ended by the server")
)

// send writes b on stream id as DATA frames within the server's flow-control
// windows and frame size, waiting up to stall each time they are closed;
// endStream sets END_STREAM on the last frame. It returns how many bytes it
// sent and, if not all, why: errNoWindow after the windows stayed closed
// for stall (a client sending "as much as flow control lets it"),
// errStreamEnded, or the connection's failure.
func (c *h2Conn) send(id uint32, b []byte, endStream bool, stall time.Duration) (int, error) {
	sent := 0
	for first := true; first || sent < len(b); first = false {
		n := 0
		ended := false
		ok := c.wait(stall, func() bool {
			s := c.stream(id)
			if s.ended {
				ended = true
				return true
			}
			n = int(min(int64(len(b)-sent), c.connSendWin, c.peerInitWin+s.winDelta, int64(c.peerMaxFrame)))
			if n <= 0 && len(b) > sent {
				return false
			}
			// Claimed here, under the lock, so concurrent senders on
			// the connection never overdraw its window.
			n = max(n, 0)
			s.winDelta -= int64(n)
			c.connSendWin -= int64(n)
			return true
		})
		switch {
		case ended:
			return sent, errStreamEnded
		case !ok && c.closed():
			c.mu.Lock()
			err := c.readErr
			c.mu.Unlock()
			return sent, fmt.Errorf("connection closed: %v", err)
		case !ok:
			return sent, errNoWindow
		}
		c.wmu.Lock()
		err := c.fr.WriteData(id, endStream && sent+n == len(b), b[sent:sent+n])
		c.wmu.Unlock()
		if err != nil {
			return sent, err
		}
		sent += n
	}
	return sent, nil
}

// writeLocked sends b in one DATA frame on stream s (id) if the
// flow-control windows allow it, and reports whether it did. The caller
// holds c.mu (it is an onData function).
func (c *h2Conn) writeLocked(id uint32, s *h2Stream, b []byte, endStream bool) bool {
	n := int64(len(b))
	if n > c.connSendWin || n > c.peerInitWin+s.winDelta || n > int64(c.peerMaxFrame) {
		return false
	}
	c.connSendWin -= n
	s.winDelta -= n
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.fr.WriteData(id, endStream, b) == nil
}

// open sends HEADERS for the next client stream (ids must increase in the
// order streams are opened, RFC 9113 section 5.1.1, so allocation and
// HEADERS happen together) and returns its id.
func (c *h2Conn) open(path string, endStream bool, kv ...string) (uint32, error) {
	c.openMu.Lock()
	defer c.openMu.Unlock()
	id := c.nextID
	c.nextID += 2
	return id, c.headers(id, path, endStream, kv...)
}

// received returns a copy of the DATA received on stream id from offset
// on, and whether the stream has ended.
func (c *h2Conn) received(id uint32, offset int) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stream(id)
	return bytes.Clone(s.data[min(offset, len(s.data)):]), s.ended
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
