package kafka

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/otlp-lite/otlp-lite/storage"
)

// BenchmarkResourceKey hashes the attributes of every resource of a real
// request, as partition_*_by_resource_attributes does for each record.
func BenchmarkResourceKey(b *testing.B) {
	msg, err := os.ReadFile(filepath.Join("..", "..", "testdata", "otlp", "metrics_all_kinds.pb"))
	if err != nil {
		b.Fatal(err)
	}
	var (
		h      attrHasher
		dst    []byte
		pieces []piece
	)
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		dst, pieces, err = appendPerResource(dst[:0], pieces[:0], msg, storage.Metrics, len(msg), &h, true, nil)
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStringAttr finds topic_from_attribute's resource attribute.
func BenchmarkStringAttr(b *testing.B) {
	msg, err := os.ReadFile(filepath.Join("..", "..", "testdata", "otlp", "traces_500x10.pb"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := stringAttr(msg, "service.name"); !ok {
			b.Fatal("no service.name")
		}
	}
}
