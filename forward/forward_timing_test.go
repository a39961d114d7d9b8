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

// BenchmarkForward measures, in one run, forwarding against ingest at the
// side-by-side benchmark's load (500-span requests): b.N records are
// ingested by another otlp-lite (handler and fsynced disk store) from a
// stream client with 256 in flight, as `loadgen -mode stream` sends them;
// then b.N records are forwarded from a filled disk log to a second such
// destination over each protocol. It reports both rates and their ratio
// (forward/ingest; 1 means forwarding keeps up with what the destination
// can ingest), and the cursor commits per second. ns/op is the forwarding
// time per record.
func BenchmarkForward(b *testing.B) {
	batches := benchBatches()
	for _, scheme := range []string{"stream://", "grpc://", "http://"} {
		b.Run(scheme[:len(scheme)-3], func(b *testing.B) {
			// Ingest: a client straight into a destination.
			in, inAddr := benchDestination(b)
			exp := otlpclient.NewStreamExporter(otlpclient.StreamConfig{Config: otlpclient.Config{Endpoint: inAddr, Compression: compression.Identity}})
			start := time.Now()
			for i := range b.N {
				if err := exp.Send(context.Background(), batches[i%len(batches)], func(error) {}); err != nil {
					b.Fatal(err)
				}
			}
			waitCount(b, in, int64(b.N))
			ingest := time.Since(start)
			exp.Close(context.Background())

			// Forward: a filled log to another destination.
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
			start = time.Now()
			f, err := New(Options{DataDir: dir, Store: st, Logger: quiet()}, []Destination{d})
			if err != nil {
				b.Fatal(err)
			}
			waitCount(b, dst, int64(b.N))
			fwd := time.Since(start)
			b.StopTimer()
			commits := f.dests[0].lanes[0].commits.Get()
			f.Close()
			// Each commit of the cursor is two fsyncs (the file, the
			// directory), made as the acknowledged run advances.
			b.ReportMetric(float64(commits)/fwd.Seconds(), "commits/s")
			b.ReportMetric(float64(b.N)/ingest.Seconds(), "ingest-records/s")
			b.ReportMetric(float64(b.N)/fwd.Seconds(), "forward-records/s")
			b.ReportMetric(ingest.Seconds()/fwd.Seconds(), "forward/ingest")
		})
	}
}
