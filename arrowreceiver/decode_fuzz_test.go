//go:build otelarrow

package arrowreceiver

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	arrowpb "github.com/open-telemetry/otel-arrow/go/api/experimental/arrow/v1"
	"github.com/open-telemetry/otel-arrow/go/pkg/otel/arrow_record"
	"google.golang.org/protobuf/proto"

	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/storage/discard"
)

// A fuzz input is up to fuzzBatches BatchArrowRecords messages of one
// stream, each after its length as a uvarint: the Arrow state (schemas,
// dictionaries) carries from one to the next, as on a stream.
const fuzzBatches = 4

// FuzzDecode feeds BatchArrowRecords messages to one stream's decoder:
// whatever they hold, decoding returns (no panic escapes), stays within
// the stream's memory limit, and its state charge is whole again once the
// stream's decoder is closed.
func FuzzDecode(f *testing.F) {
	for _, kind := range []string{"traces", "metrics", "logs"} {
		f.Add(seedStream(f, kind))
	}
	p := ingest.New(ingest.Config{Sink: &discard.Sink{}})
	f.Fuzz(func(t *testing.T, data []byte) {
		d := newDecoder(context.Background(), p, 4<<20, 10_000)
		defer func() {
			d.close()
			if held := p.StreamStateHeld(); held != 0 {
				t.Fatalf("%d bytes of state held after close", held)
			}
		}()
		var b batch
		for range fuzzBatches {
			n, k := binary.Uvarint(data)
			if k <= 0 || n > uint64(len(data)-k) {
				return
			}
			msg := data[k : k+int(n)]
			data = data[k+int(n):]
			if err := parseBatch(msg, &b); err != nil || len(b.bar.ArrowPayloads) == 0 {
				continue
			}
			sig, ok := signalOf(b.bar.ArrowPayloads[0].Type)
			if !ok {
				continue
			}
			if _, _, err := d.decode(&b.bar, sig, nil); err != nil {
				return // the stream ends at its first error
			}
			if d.alloc.peak > d.alloc.limit {
				t.Fatalf("allocator peak %d over its limit %d", d.alloc.peak, d.alloc.limit)
			}
		}
	})
}

// seedStream returns three batches of kind from one producer, as a fuzz
// input.
func seedStream(tb testing.TB, kind string) []byte {
	prod := arrow_record.NewProducer()
	defer prod.Close()
	var out []byte
	for i := range 3 {
		var bar *arrowpb.BatchArrowRecords
		var err error
		switch kind {
		case "traces":
			bar, err = prod.BatchArrowRecordsFromTraces(makeTraces(i, 3+i, 0))
		case "metrics":
			bar, err = prod.BatchArrowRecordsFromMetrics(makeMetrics(i, 2+i))
		default:
			bar, err = prod.BatchArrowRecordsFromLogs(makeLogs(i, 3+i))
		}
		if err != nil {
			tb.Fatal(err)
		}
		m, err := proto.Marshal(bar)
		if err != nil {
			tb.Fatal(err)
		}
		out = binary.AppendUvarint(out, uint64(len(m)))
		out = append(out, m...)
	}
	return out
}

// TestWriteFuzzSeeds writes the seed corpus (testdata/fuzz/FuzzDecode)
// when ARROWRECEIVER_WRITE_SEEDS is set: producer output of each signal.
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("ARROWRECEIVER_WRITE_SEEDS") == "" {
		t.Skip("set ARROWRECEIVER_WRITE_SEEDS=1 to rewrite testdata/fuzz/FuzzDecode")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzDecode")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"traces", "metrics", "logs"} {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%s)\n", strconv.Quote(string(seedStream(t, kind))))
		if err := os.WriteFile(filepath.Join(dir, kind), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
