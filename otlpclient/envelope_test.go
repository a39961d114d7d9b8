package otlpclient

import (
	"bytes"
	"testing"
	"time"

	"github.com/VictoriaMetrics/easyproto"

	"github.com/otlp-lite/otlp-lite/otlp"
)

// unwrapEnvelope is the server's view of an envelope: the id and the
// Export*ServiceRequest rebuilt from fields 2 and 3 (the profiles
// dictionary).
func unwrapEnvelope(t testing.TB, env []byte) (uint64, []byte) {
	var fc easyproto.FieldContext
	var id uint64
	var req []byte
	for src := env; len(src) > 0; {
		var err error
		if src, err = fc.NextField(src); err != nil {
			t.Fatalf("envelope %x: %v", env, err)
		}
		switch fc.FieldNum {
		case 1:
			id, _ = fc.Uint64()
		case 2, 3:
			data, _ := fc.MessageData()
			req = append(req, byte(fc.FieldNum-1)<<3|2)
			req = appendVarint(req, uint64(len(data)))
			req = append(req, data...)
		default:
			t.Fatalf("envelope has field %d", fc.FieldNum)
		}
	}
	return id, req
}

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func TestAppendEnvelope(t *testing.T) {
	big := testRequest(7, 300) // a length prefix of more than one byte
	for _, tc := range []struct {
		name string
		id   uint64
		req  []byte
		want []byte // nil: compare with unwrapEnvelope
		bad  bool
	}{
		{name: "empty request", id: 1, req: nil, want: []byte{0x08, 0x01}},
		{name: "id zero is omitted", id: 0, req: []byte{0x0a, 0x00}, want: []byte{0x12, 0x00}},
		{name: "large id", id: 1<<64 - 1, req: []byte{0x0a, 0x01, 0x08}},
		{name: "one resource", id: 42, req: testRequest(1, 1)},
		{name: "several resources", id: 300, req: append(testRequest(1, 2), testRequest(2, 3)...)},
		{name: "big", id: 5, req: big},
		{name: "other fields dropped", id: 1, req: []byte{0x18, 0x05, 0x0a, 0x00}, want: []byte{0x08, 0x01, 0x12, 0x00}},
		{name: "profiles dictionary", id: 1, req: []byte{0x12, 0x02, 0x2a, 0x00, 0x0a, 0x00}, want: []byte{0x08, 0x01, 0x1a, 0x02, 0x2a, 0x00, 0x12, 0x00}},
		{name: "profiles round trip", id: 9, req: []byte{0x0a, 0x00, 0x12, 0x03, 0x2a, 0x01, 0x78}},
		{name: "field 2 not a message dropped", id: 1, req: []byte{0x10, 0x01, 0x0a, 0x00}, want: []byte{0x08, 0x01, 0x12, 0x00}},
		{name: "truncated", id: 1, req: []byte{0x0a, 0x05, 0x01}, bad: true},
		{name: "field 1 not a message", id: 1, req: []byte{0x08, 0x01}, bad: true},
		{name: "bad tag", id: 1, req: []byte{0xff}, bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := []byte("prefix")
			got, err := AppendEnvelope(bytes.Clone(prefix), tc.id, tc.req)
			if (err != nil) != tc.bad {
				t.Fatalf("err %v", err)
			}
			if cerr := otlp.CheckExportRequest(tc.req); (cerr != nil) != tc.bad {
				t.Fatalf("checkExportRequest: %v", cerr)
			}
			if !bytes.HasPrefix(got, prefix) {
				t.Fatalf("prefix lost: %q", got)
			}
			if tc.bad {
				if !bytes.Equal(got, prefix) {
					t.Fatalf("dst changed on error: %x", got)
				}
				return
			}
			env := got[len(prefix):]
			if tc.want != nil {
				if !bytes.Equal(env, tc.want) {
					t.Fatalf("got %x, want %x", env, tc.want)
				}
				return
			}
			id, req := unwrapEnvelope(t, env)
			if id != tc.id || !bytes.Equal(req, tc.req) {
				t.Fatalf("round trip: id %d, request equal %v", id, bytes.Equal(req, tc.req))
			}
		})
	}
}

