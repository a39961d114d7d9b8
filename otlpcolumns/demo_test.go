package otlpcolumns

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkDecodeDemo decodes a stream's columns messages as
// bench/cmd/wirebytes -dump-columns FILE writes them (the demo data, its
// messages decompressed; FILE.1.0 is traces SDK-sized, FILE.2.1 metrics
// at 8,192 points), from the file in $OTLPCOLUMNS_DEMO (skipped without
// it), with the generated walks and with interp alone; a decoder per
// 1,000 messages, as wirebytes' streams; the output buffer kept from
// message to message, or new for each (-fresh). For the instructions per item:
// bench/callgrind-ab.sh, or valgrind on the test binary.
func BenchmarkDecodeDemo(b *testing.B) {
	file := os.Getenv("OTLPCOLUMNS_DEMO")
	if file == "" {
		b.Skip("OTLPCOLUMNS_DEMO is not set: the file bench/cmd/wirebytes -dump-columns writes")
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	sig := Traces
	if strings.HasPrefix(strings.TrimPrefix(filepath.Ext(strings.TrimSuffix(file, filepath.Ext(file))), "."), "2") {
		sig = Metrics
	}
	var msgs [][]byte
	for len(raw) > 0 {
		l, k := binary.Uvarint(raw)
		if k <= 0 || l > uint64(len(raw)-k) {
			b.Fatal("the file is not what wirebytes -dump-columns writes")
		}
		msgs, raw = append(msgs, raw[k:k+int(l)]), raw[k+int(l):]
	}
	for _, c := range []struct {
		name          string
		interp, fresh bool
	}{{"generated", false, false}, {"interp", true, false}, {"generated-fresh", false, true}, {"interp-fresh", true, true}} {
		// -fresh: each message into a new buffer, as the handler's
		// (its dst is the compressed message's buffer): the garbage
		// collector runs as often as the server's would for it.
		b.Run(c.name, func(b *testing.B) {
			var out []byte
			b.ReportAllocs()
			for b.Loop() {
				var d *Decoder
				for i, m := range msgs {
					if i%1000 == 0 {
						d = NewDecoder(sig)
						d.interpOnly = c.interp
					}
					if c.fresh {
						out = nil
					}
					var err error
					if out, err = d.Decode(out[:0], m, 64<<20, nil); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
