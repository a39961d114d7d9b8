package otlppb

import (
	"bytes"
	"testing"

	"github.com/VictoriaMetrics/easyproto"

	"github.com/otlp-lite/otlp-lite/internal/pbtest"
)

// FuzzNextField holds the field reader (Field.Read and its fast paths
// ReadShort, ShortLen, SmallVarint and SkipScalar) to NextField, the easyproto-based reader: on every input they read the same
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
			var f Field
			gotTail, gotErr := f.Read(got)
			if (gotErr != nil) != (wantErr != nil) {
				t.Fatalf("at byte %d: Read error %v, NextField error %v", len(src)-len(want), gotErr, wantErr)
			}
			if wantErr != nil {
				return
			}
			if f.FieldNum != fc.FieldNum || len(gotTail) != len(wantTail) {
				t.Fatalf("at byte %d: Read read field %d to %d bytes left, NextField field %d to %d", len(src)-len(want), f.FieldNum, len(gotTail), fc.FieldNum, len(wantTail))
			}
			checkSameValue(t, &f, &fc)
			// SkipScalar skips exactly the field Read reads, or
			// nothing.
			if tail, ok := SkipScalar(got); ok {
				if len(tail) != len(gotTail) || f.wire == WireLen {
					t.Fatalf("at byte %d: SkipScalar left %d bytes, Read %d", len(src)-len(want), len(tail), len(gotTail))
				}
			} else if !bytes.Equal(tail, got) {
				t.Fatalf("at byte %d: SkipScalar moved without skipping", len(src)-len(want))
			}
			// SmallVarint and ShortLen read exactly the field Read
			// reads, or nothing.
			if num, v, n, ok := SmallVarint(got); ok {
				if w, _ := fc.Uint64(); n != len(got)-len(gotTail) || num != f.FieldNum || v != w || f.wire != WireVarint {
					t.Fatalf("at byte %d: SmallVarint read field %d = %d in %d bytes, Read field %d in %d", len(src)-len(want), num, v, n, f.FieldNum, len(got)-len(gotTail))
				}
			}
			if num, end, ok := ShortLen(got); ok {
				if w, _ := fc.MessageData(); end != len(got)-len(gotTail) || num != f.FieldNum || !bytes.Equal(got[2:end], w) || f.wire != WireLen {
					t.Fatalf("at byte %d: ShortLen read field %d to byte %d, Read field %d to %d", len(src)-len(want), num, end, f.FieldNum, len(got)-len(gotTail))
				}
			}
			// ReadShort reads exactly the field Read reads, or nothing.
			var short Field
			if tail, ok := short.ReadShort(got); ok {
				if len(tail) != len(gotTail) || short.FieldNum != f.FieldNum {
					t.Fatalf("at byte %d: ReadShort read field %d to %d bytes left, Read field %d to %d", len(src)-len(want), short.FieldNum, len(tail), f.FieldNum, len(gotTail))
				}
				checkSameValue(t, &short, &fc)
			} else if !bytes.Equal(tail, got) {
				t.Fatalf("at byte %d: ReadShort moved without reading", len(src)-len(want))
			}
			want, got = wantTail, gotTail
		}
	})
}

func checkSameValue(t *testing.T, f *Field, fc *easyproto.FieldContext) {
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
