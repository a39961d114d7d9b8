//go:build otelarrow

package arrowreceiver

import (
	"context"
	"encoding/binary"
	"runtime"
	"strings"
	"testing"

	"github.com/open-telemetry/otel-arrow/go/pkg/otel/arrow_record"

	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage/discard"
)

// firstMessage returns the offset and length of the first IPC message's
// flatbuffer in a payload record.
func firstMessage(t *testing.T, rec []byte) (int, int) {
	t.Helper()
	if binary.LittleEndian.Uint32(rec) != 0xffffffff {
		t.Fatal("no continuation token")
	}
	return 8, int(binary.LittleEndian.Uint32(rec[4:]))
}

// TestDeclaredSizesRefused: an IPC message declaring a schema of 2^31
// fields, a body past its record's end, or a metadata length past it, is
// refused before arrow-go reads it, allocating next to nothing (arrow-go
// would make a 2^31-field slice, or size the metadata or body as declared).
func TestDeclaredSizesRefused(t *testing.T) {
	p := ingest.New(ingest.Config{Sink: &discard.Sink{}})
	for _, c := range []struct {
		name, want string
		forge      func(t *testing.T, rec []byte)
	}{
		{"schema fields", "flatbuffer", func(t *testing.T, rec []byte) {
			at, n := firstMessage(t, rec)
			f := &fbuf{b: rec[at : at+n]}
			root, _ := f.u32(0)
			header, _ := f.ref(root, 2)
			v, ok := f.ref(header, 1)
			if !ok || v == 0 {
				t.Fatal("no fields vector")
			}
			binary.LittleEndian.PutUint32(f.b[v:], 1<<31-1)
		}},
		{"body length", "body of", func(t *testing.T, rec []byte) {
			at, n := firstMessage(t, rec)
			f := &fbuf{b: rec[at : at+n]}
			root, _ := f.u32(0)
			slot, ok := f.field(root, 3)
			if !ok || slot == 0 {
				// The schema message has no body: forge the next one's.
				next := at + n
				n2 := int(binary.LittleEndian.Uint32(rec[next+4:]))
				f = &fbuf{b: rec[next+8 : next+8+n2]}
				root, _ = f.u32(0)
				slot, ok = f.field(root, 3)
				if !ok || slot == 0 {
					t.Fatal("no bodyLength")
				}
			}
			binary.LittleEndian.PutUint64(f.b[slot:], 1<<40)
		}},
		{"metadata length", "metadata of", func(t *testing.T, rec []byte) {
			binary.LittleEndian.PutUint32(rec[4:], 1<<31-1)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			prod := arrow_record.NewProducer()
			defer prod.Close()
			bar, err := prod.BatchArrowRecordsFromTraces(makeTraces(1, 10, 0))
			if err != nil {
				t.Fatal(err)
			}
			c.forge(t, bar.ArrowPayloads[0].Record)
			d := newDecoder(context.Background(), p, DefaultMemoryLimit, DefaultMaxBatchRows)
			defer d.close()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, _, err = d.decode(bar, otlp.Traces, nil)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error saying %q", err, c.want)
			}
			if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
				t.Fatalf("refusing it allocated %d bytes", got)
			}
		})
	}
}
