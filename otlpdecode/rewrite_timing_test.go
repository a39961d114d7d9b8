package kafka

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func BenchmarkAppendResources(b *testing.B) {
	msg, err := os.ReadFile(filepath.Join("..", "..", "testdata", "otlp", "traces_all_fields.pb"))
	if err != nil {
		b.Fatal(err)
	}
	many := bytes.Repeat(msg, 100) // 100 resources, 1.2 MB: split into pieces of 10
	var (
		dst    []byte
		pieces []piece
	)
	b.SetBytes(int64(len(many)))
	b.ReportAllocs()
	for b.Loop() {
		dst, pieces, err = appendResources(dst[:0], pieces[:0], many, 10*len(msg), -1, -1, "resource_spans")
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(pieces)), "pieces")
}

func BenchmarkAppendByTrace(b *testing.B) {
	msg, err := os.ReadFile(filepath.Join("..", "..", "testdata", "otlp", "traces_500x10.pb"))
	if err != nil {
		b.Fatal(err)
	}
	var (
		dst    []byte
		pieces []piece
		ts     traceSplitter
	)
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		dst, pieces, err = ts.appendByTrace(dst[:0], pieces[:0], msg, DefaultMaxMessageBytes-recordOverhead, 1, false, "resource_spans", nil)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(pieces)), "pieces")
}
