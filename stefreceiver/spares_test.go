package stefreceiver

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/splunk/stef/go/otel/otelstef"
	"github.com/splunk/stef/go/pkg"

	"github.com/otlp-lite/otlp-lite/ingest"
)

// zstdStreams opens n zstd streams at once, each sending one point (its
// header alone makes the stream take a decoder), waits for each
// acknowledgement and ends them; it returns the points acknowledged.
func zstdStreams(t *testing.T, addr string, n int) int {
	t.Helper()
	var peers []*peer
	for range n {
		p := dial(t, addr)
		p.sendFirst(t, "Metrics")
		p.recv(t)
		peers = append(peers, p)
	}
	// Every stream is open (its state charged) before any ends: each
	// has a decoder of its own.
	acked := 0
	for i, p := range peers {
		w, err := otelstef.NewMetricsWriter(chunkSender{t, p}, pkg.WriterOptions{Compression: pkg.CompressionZstd})
		if err != nil {
			t.Fatal(err)
		}
		writePoints(t, w, 1, i)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if ack, bad := parseAck(t, p.recv(t)); ack != 1 || len(bad) != 0 {
			t.Fatalf("stream %d: ack %d bad %v", i, ack, bad)
		}
		acked++
	}
	for i, p := range peers {
		p.w.Close()
		if st := p.status(); st != "0 " {
			t.Fatalf("stream %d: status %q", i, st)
		}
	}
	return acked
}

// The zstd decoders of ended streams are kept for the next streams
// (spares), at most maxSpares of them, each charged StateCostZstd to the
// budget while it waits; the next streams take them. A client that opens
// many zstd streams at once (a STEF header each is enough) and ends them
// leaves at most maxSpares decoders, all charged; with the budget's state
// half full of spares, an honest stream still finds room (the spares are
// let go), and every point acknowledged is stored.
func TestSpareDecodersBoundedAndCharged(t *testing.T) {
	// State may take half the budget: maxSpares+2 streams at once (a
	// dictionary step each), not the spares and 3 streams more.
	limit := 2 * (maxSpares + 2) * (StateCostZstd + DictChargeStep)
	sink := &memSink{}
	addr, pl, r := serveSinkR(t, sink, ingest.AdmissionConfig{RequestLimit: int64(limit)})

	acked := zstdStreams(t, addr, maxSpares+2)
	n, charged := r.decoders.Held()
	t.Logf("%d streams ended: %d decoders kept, %d bytes charged; stream state held %d", maxSpares+2, n, charged, pl.StreamStateHeld())
	if n != maxSpares || charged != maxSpares*StateCostZstd {
		t.Fatalf("%d decoders kept, charged %d: want maxSpares (%d), %d", n, charged, maxSpares, maxSpares*StateCostZstd)
	}
	if held := pl.StreamStateHeld(); held != r.sparesHeld() || held < charged {
		t.Fatalf("stream state %d charged, spares %d: the kept decoders are not the only state charged", held, r.sparesHeld())
	}

	// Three streams at once: the first two take their state beside the
	// spares, the third finds no room until they are let go.
	acked += zstdStreams(t, addr, 3)
	if got := r.rotations.Get() + r.refusedState.Get(); got != 0 {
		t.Fatalf("%d streams refused or rotated: the spares took an honest stream's room", got)
	}
	if n, _ := r.decoders.Held(); n > maxSpares {
		t.Fatalf("%d decoders kept, more than maxSpares (%d)", n, maxSpares)
	}
	if held := pl.StreamStateHeld(); held != r.sparesHeld() {
		t.Fatalf("stream state %d charged after the streams ended, spares %d", held, r.sparesHeld())
	}
	sink.mu.Lock()
	stored := sink.items
	sink.mu.Unlock()
	if stored != acked {
		t.Fatalf("stored %d points, acknowledged %d", stored, acked)
	}
	// Shut down, the Receiver lets them go and keeps no more.
	r.Shutdown()
	if held := pl.StreamStateHeld(); held != 0 {
		t.Fatalf("stream state %d charged with no stream and no spare", held)
	}
	r.decoders.Put(nil, StateCostZstd)
	if n, _ := r.decoders.Held(); n != 0 {
		t.Fatal("a decoder kept after Shutdown")
	}
}

