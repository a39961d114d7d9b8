package interop

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/pprofile"
	colprofilespb "go.opentelemetry.io/proto/otlp/collector/profiles/v1development"
	"google.golang.org/protobuf/proto"

	"github.com/otlp-lite/otlp-lite/storage"
)

// TestForwardProfiles: profiles sent to otlp-lite (by the Collector's OTLP
// exporter) are forwarded with signals=profiles over OTLP/gRPC and
// OTLP/HTTP to two Collector otlpreceivers with a profiles consumer, and
// over the stream mode to a second otlp-lite. Each Collector receives, as
// pdata reads it, exactly what pdata reads from the stored records; the
// second otlp-lite stores exactly the first one's records.
func TestForwardProfiles(t *testing.T) {
	const requests = 3
	viaGRPC := &profilesConsumer{n: make(chan struct{}, 4*requests)}
	viaHTTP := &profilesConsumer{n: make(chan struct{}, 4*requests)}
	grpcAddr, _ := startCollectorReceiver(t, viaGRPC)
	_, httpAddr := startCollectorReceiver(t, viaHTTP)
	dirA, dirB := t.TempDir(), t.TempDir()
	b := startServer(t, dirB)
	const q = "?signals=profiles&retry-initial-backoff=50ms&retry-max-backoff=500ms"
	a, admin := startForwarder(t, dirA, "g=grpc://"+grpcAddr+q, "h=http://"+httpAddr+q, "s=stream://"+b.addr+q)

	exp := collectorProfilesExporter(t, "otlp", a.addr, "none")
	for i := range requests {
		if err := exp.ConsumeProfiles(context.Background(), collectorProfiles(uint64(300+i))); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"g", "h", "s"} {
		waitScrape(t, admin, fmt.Sprintf(`otlplite_forward_sent_records_total{destination=%q,signal="profiles"}`, d), fmt.Sprint(requests))
		waitScrape(t, admin, fmt.Sprintf(`otlplite_forward_lag_records{destination=%q,signal="profiles"}`, d), "0")
	}
	a.stop()
	b.stop()

	newReq := func() *colprofilespb.ExportProfilesServiceRequest {
		return new(colprofilespb.ExportProfilesServiceRequest)
	}
	stored := scanStore(t, dirA, storage.Profiles, newReq)
	if len(stored) != requests {
		t.Fatalf("%d profiles records stored, want %d", len(stored), requests)
	}
	// What pdata reads from each stored record, as its JSON (pdata's
	// canonical form, references to the dictionary resolved); forwarding
	// runs several requests at once, so the order of arrival is free.
	var want []string
	for _, rec := range stored {
		raw, err := proto.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		pd, err := (&pprofile.ProtoUnmarshaler{}).UnmarshalProfiles(raw)
		if err != nil {
			t.Fatalf("pdata cannot read a stored record: %v", err)
		}
		want = append(want, pdataJSON(t, pd))
	}
	slices.Sort(want)
	for via, c := range map[string]*profilesConsumer{"grpc": viaGRPC, "http": viaHTTP} {
		c.mu.Lock()
		var got []string
		for _, pd := range c.got {
			got = append(got, pdataJSON(t, pd))
		}
		c.mu.Unlock()
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("forwarded over %s, the Collector received %d requests that differ from the %d stored:\ngot:  %.2000v\nwant: %.2000v", via, len(got), len(want), got, want)
		}
	}
	matchMessages(t, "profiles forwarded on a stream", stored, scanStore(t, dirB, storage.Profiles, newReq))
}
