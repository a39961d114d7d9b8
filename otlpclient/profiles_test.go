package otlpclient

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/VictoriaMetrics/easyproto"

	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/storage"
)

// signalSink records what was stored, by signal.
type signalSink struct {
	mu     sync.Mutex
	stored map[storage.Signal][][]byte
}

func (s *signalSink) Write(_ context.Context, sig storage.Signal, data []byte, _ int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stored[sig] = append(s.stored[sig], bytes.Clone(data))
	return nil
}

func (s *signalSink) Close() error { return nil }

// profilesRequest is a valid ExportProfilesServiceRequest whose dictionary
// (field 2) comes before and after its profiles: one profile with one
// sample of stack 1.
func profilesRequest() []byte {
	var mp easyproto.MarshalerPool
	m := mp.Get()
	root := m.MessageMarshaler()
	d := root.AppendMessage(2)
	for _, s := range []string{"", "cpu", "nanoseconds", "main"} {
		d.AppendString(5, s)
	}
	p := root.AppendMessage(1).AppendMessage(2).AppendMessage(2)
	p.AppendMessage(1).AppendInt32(1, 1)
	s := p.AppendMessage(2)
	s.AppendInt32(1, 1)
	s.AppendInt64s(4, []int64{10})
	d = root.AppendMessage(2) // merged into the first occurrence
	d.AppendMessage(1)
	d.AppendMessage(2)
	d.AppendMessage(2).AppendMessage(3).AppendInt32(1, 1)
	d.AppendMessage(3)
	d.AppendMessage(3).AppendInt32(1, 3)
	d.AppendMessage(4)
	d.AppendMessage(6)
	d.AppendMessage(7)
	d.AppendMessage(7).AppendInt32s(1, []int32{1})
	return m.Marshal(nil)
}

// TestProfilesExporters: with Config.Signal = Profiles the unary exporter
// calls ProfilesService/Export and the stream exporter ExportProfiles of
// the otlp-lite stream, whose envelope carries the dictionary: both
// requests are stored as the client built them, dictionary included.
func TestProfilesExporters(t *testing.T) {
	sink := &signalSink{stored: map[storage.Signal][][]byte{}}
	addr := startServer(t, newHandler(sink, handler.StreamConfig{}))
	req := profilesRequest()

	u := NewUnaryExporter(Config{Endpoint: addr, Signal: Profiles})
	if ps, err := u.ExportResult(context.Background(), req); err != nil || ps.Rejected != 0 {
		t.Fatalf("unary: %+v, %v", ps, err)
	}
	e := NewStreamExporter(StreamConfig{Config: Config{Endpoint: addr, Signal: Profiles}})
	o := newOutcomes()
	if err := e.Send(context.Background(), req, o.done(1)); err != nil {
		t.Fatal(err)
	}
	closeExporter(t, e)
	o.requireAllAcked(t, 1)

	got := sink.stored[storage.Profiles]
	if len(got) != 2 || len(sink.stored) != 1 {
		t.Fatalf("stored %d profiles requests (%d signals)", len(got), len(sink.stored))
	}
	// The envelope moves the request's fields in order, so the stream's
	// request is the unary one with its dictionary occurrences kept.
	for i, g := range got {
		if !bytes.Equal(g, req) {
			t.Errorf("request %d stored as %x, want %x", i, g, req)
		}
	}
}
