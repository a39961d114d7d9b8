//go:build otelarrow

package arrowreceiver

import (
	"bytes"
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	arrowpb "github.com/open-telemetry/otel-arrow/go/api/experimental/arrow/v1"

	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/storage/discard"
)

// TestDecompressIPCSameRecords reads producer streams of every signal
// twice, once as they came (arrow-go decompressing) and once rewritten
// by decompressIPC, and requires the same records, schemas and
// dictionaries included; and that the rewrite is what the producer's
// output takes (every payload is compressed), and is charged, then freed.
func TestDecompressIPCSameRecords(t *testing.T) {
	p := ingest.New(ingest.Config{Sink: &discard.Sink{}})
	for name, bars := range map[string][]*arrowpb.BatchArrowRecords{
		"traces":  randomStream(t, 3, 6, 100),
		"logs":    randomLogStream(t, 3, 6, 100),
		"metrics": randomMetricStream(t, 3, 6, 100),
	} {
		t.Run(name, func(t *testing.T) {
			alloc := newBudgetAllocator(context.Background(), p, 64<<20)
			defer alloc.release()
			as, bs := map[string]*ipcStream{}, map[string]*ipcStream{}
			rewritten := 0
			var msgs []ipcMsg
			for _, bar := range bars {
				for _, pl := range bar.ArrowPayloads {
					if err := checkIPC(pl.Record); err != nil {
						t.Fatal(err)
					}
					raw, ok, m, err := decompressIPC(pl.Record, alloc, msgs)
					msgs = m
					if err != nil {
						t.Fatal(err)
					}
					in := pl.Record
					if ok {
						rewritten++
						in = raw
					}
					ra := next(t, as, pl.SchemaId, pl.Record)
					rb := next(t, bs, pl.SchemaId, in)
					if ok {
						alloc.Free(raw[:cap(raw)])
					}
					if !array.RecordEqual(ra, rb) {
						t.Fatalf("%v: the rewritten record differs:\n%v\n%v", pl.Type, ra, rb)
					}
					ra.Release()
					rb.Release()
				}
			}
			if rewritten == 0 {
				t.Fatal("no payload was rewritten: the producer's output is not zstd-compressed?")
			}
			for _, m := range []map[string]*ipcStream{as, bs} {
				for _, s := range m {
					s.rd.Release()
				}
			}
			if alloc.inuse != 0 {
				t.Fatalf("%d bytes of the allocator in use after the streams", alloc.inuse)
			}
		})
	}
}

// next reads one record of a payload with the stream's reader of its
// schema id.
func next(t *testing.T, readers map[string]*ipcStream, id string, b []byte) arrow.RecordBatch {
	t.Helper()
	s := readers[id]
	if s == nil {
		s = &ipcStream{buf: bytes.NewReader(nil)}
		readers[id] = s
	}
	s.buf.Reset(b)
	if s.rd == nil {
		rd, err := ipc.NewReader(s.buf, ipc.WithAllocator(memory.NewGoAllocator()), ipc.WithDictionaryDeltas(true), ipc.WithZstd())
		if err != nil {
			t.Fatal(err)
		}
		s.rd = rd
	}
	if !s.rd.Next() {
		t.Fatalf("no record: %v", s.rd.Err())
	}
	r := s.rd.RecordBatch()
	r.Retain()
	return r
}
