//go:build linux

package main

import (
	"fmt"
	"testing"

	"github.com/VictoriaMetrics/easyproto"
	"github.com/splunk/stef/go/otel/otelstef"
	"github.com/splunk/stef/go/pkg"
)

// chunks collects the chunks a STEF writer makes.
type chunks struct{ b []byte }

func (c *chunks) WriteChunk(header, content []byte) error {
	c.b = append(append(c.b, header...), content...)
	return nil
}

// stefOpening returns what a STEF/gRPC client sends to open a zstd metrics
// stream and make the server set up its reader: the first message, then
// the library writer's header and one frame of one point, as one chunk.
func stefOpening(t *testing.T) []byte {
	var c chunks
	w, err := otelstef.NewMetricsWriter(&c, pkg.WriterOptions{Compression: pkg.CompressionZstd})
	if err != nil {
		t.Fatal(err)
	}
	w.Record.Metric().SetName("m")
	w.Record.Point().Value().SetInt64(1)
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	var m easyproto.Marshaler
	m.MessageMarshaler().AppendMessage(1).AppendString(1, otelstef.MetricsStructName)
	out := grpcBody(false, m.Marshal(nil))
	m.Reset()
	chunk := m.MessageMarshaler()
	chunk.AppendBytes(2, c.b)
	chunk.AppendBool(3, true)
	return append(out, grpcBody(false, m.Marshal(nil))...)
}

// TestFloodIdleSTEFStreams (issue 23, STEF in): 10 connections, each
// opening every STEF stream the server allows, each stream setting up its
// zstd reader (about 9 MB of decoder state on the server) and then idling.
// STEF streams take units of the stream bound and their reader's state is
// charged to the admission budget: the flood stops there, and an honest
// Export succeeds beside it. On the build before (STEF mounted in front of
// the handler, its state not charged), every stream set up its reader.
func TestFloodIdleSTEFStreams(t *testing.T) {
	s := startAbuseServer(t, "-stef")
	s.mustServe(t)
	f := dialFlood(t, s.addr, 10, h2Options{})
	open := stefOpening(t)
	n := f.streams("/STEFDestination/Stream", 1000, func(c *h2Conn, id uint32) { c.data(id, false, open) })
	acked := floodCheck(t, s, "idle-stef-streams", fmt.Sprintf("%d idle zstd STEF streams", n))
	requireStored(t, s, "acknowledged", acked)
}
