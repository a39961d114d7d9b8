package stefreceiver

import (
	"testing"

	"github.com/splunk/stef/go/otel/otelstef"
	"github.com/splunk/stef/go/pkg"
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
