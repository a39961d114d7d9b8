package otlp

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/VictoriaMetrics/easyproto"
)

// exportRequestFields is req as the envelope carries it: its field-1 and
// field-2 messages, in order, each re-encoded with a minimal length.
func exportRequestFields(req []byte) []byte {
	var out []byte
	var fc easyproto.FieldContext
	for src := req; len(src) > 0; {
		var err error
		if src, err = fc.NextField(src); err != nil {
			return nil
		}
		if data, ok := fc.MessageData(); ok && (fc.FieldNum == 1 || fc.FieldNum == 2) {
			out = append(out, byte(fc.FieldNum)<<3|2)
			out = binary.AppendUvarint(out, uint64(len(data)))
			out = append(out, data...)
		}
	}
	return out
}

func TestEnvelope(t *testing.T) {
	req := []byte("\x0a\x0a\x12\x08\x12\x06\x2a\x04\x73\x70\x61\x6e\x0a\x00")
	env, err := AppendEnvelope([]byte("prefix"), 300, req)
	if err != nil || !bytes.HasPrefix(env, []byte("prefix")) {
		t.Fatalf("AppendEnvelope: %x, %v", env, err)
	}
	id, got, err := UnwrapEnvelope(env[len("prefix"):])
	if err != nil || id != 300 || !bytes.Equal(got, req) {
		t.Fatalf("UnwrapEnvelope: %d %x %v", id, got, err)
	}
	// A profiles request: resource_profiles, the dictionary (field 2,
	// envelope field 3), resource_profiles again.
	preq := []byte("\x0a\x02\x12\x00\x12\x03\x2a\x01\x78\x0a\x00")
	env, err = AppendEnvelope(nil, 7, preq)
	if want := []byte("\x08\x07\x12\x02\x12\x00\x1a\x03\x2a\x01\x78\x12\x00"); err != nil || !bytes.Equal(env, want) {
		t.Fatalf("AppendEnvelope(profiles) = %x, %v; want %x", env, err, want)
	}
	if id, got, err := UnwrapEnvelope(env); err != nil || id != 7 || !bytes.Equal(got, preq) {
		t.Fatalf("UnwrapEnvelope(profiles): %d %x %v", id, got, err)
	}
	for _, bad := range [][]byte{{0x0a, 0x05, 0x01}, {0x08, 0x01}} {
		if out, err := AppendEnvelope([]byte("x"), 1, bad); err == nil || string(out) != "x" || CheckExportRequest(bad) == nil {
			t.Fatalf("%x: AppendEnvelope accepted it", bad)
		}
	}
	if _, _, err := UnwrapEnvelope([]byte{0x12, 0x05, 0x01}); err == nil {
		t.Fatal("UnwrapEnvelope accepted a truncated field")
	}
}

func TestAck(t *testing.T) {
	for _, tc := range []struct {
		id       uint64
		code     ResultCode
		msg      string
		delay    time.Duration
		rejected int64
	}{
		{12345, Success, "", 0, 0},
		{1, Success, "1 of 2 spans rejected", 0, 1},
		{9, FailedRetryable, "busy", 1500 * time.Millisecond, 0},
		{9, FailedRetryable, "rotated", 0, 0},
		{2, FailedNoneRetryable, "bad", 0, 0},
	} {
		src := AppendAck(nil, tc.id, tc.code, tc.msg, tc.delay, tc.rejected)
		var a Ack
		if err := ParseAck(src, &a); err != nil {
			t.Fatal(err)
		}
		if a.ID != tc.id || a.Code != tc.code || string(a.Message) != tc.msg || a.RetryDelay != tc.delay ||
			a.HasRetryDelay != (tc.code == FailedRetryable) || a.Rejected != tc.rejected {
			t.Fatalf("%+v: got %+v", tc, a)
		}
	}
}

