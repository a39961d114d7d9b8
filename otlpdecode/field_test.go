package otlpdecode

import (
	"bytes"
	"testing"

	"github.com/VictoriaMetrics/easyproto"

	"github.com/otlp-lite/otlp-lite/otlpdecode/internal/pbtest"
)

// FuzzNextField holds the checker's field reader (nextField and its fast
// paths readShort and skipScalar) to NextField, the easyproto-based reader
// that otlpjson and otlpview use: on every input they read the same
// fields, with the same values, to the same tail, and fail together. Its
// seeds are the golden payloads and testdata/fuzz/FuzzNextField: real
// requests and the edge cases of the wire format (truncated fields, field
// number 0, groups, wire type 6, a field number past 2^29-1, an endless
// tag, two-byte lengths).
func FuzzNextField(f *testing.F) {
	pbtest.GoldenSeeds(f, "traces")
	pbtest.GoldenSeeds(f, "metrics")
	f.Fuzz(func(t *testing.T, src []byte, _ bool) {
		want := src
		got := src
		for len(want) > 0 {
			var fc easyproto.FieldContext
			wantTail, wantErr := NextField(&fc, want)
			var f wireField
			gotTail, gotErr := nextField(&f, got)
			if (gotErr != nil) != (wantErr != nil) {
				t.Fatalf("at byte %d: nextField error %v, NextField error %v", len(src)-len(want), gotErr, wantErr)
			}
			if wantErr != nil {
				return
			}
			if f.FieldNum != fc.FieldNum || len(gotTail) != len(wantTail) {
				t.Fatalf("at byte %d: nextField read field %d to %d bytes left, NextField field %d to %d", len(src)-len(want), f.FieldNum, len(gotTail), fc.FieldNum, len(wantTail))
			}
			checkSameValue(t, &f, &fc)
			// skipScalar skips exactly the field nextField reads, or
			// nothing.
			if tail, ok := skipScalar(got); ok {
				if len(tail) != len(gotTail) || f.wire == wireLen {
					t.Fatalf("at byte %d: skipScalar left %d bytes, nextField %d", len(src)-len(want), len(tail), len(gotTail))
				}
			} else if !bytes.Equal(tail, got) {
				t.Fatalf("at byte %d: skipScalar moved without skipping", len(src)-len(want))
			}
			want, got = wantTail, gotTail
		}
	})
}

func checkSameValue(t *testing.T, f *wireField, fc *easyproto.FieldContext) {
	t.Helper()
	gd, gok := f.MessageData()
	wd, wok := fc.MessageData()
	if gok != wok || !bytes.Equal(gd, wd) {
		t.Fatalf("field %d: MessageData %x %v, want %x %v", f.FieldNum, gd, gok, wd, wok)
	}
	if gs, ok := f.String(); ok != wok || gs != string(wd) {
		t.Fatalf("field %d: String %q %v, want %q %v", f.FieldNum, gs, ok, wd, wok)
	}
	gv, gok := f.Uint64()
	wv, wok := fc.Uint64()
	if gok != wok || (gok && gv != wv) {
		t.Fatalf("field %d: Uint64 %d %v, want %d %v", f.FieldNum, gv, gok, wv, wok)
	}
	gv, gok = f.Fixed64()
	wv, wok = fc.Fixed64()
	if gok != wok || (gok && gv != wv) {
		t.Fatalf("field %d: Fixed64 %d %v, want %d %v", f.FieldNum, gv, gok, wv, wok)
	}
	g32, gok := f.Fixed32()
	w32, wok := fc.Fixed32()
	if gok != wok || (gok && g32 != w32) {
		t.Fatalf("field %d: Fixed32 %d %v, want %d %v", f.FieldNum, g32, gok, w32, wok)
	}
}