// A spare decoder forgets the stream it decoded: a client (another
// tenant's, say) whose first frame continues the zstd stream another
// stream's last frame started (a STEF frame not flagged
// RestartCompression, its zstd data referring to that stream's window)
// has it refused as bad zstd data, not decoded from the other stream's
// history; nothing of it is stored. An honest stream after it decodes on
// the same spare and stores what it sent.
func TestSpareDecoderForgetsItsStream(t *testing.T) {
	sink := &memSink{}
	addr, _, r := serveSinkR(t, sink, ingest.AdmissionConfig{})
	var out chunkList
	w, err := otelstef.NewMetricsWriter(&out, pkg.WriterOptions{Compression: pkg.CompressionZstd})
	if err != nil {
		t.Fatal(err)
	}
	secret := "tenant-a-secret-0123456789abcdef"
	for frame := range 2 {
		for i := range 50 {
			w.Record.Attributes().EnsureLen(1)
			w.Record.Attributes().SetKey(0, "secret")
			w.Record.Attributes().Value(0).SetString(secret)
			w.Record.Metric().SetName("requests")
			w.Record.Point().SetTimestamp(uint64(1 + frame*50 + i))
			if err := w.Write(); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if len(out) < 3 {
		t.Fatalf("%d chunks written, want the headers and two frames", len(out))
	}
	headers := bytes.Join(out[:len(out)-2], nil)
	first, second := out[len(out)-2], out[len(out)-1]
	if second[0]&byte(pkg.RestartCompression) != 0 {
		t.Fatal("the second frame restarts the compression: it refers to nothing before it")
	}

	a := dial(t, addr)
	a.sendFirst(t, "Metrics")
	a.recv(t)
	a.sendChunk(t, append(append([]byte(nil), headers...), first...))
	if ack, bad := parseAck(t, a.recv(t)); ack != 50 || len(bad) != 0 {
		t.Fatalf("stream a: ack %d bad %v", ack, bad)
	}
	a.w.Close()
	if st := a.status(); st != "0 " {
		t.Fatalf("stream a: status %q", st)
	}
	if n, _ := r.decoders.Held(); n != 1 {
		t.Fatalf("%d decoders kept after stream a, want 1", n)
	}

	b := dial(t, addr)
	b.sendFirst(t, "Metrics")
	b.recv(t)
	b.sendChunk(t, append(append([]byte(nil), headers...), second...))
	for msg := b.recv(t); msg != nil; msg = b.recv(t) {
		// Its first record is reported bad (acknowledged as such), no
		// record is acknowledged stored.
		if ack, bad := parseAck(t, msg); ack != 0 && (len(bad) != 1 || bad[0].from != 1 || bad[0].to != ack) {
			t.Fatalf("stream b: ack %d bad %v: decoded from stream a's window", ack, bad)
		}
	}
	if st := b.status(); !strings.HasPrefix(st, "3 ") || !strings.Contains(st, "zstd") {
		t.Fatalf("stream b: status %q, want INVALID_ARGUMENT for its zstd data", st)
	}
	sink.mu.Lock()
	stored := sink.items
	sink.mu.Unlock()
	if stored != 50 {
		t.Fatalf("%d points stored, stream a's 50 alone expected", stored)
	}

	// An honest stream decodes on a spare.
	c := dial(t, addr)
	c.sendFirst(t, "Metrics")
	c.recv(t)
	wc, err := otelstef.NewMetricsWriter(chunkSender{t, c}, pkg.WriterOptions{Compression: pkg.CompressionZstd})
	if err != nil {
		t.Fatal(err)
	}
	writePoints(t, wc, 20, 0)
	if err := wc.Flush(); err != nil {
		t.Fatal(err)
	}
	if ack, bad := parseAck(t, c.recv(t)); ack != 20 || len(bad) != 0 {
		t.Fatalf("stream c: ack %d bad %v", ack, bad)
	}
	c.w.Close()
	c.status()
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if sink.items != 70 {
		t.Fatalf("%d points stored, want 70", sink.items)
	}
	last := sink.writes[len(sink.writes)-1]
	if bytes.Contains(last, []byte(secret)) {
		t.Fatal("stream c's request holds stream a's attribute")
	}
}

// An ending stream gives its own state back before it offers its decoder
// as a spare: with room in the budget's state half for one stream's
// decoder and no more, the decoder of a stream that ended is kept for the
// next (it was refused, the stream's own charge still held beside it).
func TestSpareKeptWhereTheStreamsStateWas(t *testing.T) {
	limit := int64(2 * (StateCostZstd + 2*DictChargeStep))
	addr, pl, r := serveSinkR(t, &memSink{}, ingest.AdmissionConfig{RequestLimit: limit})
	if acked := zstdStreams(t, addr, 1); acked != 1 {
		t.Fatalf("%d streams acknowledged", acked)
	}
	if n, cost := r.decoders.Held(); n != 1 || cost != StateCostZstd || pl.StreamStateHeld() != cost {
		t.Fatalf("%d decoders kept, charged %d, stream state %d: want the stream's decoder kept, charged StateCostZstd", n, cost, pl.StreamStateHeld())
	}
}

// TestSparesYieldToRequests: what ended streams left (spares) takes no
// room a request needs: a request that fits the budget only without them
// is admitted at once, not queued or refused, and the spares are let go
// (the Receiver registers them with Pipeline.AddReclaimer).
func TestSparesYieldToRequests(t *testing.T) {
	limit := int64(2 * (maxSpares + 2) * (StateCostZstd + DictChargeStep))
	sink := &memSink{}
	addr, pl, r := serveSinkR(t, sink, ingest.AdmissionConfig{RequestLimit: limit, MaxWait: time.Millisecond})
	zstdStreams(t, addr, maxSpares+2)
	kept := r.sparesHeld()
	if kept < maxSpares*StateCostZstd {
		t.Fatalf("spares charged %d, want at least %d", kept, maxSpares*StateCostZstd)
	}
	tk := pl.Take(context.Background())
	defer pl.Done(tk)
	// More than the budget leaves beside the spares.
	need := limit - kept + StateCostZstd
	if err := tk.Charge(context.Background(), int(need)); err != nil {
		t.Fatalf("a request of %d bytes waited or was refused while spares held %d of the %d budget: %v", need, kept, limit, err)
	}
	if held := r.sparesHeld(); held != 0 {
		t.Fatalf("spares still charged %d after a request needed their room", held)
	}
	if got, _ := pl.AdmissionState(); got < need {
		t.Fatalf("in flight %d, want the request's %d", got, need)
	}
}
