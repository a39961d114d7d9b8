package otlpjson

import (
	"os"
	"testing"
)

// benchPayloads are the real protobuf payloads of the repository-level
// testdata/otlp directory.
var benchPayloads = []struct {
	file string
	t    MessageType
}{
	{"../testdata/otlp/traces_500x10.pb", TracesData},
	{"../testdata/otlp/traces_all_fields.pb", TracesData},
	{"../testdata/otlp/metrics_all_kinds.pb", MetricsData},
	{"../testdata/otlp/logs_all_fields.pb", LogsData},
}

func readBenchPayload(b *testing.B, file string) []byte {
	src, err := os.ReadFile(file)
	if err != nil {
		b.Skipf("payload not available: %v", err)
	}
	return src
}

// BenchmarkMarshal reports protobuf input bytes per second.
func BenchmarkMarshal(b *testing.B) {
	for _, p := range benchPayloads {
		b.Run(p.file[len("../testdata/otlp/"):], func(b *testing.B) {
			src := readBenchPayload(b, p.file)
			dst, err := Marshal(nil, p.t, src)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				dst := make([]byte, 0, cap(dst))
				for pb.Next() {
					dst, _ = Marshal(dst[:0], p.t, src)
				}
			})
		})
	}
}
