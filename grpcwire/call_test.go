package grpcwire

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/compression"
)

// startH2C serves h over h2c on a loopback port and returns its address.
func startH2C(t testing.TB, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, Protocols: new(http.Protocols)}
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// echoHandler answers a unary call with its request message, or the
// status ReadUnary gave.
func echoHandler(limits Limits) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		call, st := StartCall(w, r, limits)
		if st != nil {
			return
		}
		defer call.Close()
		msg, _, st := call.ReadUnary(nil, nil)
		if st != nil {
			call.WriteStatus(st)
			return
		}
		call.WriteResponse(msg)
	})
}

func frame(compressed byte, msg []byte) []byte {
	n := len(msg)
	return append([]byte{compressed, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, msg...)
}

// rawCall posts body with headers and returns the HTTP status and the
// gRPC status (from trailers or, for Trailers-Only, headers).
func rawCall(t *testing.T, addr, method string, hdr map[string]string, body []byte) (int, *Status, []byte) {
	t.Helper()
	c := NewClient(addr, nil)
	req, _ := http.NewRequest(method, c.BaseURL+"/x.Y/Z", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/grpc")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	st := StatusFromHeader(resp.Header)
	if st == nil {
		st = StatusFromHeader(resp.Trailer)
	}
	return resp.StatusCode, st, buf.Bytes()
}

func TestReadUnaryStatuses(t *testing.T) {
	addr := startH2C(t, echoHandler(Limits{MaxRecvMsgSize: 1000}))
	gz, _ := compression.Compress(nil, compression.Gzip, bytes.Repeat([]byte("a"), 5000))
	small, _ := compression.Compress(nil, compression.Gzip, []byte("hello"))
	tests := []struct {
		name     string
		method   string
		hdr      map[string]string
		body     []byte
		wantHTTP int
		wantCode Code
		wantMsg  string
	}{
		{"ok", "POST", nil, frame(0, []byte("hi")), 200, OK, ""},
		{"empty message", "POST", nil, frame(0, nil), 200, OK, ""},
		{"GET", "GET", nil, nil, 405, Internal, "POST"},
		{"wrong content type", "POST", map[string]string{"Content-Type": "application/json"}, frame(0, nil), 415, InvalidArgument, "content-type"},
		{"grpc-web is not grpc", "POST", map[string]string{"Content-Type": "application/grpc-web"}, frame(0, nil), 415, InvalidArgument, "content-type"},
		{"content type with params", "POST", map[string]string{"Content-Type": "application/grpc+proto; charset=utf-8"}, frame(0, []byte("x")), 200, OK, ""},
		{"no message", "POST", nil, nil, 200, Internal, "no request message"},
		{"two messages", "POST", nil, append(frame(0, []byte("a")), frame(0, []byte("b"))...), 200, Internal, "multiple request messages"},
		{"trailing byte", "POST", nil, append(frame(0, []byte("a")), 0), 200, Internal, "multiple request messages"},
		{"short header", "POST", nil, []byte{0, 0, 0}, 200, Internal, "unexpected EOF"},
		{"lying prefix", "POST", nil, frame(0, []byte("abc"))[:6], 200, Internal, "unexpected EOF"},
		{"prefix over limit", "POST", nil, []byte{0, 0, 0, 0x10, 0}, 200, ResourceExhausted, "larger than max"},
		{"huge prefix", "POST", nil, []byte{0, 0xff, 0xff, 0xff, 0xff}, 200, ResourceExhausted, "larger than max"},
		{"compressed without encoding", "POST", nil, frame(1, small), 200, Internal, "compressed flag"},
		{"bad flag", "POST", nil, frame(7, []byte("a")), 200, Internal, "payload format"},
		{"unknown codec", "POST", map[string]string{"Grpc-Encoding": "lz4"}, frame(0, nil), 200, Unimplemented, `grpc-encoding "lz4"`},
		{"gzip ok", "POST", map[string]string{"Grpc-Encoding": "gzip"}, frame(1, small), 200, OK, ""},
		{"gzip uncompressed frame", "POST", map[string]string{"Grpc-Encoding": "gzip"}, frame(0, []byte("x")), 200, OK, ""},
		{"gzip bomb over limit", "POST", map[string]string{"Grpc-Encoding": "gzip"}, frame(1, gz), 200, ResourceExhausted, "after decompression"},
		{"gzip garbage", "POST", map[string]string{"Grpc-Encoding": "gzip"}, frame(1, []byte("not gzip")), 200, Internal, "decompress"},
		{"bad timeout", "POST", map[string]string{"Grpc-Timeout": "10x"}, frame(0, nil), 200, Internal, "grpc-timeout"},
		{"timeout too long", "POST", map[string]string{"Grpc-Timeout": "123456789S"}, frame(0, nil), 200, Internal, "grpc-timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			httpStatus, st, _ := rawCall(t, addr, tt.method, tt.hdr, tt.body)
			if httpStatus != tt.wantHTTP {
				t.Errorf("HTTP status %d, want %d", httpStatus, tt.wantHTTP)
			}
			if st == nil {
				t.Fatalf("no grpc-status")
			}
			if st.Code != tt.wantCode || !strings.Contains(st.Message, tt.wantMsg) {
				t.Errorf("got %v %q, want %v containing %q", st.Code, st.Message, tt.wantCode, tt.wantMsg)
			}
		})
	}
}

func TestClientRoundTripAllCodecs(t *testing.T) {
	addr := startH2C(t, echoHandler(Limits{}))
	msg := bytes.Repeat([]byte("otlp-lite "), 10000)
	for _, codec := range []compression.Codec{compression.Identity, compression.Gzip, compression.Zstd, compression.Snappy, compression.Deflate} {
		c := NewClient(addr, nil)
		c.Encoding = codec
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		got, err := c.Invoke(ctx, "/x.Y/Z", msg)
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", codec, err)
		}
		if !bytes.Equal(got, msg) {
			t.Fatalf("%s: echoed %d bytes, want %d", codec, len(got), len(msg))
		}
	}
}