// TestEnvelopeAllocs: neither direction allocates.
func TestEnvelopeAllocs(t *testing.T) {
	req := []byte("\x0a\x0a\x12\x08\x12\x06\x2a\x04\x73\x70\x61\x6e")
	env, _ := AppendEnvelope(nil, 12345, req)
	buf := make([]byte, 0, 256)
	ack := AppendAck(nil, 12345, FailedRetryable, "busy", time.Second, 0)
	var a Ack
	if n := testing.AllocsPerRun(100, func() {
		buf, _ = AppendEnvelope(buf[:0], 12345, req)
		if err := CheckExportRequest(req); err != nil {
			t.Fatal(err)
		}
		msg := append(buf[:0], env...)
		if _, _, err := UnwrapEnvelope(msg); err != nil {
			t.Fatal(err)
		}
		if err := ParseAck(ack, &a); err != nil || a.ID != 12345 {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("%v allocs", n)
	}
	if raceEnabled {
		return
	}
	if n := testing.AllocsPerRun(100, func() {
		buf = AppendAck(buf[:0], 12345, FailedRetryable, "busy", time.Second, 0)
	}); n != 0 {
		t.Fatalf("AppendAck: %v allocs", n)
	}
}

// FuzzEnvelope round-trips both directions of the envelope: a request
// wrapped by AppendEnvelope unwraps to its id and its field-1 messages, and
// an ExportResponse written by AppendAck parses back to what was written.
// Arbitrary bytes given to UnwrapEnvelope and ParseAck do not break them.
func FuzzEnvelope(f *testing.F) {
	f.Add(uint64(300), []byte("\x0a\x0a\x12\x08\x12\x06\x2a\x04\x73\x70\x61\x6e"), int32(0), "", int64(0), int64(0))
	f.Add(uint64(7), []byte("\x0a\x02\x12\x00\x12\x03\x2a\x01\x78\x0a\x00"), int32(0), "", int64(0), int64(1))
	f.Add(uint64(9), []byte("\x08\x09\x10\x02\x1a\x04busy\x22\x05\x08\x01\x10\xe8\x07"), int32(2), "busy", int64(1500*time.Millisecond), int64(0))
	f.Fuzz(func(t *testing.T, id uint64, req []byte, code int32, msg string, delay, rejected int64) {
		// Request direction.
		env, err := AppendEnvelope(nil, id, req)
		if (CheckExportRequest(req) != nil) != (err != nil) {
			t.Fatalf("CheckExportRequest and AppendEnvelope disagree: %v", err)
		}
		if err == nil {
			gotID, got, err := UnwrapEnvelope(env)
			if want := exportRequestFields(req); err != nil || gotID != id || !bytes.Equal(got, want) {
				t.Fatalf("request round trip: id %d/%d, payload %x/%x, %v", gotID, id, got, want, err)
			}
		}
		if _, got, err := UnwrapEnvelope(bytes.Clone(req)); err == nil && len(got) > len(req) {
			t.Fatalf("unwrapped %d bytes from %d", len(got), len(req))
		}

		// Response direction.
		src := AppendAck(nil, id, ResultCode(code), msg, time.Duration(delay), rejected)
		var a Ack
		if err := ParseAck(src, &a); err != nil {
			t.Fatalf("ParseAck(AppendAck): %v", err)
		}
		wantDelay := min(max(time.Duration(delay), 0), MaxRetryDelay)
		if code != int32(FailedRetryable) {
			wantDelay = 0
		}
		if a.ID != id || a.Code != ResultCode(code) || string(a.Message) != msg || a.Rejected != rejected ||
			a.HasRetryDelay != (code == int32(FailedRetryable)) || a.RetryDelay != wantDelay {
			t.Fatalf("response round trip: got %+v", a)
		}
		if err := ParseAck(req, &a); err == nil {
			if a.RetryDelay < 0 || a.RetryDelay > MaxRetryDelay || len(a.Message) > len(req) {
				t.Fatalf("ParseAck(%x) = %+v", req, a)
			}
		}
	})
}
