// Package pbtest builds protobuf wire bytes and reads the repository's
// golden OTLP payloads for the tests of otlppb, otlpdecode and otlpview.
// Core packages cannot use the generated OTLP types (the tests that do live
// in the interop module), so their tests write requests field by field.
package pbtest

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// PB is protobuf wire bytes; its methods append one field each.
type PB []byte

// Tag appends the tag of field num with wire type typ.
func (m PB) Tag(num, typ int) PB { return binary.AppendUvarint(m, uint64(num)<<3|uint64(typ)) }

// Msg appends a length-delimited field.
func (m PB) Msg(num int, b PB) PB {
	return append(binary.AppendUvarint(m.Tag(num, 2), uint64(len(b))), b...)
}

// Str appends a string field.
func (m PB) Str(num int, s string) PB { return m.Msg(num, PB(s)) }

// Varint appends a varint field.
func (m PB) Varint(num int, v uint64) PB { return binary.AppendUvarint(m.Tag(num, 0), v) }

// Fixed64 appends an I64 field.
func (m PB) Fixed64(num int, v uint64) PB {
	return binary.LittleEndian.AppendUint64(m.Tag(num, 1), v)
}

// Fixed32 appends an I32 field.
func (m PB) Fixed32(num int, v uint32) PB {
	return binary.LittleEndian.AppendUint32(m.Tag(num, 5), v)
}

// Append appends raw bytes.
func (m PB) Append(b PB) PB { return append(m, b...) }

// IDs returns n bytes counting up from seed: an id that is not all zeroes.
func IDs(n int, seed byte) PB {
	b := make(PB, n)
	for i := range b {
		b[i] = seed + byte(i)
	}
	return b
}

// StrAttr is a KeyValue with a string value.
func StrAttr(k, v string) PB { return PB{}.Str(1, k).Msg(2, PB{}.Str(1, v)) }

// IntAttr is a KeyValue with an int value.
func IntAttr(k string, v int64) PB { return PB{}.Str(1, k).Msg(2, PB{}.Varint(3, uint64(v))) }

// Span returns a Span with ids of the given lengths, a name, times, two
// attributes and a status, then extra fields.
func Span(traceLen, spanLen int, extra PB) PB {
	return PB{}.Msg(1, IDs(traceLen, 1)).Msg(2, IDs(spanLen, 2)).Str(5, "op").
		Fixed64(7, 1).Fixed64(8, 2).Msg(9, StrAttr("k", "v")).Msg(9, IntAttr("n", -1)).
		Msg(15, PB{}.Varint(3, 1)).Append(extra)
}

// Request wraps items into Export*ServiceRequest / ResourceX / ScopeX, one
// scope per group of items; resource and scope are optional payloads.
func Request(resource, scope PB, scopes ...[]PB) PB {
	var rs PB
	if resource != nil {
		rs = rs.Msg(1, resource)
	}
	for _, items := range scopes {
		var ss PB
		if scope != nil {
			ss = ss.Msg(1, scope)
		}
		for _, it := range items {
			ss = ss.Msg(2, it)
		}
		rs = rs.Msg(2, ss)
	}
	return PB{}.Msg(1, rs)
}

// GoldenDir returns the directory of the golden payloads, written by the
// interop module's TestWriteGoldenPayloads with the official OTLP types:
// testdata/otlp at the root of the repository, found from the working
// directory (a package directory when go test runs).
func GoldenDir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		golden := filepath.Join(dir, "testdata", "otlp")
		if _, err := os.Stat(golden); err == nil {
			return golden
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("no testdata/otlp above the working directory")
		}
		dir = parent
	}
}

// Golden reads a golden payload.
func Golden(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(GoldenDir(tb), name))
	if err != nil {
		tb.Fatalf("cannot read golden payload: %v", err)
	}
	return b
}

// GoldenSeeds adds the golden payloads whose names start with prefix
// ("traces", "metrics", "logs") to a fuzz target's corpus, besides the
// seeds under its testdata/fuzz/<FuzzName>, each with both values of the
// target's bool argument.
func GoldenSeeds(f *testing.F, prefix string) {
	files, err := filepath.Glob(filepath.Join(GoldenDir(f), prefix+"*.pb"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no golden payloads for %s: %v", prefix, err)
	}
	for _, path := range files {
		if strings.Contains(filepath.Base(path), "500x10") {
			continue // too large to mutate usefully
		}
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, false)
		f.Add(b, true)
	}
}

// BenchItems runs fn as the benchmark's operation on src, which holds items
// items (spans, data points, log records), and reports ns/item besides
// ns/op: the unit the receiver's budget is stated in.
func BenchItems(b *testing.B, src []byte, items int, fn func()) {
	b.ReportAllocs()
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		fn()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(items), "ns/item")
}