func appendAck(id uint64, code int32, msg string, delay time.Duration, withDelay bool, rejected int64) []byte {
	var mp easyproto.MarshalerPool
	m := mp.Get()
	mm := m.MessageMarshaler()
	mm.AppendUint64(1, id)
	mm.AppendInt32(2, code)
	if msg != "" {
		mm.AppendString(3, msg)
	}
	if withDelay {
		d := mm.AppendMessage(4)
		d.AppendInt64(1, int64(delay/time.Second))
		d.AppendInt32(2, int32(delay%time.Second))
	}
	if rejected != 0 {
		mm.AppendInt64(5, rejected)
	}
	return m.Marshal(nil)
}

func TestParseAck(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  []byte
		want Ack
		bad  bool
	}{
		{name: "empty is id 0 success", src: nil, want: Ack{}},
		{name: "proposal's two fields", src: []byte{0x08, 0x07, 0x10, 0x02}, want: Ack{ID: 7, Code: FailedRetryable}},
		{name: "all fields", src: appendAck(9, 2, "busy", 1500*time.Millisecond, true, 3),
			want: Ack{ID: 9, Code: FailedRetryable, Message: []byte("busy"), RetryDelay: 1500 * time.Millisecond, HasRetryDelay: true, Rejected: 3}},
		{name: "zero delay present", src: appendAck(1, 2, "", 0, true, 0), want: Ack{ID: 1, Code: FailedRetryable, HasRetryDelay: true}},
		{name: "unknown field skipped", src: append([]byte{0x08, 0x03}, 0x32, 0x01, 0x00), want: Ack{ID: 3}},
		{name: "negative delay is zero", src: []byte{0x08, 0x01, 0x22, 0x0b, 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
			want: Ack{ID: 1, HasRetryDelay: true}},
		{name: "huge delay clamped", src: []byte{0x08, 0x01, 0x22, 0x06, 0x08, 0xff, 0xff, 0xff, 0xff, 0x0f}, want: Ack{ID: 1, RetryDelay: otlp.MaxRetryDelay, HasRetryDelay: true}},
		{name: "truncated", src: []byte{0x08}, bad: true},
		{name: "id wrong wire type", src: []byte{0x0a, 0x00}, bad: true},
		{name: "bad duration", src: []byte{0x22, 0x01, 0x08}, bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a Ack
			err := ParseAck(tc.src, &a)
			if (err != nil) != tc.bad {
				t.Fatalf("err %v", err)
			}
			if tc.bad {
				return
			}
			if a.ID != tc.want.ID || a.Code != tc.want.Code || !bytes.Equal(a.Message, tc.want.Message) ||
				a.RetryDelay != tc.want.RetryDelay || a.HasRetryDelay != tc.want.HasRetryDelay || a.Rejected != tc.want.Rejected {
				t.Fatalf("got %+v, want %+v", a, tc.want)
			}
		})
	}
}

// TestHotPathAllocs: wrapping a request into a frame and parsing an
// acknowledgement reuse their buffers and allocate nothing.
func TestHotPathAllocs(t *testing.T) {
	req := NewSpanGenerator(500, 10, 1).AppendBatch(nil)
	ack := appendAck(12345, 0, "", 0, false, 0)
	var frame, scratch []byte
	var a Ack
	if n := testing.AllocsPerRun(100, func() {
		var err error
		frame, scratch, err = appendFrame(frame[:0], scratch, 0, 12345, req)
		if err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("appendFrame: %v allocs", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		if err := ParseAck(ack, &a); err != nil || a.ID != 12345 {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("ParseAck: %v allocs", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		if err := otlp.CheckExportRequest(req); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("checkExportRequest: %v allocs", n)
	}
}
