// Command tracestore embeds otlp-lite in a storage engine: it receives OTLP
// traces (gRPC and HTTP on one port), keeps every span in Pebble under its
// trace id, and answers GET /api/traces/{id} with the trace as OTLP/JSON.
//
// Why Pebble: the LSM tree under CockroachDB, in production for years. A
// trace store mostly writes: an LSM turns writes into appends, its group
// commit shares an fsync among concurrent exports, and its sorted keys make
// a trace one prefix scan. bbolt (a B+tree, one writer at a time) and
// Badger were the alternatives.
//
//	go run . -addr 127.0.0.1:4317 -dir ./traces
//	curl 127.0.0.1:4317/api/traces/5b8efff798038103d269b633813fc60c
package main

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/cockroachdb/pebble/v2"

	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/otlpjson"
	"github.com/otlp-lite/otlp-lite/otlpview"
	"github.com/otlp-lite/otlp-lite/server"
	"github.com/otlp-lite/otlp-lite/storage"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:4317", "address of OTLP (gRPC, HTTP) and the trace API")
	dir := flag.String("dir", "traces", "Pebble's directory")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", *addr)
	if err == nil {
		err = run(ctx, ln, *dir)
	}
	if err != nil {
		log.Fatal(err)
	}
}

// run serves OTLP and the trace API on ln, with the store in dir, until ctx
// ends; then it waits for every Write in flight and closes the store.
func run(ctx context.Context, ln net.Listener, dir string) error {
	db, err := pebble.Open(dir, &pebble.Options{})
	if err != nil {
		return err
	}
	st := &store{db: db, writers: sync.Pool{New: func() any { return new(writer) }}}
	h := handler.New(handler.Config{Sink: st})
	mux := http.NewServeMux()
	mux.Handle("/", h)
	mux.HandleFunc("GET /api/traces/{id}", st.trace)
	srv := server.New(mux, server.Config{OnShutdown: h.Shutdown})
	go srv.Serve(ln)
	<-ctx.Done()
	return errors.Join(srv.Shutdown(context.Background()), db.Close())
}

// store is a storage.Sink keeping each span under trace id ‖ span id, as a
// TracesData with its resource and scope; a retried export overwrites it.
type store struct {
	db      *pebble.DB
	writers sync.Pool // of *writer, so that their buffers stop growing
}

type writer struct {
	dec             otlpview.TracesDecoder
	batch           *pebble.Batch
	key, ss, rs, td []byte
}

// Write stores a request's spans in one batch, fsynced before the ack.
func (s *store) Write(_ context.Context, sig storage.Signal, data []byte, _ int) error {
	if sig != storage.Traces {
		return storage.NotStored(fmt.Errorf("%w: this store keeps traces, not %s", storage.ErrRejected, sig))
	}
	w := s.writers.Get().(*writer)
	defer s.writers.Put(w)
	w.batch = s.db.NewBatch()
	defer w.batch.Close()
	if err := w.dec.Decode(data, w.putSpan); err != nil {
		return fmt.Errorf("cannot store span: %w", err)
	}
	return w.batch.Commit(pebble.Sync) // an error makes the client retry
}

func (s *store) Close() error { return nil } // run closes the database

// putSpan is the store's write logic, for one span with its resource and
// scope; the views are valid only during the call (the batch copies).
func (w *writer) putSpan(res *otlpview.Resource, sc *otlpview.Scope, sp *otlpview.Span) error {
	w.ss = field(field(field(w.ss[:0], 1, sc.Raw), 3, sc.SchemaURL), 2, sp.Raw) // ScopeSpans
	w.rs = field(field(field(w.rs[:0], 1, res.Raw), 3, res.SchemaURL), 2, w.ss) // ResourceSpans
	w.td = field(w.td[:0], 1, w.rs)                                             // TracesData
	w.key = append(append(w.key[:0], sp.TraceID...), sp.SpanID...)
	return w.batch.Set(w.key, w.td, nil)
}

// field appends the protobuf field num, of wire type LEN, holding v.
func field[T string | []byte](dst []byte, num uint64, v T) []byte {
	dst = binary.AppendUvarint(dst, num<<3|2)
	return append(binary.AppendUvarint(dst, uint64(len(v))), v...)
}

const maxTrace = 64 << 20 // bytes of spans in one answer: a query's memory is bounded

// trace answers GET /api/traces/{id} with the spans of trace id (32 hex
// digits) as OTLP/JSON TracesData: the first maxTrace bytes of them.
func (s *store) trace(rw http.ResponseWriter, r *http.Request) {
	id, err := hex.DecodeString(r.PathValue("id"))
	if err != nil || len(id) != 16 {
		http.Error(rw, "a trace id is 32 hex digits", http.StatusBadRequest)
		return
	}
	upper := append(id, "\xff\xff\xff\xff\xff\xff\xff\xff\xff"...) // above id ‖ any 8-byte span id
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: id, UpperBound: upper})
	var data []byte
	for ok := err == nil && it.First(); ok && len(data) < maxTrace; ok = it.Next() {
		data = append(data, it.Value()...) // TracesData messages concatenate
	}
	if err == nil {
		err = it.Close()
	}
	if err == nil && len(data) > 0 {
		data, err = otlpjson.Marshal(nil, otlpjson.TracesData, data)
	}
	switch {
	case err != nil:
		http.Error(rw, "cannot read trace: "+err.Error(), http.StatusInternalServerError)
	case len(data) == 0:
		http.Error(rw, "no span of trace "+hex.EncodeToString(id), http.StatusNotFound)
	default:
		rw.Header().Set("Content-Type", "application/json")
		rw.Write(data)
	}
}
