package forward

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/otlpclient"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// countingStore is a destination's disk store that counts records, so the
// benchmark knows when everything arrived.
type countingStore struct {
	*disk.Store
	n atomic.Int64
}

func (s *countingStore) Write(ctx context.Context, sig storage.Signal, data []byte, items int) error {
	err := s.Store.Write(ctx, sig, data, items)
	if err == nil {
		s.n.Add(1)
	}
	return err
}

// benchDestination is another otlp-lite: the handler in front of a disk
// store (group commit, fsync), as `serve` runs it.
func benchDestination(b *testing.B) (*countingStore, string) {
	st, err := disk.Open(b.TempDir(), disk.Options{})
	if err != nil {
		b.Fatal(err)
	}
	cs := &countingStore{Store: st}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: handler.New(handler.Config{Sink: cs, Logger: quiet()}), Protocols: new(http.Protocols)}
	srv.Protocols.SetUnencryptedHTTP2(true)
	srv.Protocols.SetHTTP1(true)
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close(); st.Close() })
	return cs, ln.Addr().String()
}

// benchBatches are the side-by-side benchmark's requests (loadgen's
// defaults: 500 spans of 10 attributes, about 100 KiB each).
func benchBatches() [][]byte {
	gen := otlpclient.NewSpanGenerator(500, 10, 1)
	out := make([][]byte, 16)
	for i := range out {
		out[i] = gen.AppendBatch(nil)
	}
	return out
}

func waitCount(b *testing.B, cs *countingStore, n int64) {
	deadline := time.Now().Add(10 * time.Minute)
	for cs.n.Load() < n {
		if time.Now().After(deadline) {
			b.Fatalf("only %d of %d records arrived", cs.n.Load(), n)
		}
		time.Sleep(time.Millisecond) // polling
	}
}

// BenchmarkForward measures forwarding from a disk log to another
// otlp-lite (handler and disk store), per record of 500 spans: the log is
// filled first, then the clock runs until the destination stored all.
// Compare with BenchmarkIngest (the same destination fed by a client) for
// the ratio forwarding/ingest.
func BenchmarkForward(b *testing.B) {
	batches := benchBatches()
	for _, scheme := range []string{"stream://", "grpc://", "http://"} {
		b.Run(scheme[:len(scheme)-3], func(b *testing.B) {
			dst, addr := benchDestination(b)
			dir := b.TempDir()
			st, err := disk.Open(dir, disk.Options{HoldPrefix: CursorPrefix, Sync: disk.SyncNone})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			for i := range b.N {
				if err := st.Write(context.Background(), storage.Traces, batches[i%len(batches)], 500); err != nil {
					b.Fatal(err)
				}
			}
			d, err := Parse("bench=" + scheme + addr + "?signals=traces&compression=none")
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(batches[0])))
			b.ResetTimer()
			f, err := New(Options{DataDir: dir, Store: st, Logger: quiet()}, []Destination{d})
			if err != nil {
				b.Fatal(err)
			}
			waitCount(b, dst, int64(b.N))
			b.StopTimer()
			f.Close()
		})
	}
}

// BenchmarkIngest measures the same destination fed directly by a stream
// client with 256 requests in flight (what `loadgen -mode stream` does):
// the ingest rate that forwarding is compared with.
func BenchmarkIngest(b *testing.B) {
	batches := benchBatches()
	dst, addr := benchDestination(b)
	exp := otlpclient.NewStreamExporter(otlpclient.StreamConfig{Config: otlpclient.Config{Endpoint: addr, Compression: compression.Identity}})
	b.SetBytes(int64(len(batches[0])))
	b.ResetTimer()
	for i := range b.N {
		if err := exp.Send(context.Background(), batches[i%len(batches)], func(error) {}); err != nil {
			b.Fatal(err)
		}
	}
	waitCount(b, dst, int64(b.N))
	b.StopTimer()
	exp.Close(context.Background())
}