func TestStatusDetailsRoundTrip(t *testing.T) {
	addr := startH2C(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		call, st := StartCall(w, r, Limits{})
		if st != nil {
			return
		}
		call.WriteStatus(&Status{Code: Unavailable, Message: "disk full: 100% used\nretry", RetryDelay: 1500 * time.Millisecond})
	}))
	_, err := NewClient(addr, nil).Invoke(context.Background(), "/x.Y/Z", nil)
	var st *Status
	if !errors.As(err, &st) {
		t.Fatalf("want *Status, got %v", err)
	}
	if st.Code != Unavailable || st.Message != "disk full: 100% used\nretry" || st.RetryDelay != 1500*time.Millisecond {
		t.Fatalf("got %+v", st)
	}
}

func TestDeadlineFromTimeout(t *testing.T) {
	got := make(chan time.Duration, 1)
	addr := startH2C(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		call, st := StartCall(w, r, Limits{})
		if st != nil {
			return
		}
		defer call.Close()
		dl, ok := call.Context().Deadline()
		if !ok {
			got <- -1
		} else {
			got <- time.Until(dl)
		}
		call.WriteStatus(nil)
	}))
	rawCall(t, addr, "POST", map[string]string{"Grpc-Timeout": "3S"}, frame(0, nil))
	if d := <-got; d <= 0 || d > 3*time.Second {
		t.Fatalf("deadline in %v, want (0, 3s]", d)
	}
}

