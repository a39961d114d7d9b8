package otlpdecode

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/otlp-lite/otlp-lite/otlp"
)

func BenchmarkAppendResources(b *testing.B) {
	msg, err := os.ReadFile(filepath.Join("..", "testdata", "otlp", "traces_all_fields.pb"))
	if err != nil {
		b.Fatal(err)
	}
	many := bytes.Repeat(msg, 100) // 100 resources, 1.2 MB: split into pieces of 10
	var (
		dst    []byte
		pieces []Piece
	)
	b.SetBytes(int64(len(many)))
	b.ReportAllocs()
	for b.Loop() {
		dst, pieces, err = AppendResources(dst[:0], pieces[:0], many, otlp.Traces, 10*len(msg), -1, -1)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(pieces)), "pieces")
}

func BenchmarkAppendByTrace(b *testing.B) {
	msg, err := os.ReadFile(filepath.Join("..", "testdata", "otlp", "traces_500x10.pb"))
	if err != nil {
		b.Fatal(err)
	}
	var (
		dst    []byte
		pieces []Piece
		ts     TraceSplitter
	)
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		dst, pieces, err = ts.AppendByTrace(dst[:0], pieces[:0], msg, otlp.Traces, 1_000_000-128 /* the Kafka sink's default record limit */, rwSpanKey, nil)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(pieces)), "pieces")
}
