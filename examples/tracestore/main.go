// Command tracestore embeds otlp-lite in a storage engine: it receives OTLP
// traces (gRPC and HTTP on one port), keeps every span in Pebble under its
// trace id, and answers GET /api/traces/{id} with the trace as OTLP/JSON.
//
// Why Pebble: CockroachDB's LSM tree, in production for years. A trace store
// mostly writes: an LSM appends, group commit shares one fsync among exports,
// and sorted keys make a trace one prefix scan (bbolt and Badger: README.md).
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
	"github.com/otlp-lite/otlp-lite/otlpdecode"
	"github.com/otlp-lite/otlp-lite/otlpjson"
	pb "github.com/otlp-lite/otlp-lite/otlppb"
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
	if ln, err := net.Listen("tcp", *addr); err != nil {
		log.Fatal(err)
	} else if err := run(ctx, ln, *dir); err != nil {
		log.Fatal(err)
	}
}

// run serves OTLP and the trace API on ln, the store in dir, until ctx ends.
func run(ctx context.Context, ln net.Listener, dir string) error {
	db, err := pebble.Open(dir, &pebble.Options{})
	if err != nil {
		return err
	}
	st := &store{db: db}
	h := handler.New(handler.Config{Items: st})
	mux := http.NewServeMux()
	mux.Handle("/", h)
	mux.HandleFunc("GET /api/traces/{id}", st.trace)
	srv := server.New(mux, server.Config{OnShutdown: h.Shutdown})
	go srv.Serve(ln)
	<-ctx.Done()
	return errors.Join(srv.Shutdown(context.Background()), db.Close())
}

// store is a storage.ItemSink: each span, from the validation pass, is kept
// under trace id ‖ span id as a TracesData; a retry overwrites it.
type store struct {
	db      *pebble.DB
	writers sync.Pool // of *writer, so that their buffers stop growing
}

type writer struct { // a request's spans in a Pebble batch (storage.ItemBatch)
	s               *store
	v               otlpdecode.Visitor
	batch           *pebble.Batch
	key, ss, rs, td []byte
}

// BeginItems starts a request's batch; other signals are not retryable.
func (s *store) BeginItems(_ context.Context, sig storage.Signal) (storage.ItemBatch, error) {
	if sig != storage.Traces {
		return nil, storage.NotStored(fmt.Errorf("%w: this store keeps traces, not %s", storage.ErrRejected, sig))
	}
	w, _ := s.writers.Get().(*writer)
	if w == nil {
		w = &writer{s: s}
		w.v.Span = w.putSpan
	}
	w.batch = s.db.NewBatch()
	return w, nil
}

func (w *writer) Visitor() *otlpdecode.Visitor { return &w.v }
func (w *writer) Commit(context.Context) error { defer w.Discard(); return w.batch.Commit(pebble.Sync) } // fsynced before the ack
func (w *writer) Discard()                     { w.batch.Close(); w.s.writers.Put(w) }                   // uncommitted: stores nothing
func (s *store) Close() error                  { return nil }                                            // run closes the database

// putSpan stores one span with its resource and scope (the batch copies).
func (w *writer) putSpan(res *otlpview.Resource, sc *otlpview.Scope, sp *otlpview.Span) error {
	w.ss = field(field(field(w.ss[:0], pb.ScopeSpansScope, sc.Raw), pb.ScopeSpansSchemaURL, sc.SchemaURL), pb.ScopeSpansSpans, sp.Raw)
	w.rs = field(field(field(w.rs[:0], pb.ResourceSpansResource, res.Raw), pb.ResourceSpansSchemaURL, res.SchemaURL), pb.ResourceSpansScopeSpans, w.ss)
	w.td = field(w.td[:0], pb.TracesDataResourceSpans, w.rs)
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
