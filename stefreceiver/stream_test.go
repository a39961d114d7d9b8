package stefreceiver

import (
	"context"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/splunk/stef/go/otel/otelstef"
	"github.com/splunk/stef/go/pkg"

	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
	"github.com/otlp-lite/otlp-lite/storage"
)

// A record the library cannot decode (an attribute array over its
// per-record allocation limit, pkg.RecordAllocLimit) after a record the
// decoder refused in the same frame: the records before it are stored and
// acknowledged, the refused one and the undecodable one are reported bad,
// and no stored record is reported bad (a client drops what is reported
// bad, and resends what is not acknowledged).
func TestUndecodableRecordAfterRefusedOne(t *testing.T) {
	addr, sink := serve(t, Config{})
	p := dial(t, addr)
	p.sendFirst(t, "Metrics")
	p.recv(t)
	w, err := otelstef.NewMetricsWriter(chunkSender{t, p}, pkg.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	writePoints(t, w, 1, 0) // record 1
	r := &w.Record
	r.Point().Exemplars().EnsureLen(1)
	r.Point().Exemplars().At(0).SetTraceID(pkg.Bytes("abc"))
	writePoints(t, w, 1, 1) // record 2: refused by the decoder
	r.Point().Exemplars().EnsureLen(0)
	writePoints(t, w, 1, 2) // record 3
	// Record 4: over the reader's allocation limit.
	arr := r.Attributes().Value(0)
	arr.SetType(otelstef.AnyValueTypeArray)
	arr.Array().EnsureLen(pkg.RecordAllocLimit/240 + 1)
	for i := range arr.Array().Len() {
		arr.Array().At(i).SetInt64(int64(i))
	}
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	var ack uint64
	var bad []idRange
	for {
		msg := p.recv(t)
		if msg == nil {
			break
		}
		a, b := parseAck(t, msg)
		ack = max(ack, a)
		bad = append(bad, b...)
	}
	if st := p.status(); st[:2] != "3 " {
		t.Errorf("status %q, want INVALID_ARGUMENT", st)
	}
	if sink.items != 2 {
		t.Fatalf("stored %d points, want records 1 and 3", sink.items)
	}
	reported := map[uint64]bool{}
	for _, r := range bad {
		for id := r.from; id <= r.to; id++ {
			reported[id] = true
		}
	}
	if ack != 4 || !reported[2] || !reported[4] || reported[1] || reported[3] {
		t.Fatalf("ack %d bad %v: want records 1-4 acknowledged, 2 and 4 reported bad, not the stored 1 and 3", ack, bad)
	}
}

// A stream waiting for its client holds no more than one that sent a
// record, besides what it is charged for: the buffer of the request it
// last handed on, which a client makes large with a few KB of STEF
// (records repeating a large attribute decode to megabytes of OTLP), is
// kept only charged (not one a pooled ticket brings), so that many idle
// streams cannot hold it uncharged for as long as they stay open. They
// give their charges back as they end, but for what they leave for the
// next streams (spares), charged, at most maxSpares.
func TestIdleStreamHoldsNoRequestBuffer(t *testing.T) {
	sink := &sizeSink{}
	addr, pl, r := serveSinkR(t, sink, ingest.AdmissionConfig{})
	const streams = 6
	big := strings.Repeat("x", 4<<10)
	heap := heapAfterGC
	// hold opens streams that each send records, waits for their
	// acknowledgements and returns what each waiting stream holds and
	// is charged, and the streams' close.
	hold := func(records int) (held, charged int64, close func()) {
		before, state := heap(), pl.StreamStateHeld()
		var peers []*peer
		for range streams {
			p := dial(t, addr)
			peers = append(peers, p)
			p.sendFirst(t, "Metrics")
			p.recv(t)
			w, err := otelstef.NewMetricsWriter(chunkSender{t, p}, pkg.WriterOptions{})
			if err != nil {
				t.Fatal(err)
			}
			w.Record.Attributes().EnsureLen(1)
			w.Record.Attributes().SetKey(0, "payload")
			w.Record.Attributes().Value(0).SetString(big)
			for i := range records {
				w.Record.Metric().SetName("requests")
				w.Record.Point().SetTimestamp(uint64(i))
				w.Record.Point().Value().SetInt64(int64(i))
				if err := w.Write(); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if ack, bad := parseAck(t, p.recv(t)); ack != uint64(records) || len(bad) != 0 {
				t.Fatalf("ack %d bad %v", ack, bad)
			}
		}
		// The last stream is waiting once it reads again: one more
		// frame would wake it; its acknowledgement came first.
		held = (heap() - before) / streams
		charged = (pl.StreamStateHeld() - state) / streams
		return held, charged, func() {
			for _, p := range peers {
				p.w.Close()
				p.status()
			}
		}
	}
	// A stream of one record: what an open stream holds anyway (its
	// connection's buffers, goroutines, reader).
	base, baseCharged, closeBase := hold(1)
	held, charged, closeHeld := hold(512)
	request := int64(sink.last.Load())
	t.Logf("a request of %d bytes; a waiting stream holds %d bytes, charged %d; one that sent a record %d, charged %d", request, held, charged, base, baseCharged)
	if extra := held - base - (charged - baseCharged); extra > request/4 {
		t.Errorf("a waiting stream holds %d bytes more than one that sent a record, %d of them uncharged (its last request took %d)", held-base, extra, request)
	}
	closeBase()
	closeHeld()
	// What is still charged is what the ended streams left for the
	// next ones (spares.go): their request buffers, at most maxSpares.
	if n, spared := pl.StreamStateHeld(), r.sparesHeld(); n != spared {
		t.Errorf("%d bytes of stream state still charged after the streams ended, %d of them spares", n, spared)
	}
	if n, _ := r.buffers.Held(); n > maxSpares {
		t.Errorf("%d request buffers kept, more than maxSpares (%d)", n, maxSpares)
	}
}

// sizeSink keeps nothing but the size of the last request.
type sizeSink struct{ last atomic.Int64 }

func (s *sizeSink) Write(_ context.Context, _ storage.Signal, data []byte, _ int) error {
	s.last.Store(int64(len(data)))
	return nil
}

func (s *sizeSink) Close() error { return nil }

// serveSink is serve with sink and admission, and returns the pipeline.
func serveSink(t testing.TB, sink storage.Sink, adm ingest.AdmissionConfig) (string, *ingest.Pipeline) {
	t.Helper()
	addr, pl, _ := serveSinkR(t, sink, adm)
	return addr, pl
}

// serveSinkR is serveSink that returns the Receiver too.
func serveSinkR(t testing.TB, sink storage.Sink, adm ingest.AdmissionConfig) (string, *ingest.Pipeline, *Receiver) {
	t.Helper()
	pl := ingest.New(ingest.Config{Sink: sink, Admission: adm})
	r := New(pl, Config{})
	return serveH2C(t, r), pl, r
}

// With the pipeline validating UTF-8 (which the decoder does not), a
// request with a point it rejects has all its records reported bad, as one
// range that covers the record the decoder refused in it too: ranges in
// order, none twice.
func TestBadRangesOnceWithUTF8(t *testing.T) {
	addr, sink := servePipeline(t, Config{}, ingest.Config{Decode: otlpdecode.Options{ValidateUTF8: true}})
	p := dial(t, addr)
	p.sendFirst(t, "Metrics")
	p.recv(t)
	w, err := otelstef.NewMetricsWriter(chunkSender{t, p}, pkg.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	writePoints(t, w, 1, 0)
	r := &w.Record
	r.Point().Exemplars().EnsureLen(1)
	r.Point().Exemplars().At(0).SetTraceID(pkg.Bytes("abc"))
	writePoints(t, w, 1, 1) // refused by the decoder
	r.Point().Exemplars().EnsureLen(0)
	r.Attributes().Value(0).SetString("\xff")
	if err := w.Write(); err != nil { // rejected by the validation
		t.Fatal(err)
	}
	writePoints(t, w, 1, 3)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	ack, bad := parseAck(t, p.recv(t))
	if ack != 4 || len(bad) != 1 || bad[0] != (idRange{1, 4}) {
		t.Fatalf("ack %d bad %v, want ack 4 and bad [1-4] once", ack, bad)
	}
	p.w.Close()
	p.status()
	if sink.items != 2 {
		t.Fatalf("stored %d points, want the 2 valid ones", sink.items)
	}
}

// The requests a stream builds are the receiver's to size, not the
// client's: within its tenant's max_request_bytes, which would refuse a
// larger one as never acceptable (ending the stream, the client resending
// the same records on the next, forever). A frame decoding to more than
// the tenant's bound is stored as several requests and acknowledged.
func TestRequestsWithinTenantMaxRequest(t *testing.T) {
	qpath := t.TempDir() + "/quotas"
	if err := os.WriteFile(qpath, []byte("acme max_request_bytes=64KiB\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	qf, err := ingest.NewQuotaFile(qpath)
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	pl := ingest.New(ingest.Config{Sink: sink, Tenants: &ingest.TenantsConfig{Quotas: qf}})
	r := New(pl, Config{})
	addr := serveH2C(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.ServeHTTP(w, req.WithContext(pl.WithTenant(req.Context(), "acme", true)))
	}))
	p := dial(t, addr)
	p.sendFirst(t, "Metrics")
	p.recv(t)
	w, err := otelstef.NewMetricsWriter(chunkSender{t, p}, pkg.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 1<<10)
	w.Record.Attributes().EnsureLen(1)
	w.Record.Attributes().SetKey(0, "payload")
	w.Record.Attributes().Value(0).SetString(big)
	const records = 200 // about 200 KiB of OTLP
	for i := range records {
		w.Record.Metric().SetName("requests")
		w.Record.Point().SetTimestamp(uint64(i))
		w.Record.Point().Value().SetInt64(int64(i))
		if err := w.Write(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	var ack uint64
	for ack < records {
		msg := p.recv(t)
		if msg == nil {
			t.Fatalf("stream ended at ack %d: %s", ack, p.status())
		}
		a, bad := parseAck(t, msg)
		if len(bad) != 0 {
			t.Fatalf("bad %v", bad)
		}
		ack = a
	}
	p.w.Close()
	if st := p.status(); st != "0 " {
		t.Fatalf("status %q", st)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if sink.items != records {
		t.Fatalf("stored %d points, want %d", sink.items, records)
	}
	for i, w := range sink.writes {
		if len(w) > 64<<10 {
			t.Errorf("request %d is %d bytes, over the tenant's max_request_bytes", i, len(w))
		}
	}
}

// A record refers to dictionary entries any number of times: a few KB of
// STEF (an attribute array repeating a 4 KiB string 20,000 times) is one
// record of 80 MB of OTLP, which the builder wrote, uncharged, before the
// request was refused. It is refused as a bad record once it writes more
// than a request may hold, having written little more than that; the
// stream goes on.
func TestRecordAmplificationBounded(t *testing.T) {
	addr, sink := serve(t, Config{})
	p := dial(t, addr)
	p.sendFirst(t, "Metrics")
	p.recv(t)
	w, err := otelstef.NewMetricsWriter(chunkSender{t, p}, pkg.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	writePoints(t, w, 1, 0)
	v := w.Record.Attributes().Value(0)
	v.SetType(otelstef.AnyValueTypeArray)
	v.Array().EnsureLen(20000)
	big := strings.Repeat("x", 4<<10)
	for i := range v.Array().Len() {
		v.Array().At(i).SetString(big)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := w.Write(); err != nil { // record 2
		t.Fatal(err)
	}
	writePoints(t, w, 1, 2) // record 3
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	ack, bad := parseAck(t, p.recv(t))
	runtime.ReadMemStats(&after)
	if ack != 3 || len(bad) != 1 || bad[0] != (idRange{2, 2}) {
		t.Fatalf("ack %d bad %v, want ack 3 and record 2 bad", ack, bad)
	}
	p.w.Close()
	if st := p.status(); st != "0 " {
		t.Fatalf("status %q", st)
	}
	if sink.items != 2 {
		t.Fatalf("stored %d points, want records 1 and 3", sink.items)
	}
	// The request bound is DefaultMaxRequestBytes (4 MiB): what was
	// allocated meanwhile (the client's writer too) is far below the
	// record's 80 MB.
	if n := after.TotalAlloc - before.TotalAlloc; n > 32<<20 {
		t.Errorf("%d bytes allocated decoding the record, want it refused near the request bound", n)
	}
}

// heapAfterGC returns the heap in use after two collections, what the
// memory tests compare with what the budget was charged.
func heapAfterGC() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
