package otlpjson

import (
	"testing"
)

// BenchmarkUnmarshal reports JSON input bytes per second, decoding the
// canonical JSON form of the benchmark payloads.
func BenchmarkUnmarshal(b *testing.B) {
	for _, p := range benchPayloads {
		b.Run(p.file[len("../testdata/otlp/"):], func(b *testing.B) {
			js, err := Marshal(nil, p.t, readBenchPayload(b, p.file))
			if err != nil {
				b.Fatal(err)
			}
			pb, err := Unmarshal(nil, p.t, js)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(js)))
			b.ReportAllocs()
			b.RunParallel(func(p2 *testing.PB) {
				dst := make([]byte, 0, cap(pb))
				for p2.Next() {
					dst, _ = Unmarshal(dst[:0], p.t, js)
				}
			})
		})
	}
}