func TestParseTimeout(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"1H", time.Hour, true}, {"2M", 2 * time.Minute, true}, {"3S", 3 * time.Second, true},
		{"4m", 4 * time.Millisecond, true}, {"5u", 5 * time.Microsecond, true}, {"6n", 6, true},
		{"99999999H", time.Duration(1<<63 - 1), true}, {"12345678m", 12345678 * time.Millisecond, true},
		{"", 0, false}, {"S", 0, false}, {"1", 0, false}, {"1s", 0, false}, {"-1S", 0, false},
		{"1.5S", 0, false}, {"123456789S", 0, false}, {" 1S", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseTimeout(tt.in)
		if (err == nil) != tt.ok || (tt.ok && got != tt.want) {
			t.Errorf("ParseTimeout(%q) = %v, %v; want %v ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestFormatTimeoutParses(t *testing.T) {
	for _, d := range []time.Duration{1, time.Microsecond + 1, time.Second, 3 * time.Hour, 1 << 62} {
		s := formatTimeout(d)
		got, err := ParseTimeout(s)
		if err != nil || got < d {
			t.Errorf("formatTimeout(%v) = %q, parsed %v %v", d, s, got, err)
		}
	}
}

func TestCodeHTTPStatus(t *testing.T) {
	want := map[Code]int{OK: 200, InvalidArgument: 400, ResourceExhausted: 429, Unavailable: 503,
		Unauthenticated: 401, PermissionDenied: 403, Unimplemented: 501, NotFound: 404,
		DeadlineExceeded: 504, Internal: 500, Unknown: 500, DataLoss: 500, Canceled: 499}
	for c, h := range want {
		if got := c.HTTPStatus(); got != h {
			t.Errorf("%v.HTTPStatus() = %d, want %d", c, got, h)
		}
	}
	if Unavailable.String() != "UNAVAILABLE" || Code(99).String() != "CODE(99)" {
		t.Error("bad code names")
	}
}

func TestGRPCMessageEncoding(t *testing.T) {
	for _, s := range []string{"plain", "100%", "line\nbreak", "ünïcödé", "\x00\xff", "%zz"} {
		enc := encodeGRPCMessage(s)
		for i := 0; i < len(enc); i++ {
			if enc[i] < ' ' || enc[i] > '~' {
				t.Fatalf("encoded %q contains %q", s, enc[i])
			}
		}
		if got := DecodeGRPCMessage(enc); got != s {
			t.Errorf("round trip of %q: %q -> %q", s, enc, got)
		}
	}
	// Malformed escapes are kept literally.
	if got := DecodeGRPCMessage("a%zzb%4"); got != "a%zzb%4" {
		t.Errorf("got %q", got)
	}
}

func TestStatusProtoRoundTrip(t *testing.T) {
	for _, st := range []*Status{
		{Code: InvalidArgument, Message: "bad"},
		{Code: Unavailable, RetryDelay: 2*time.Second + 5},
		{Code: Unavailable, Message: "rotate", RetryDelay: -1},
		{Code: InvalidArgument, Message: "cannot decode", Violations: []FieldViolation{
			{Field: "resource_spans[0].scope_spans[0].spans[2]", Description: "cannot read Span field"}, {Description: "no field"}}},
		{Code: ResourceExhausted, RetryDelay: time.Second, Violations: []FieldViolation{{Field: "f"}}},
	} {
		got, err := ParseStatusProto(st.AppendProto(nil))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, st) {
			t.Errorf("round trip %+v -> %+v", st, got)
		}
	}
}

// TestResponseHeaders pins the headers of a unary response and of a
// Trailers-Only response (PROTOCOL-HTTP2.md, "Responses"): content-type,
// grpc-accept-encoding, the status where it belongs, and no Date, as
// grpc-go sends none.
func TestResponseHeaders(t *testing.T) {
	addr := startH2C(t, echoHandler(Limits{MaxRecvMsgSize: 1000}))
	c := NewClient(addr, nil)
	for _, tc := range []struct {
		name         string
		body         []byte
		trailersOnly bool
		code         string
	}{
		{"unary OK", frame(0, []byte("hi")), false, "0"},
		{"Trailers-Only", nil, true, "13"}, // no message: INTERNAL before any response message
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", c.BaseURL+"/x.Y/Z", bytes.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/grpc")
			resp, err := c.HTTP.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			buf.ReadFrom(resp.Body)
			resp.Body.Close()
			h := resp.Header
			if got := h.Get("Content-Type"); got != "application/grpc" {
				t.Errorf("content-type %q", got)
			}
			if got := h.Get("Grpc-Accept-Encoding"); got != compression.Supported {
				t.Errorf("grpc-accept-encoding %q", got)
			}
			if _, ok := h["Date"]; ok {
				t.Errorf("unexpected Date header %q", h.Get("Date"))
			}
			statusIn := resp.Trailer
			if tc.trailersOnly {
				statusIn = h
			}
			if got := statusIn.Get("Grpc-Status"); got != tc.code {
				t.Errorf("grpc-status %q, want %q (headers %v, trailers %v)", got, tc.code, h, resp.Trailer)
			}
		})
	}
}
