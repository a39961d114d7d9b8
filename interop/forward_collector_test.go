package interop

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
)

// This file is the third-party destination of the forwarding tests: the
// OpenTelemetry Collector's OTLP receiver (go.opentelemetry.io/collector/
// receiver/otlpreceiver), run as a library with a consumer that counts
// what it receives, on fixed ports so that a test can stop it and start it
// again where otlp-lite forwards.

// fwdIDKey is the span attribute that identifies a span across the hops.
const fwdIDKey = "fwd.id"

// spanCounter is the Collector pipeline's consumer: it counts every span
// by its fwdIDKey attribute, and refuses for good (a permanent error, which
// the receiver answers with INVALID_ARGUMENT or HTTP 400) every request
// holding a span whose id starts with "poison".
type spanCounter struct {
	mu   sync.Mutex
	seen map[string]int
}

func newSpanCounter() *spanCounter { return &spanCounter{seen: map[string]int{}} }

func (c *spanCounter) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (c *spanCounter) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	var ids []string
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		sss := td.ResourceSpans().At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				v, _ := spans.At(k).Attributes().Get(fwdIDKey)
				ids = append(ids, v.Str())
			}
		}
	}
	for _, id := range ids {
		if strings.HasPrefix(id, "poison") {
			return consumererror.NewPermanent(fmt.Errorf("span %s is poison", id))
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		c.seen[id]++
	}
	return nil
}

// counts returns how many distinct ids arrived and how many spans in all.
func (c *spanCounter) counts() (distinct, total int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.seen {
		distinct++
		total += n
	}
	return
}

// missing returns the ids of want that never arrived.
func (c *spanCounter) missing(want map[string]bool) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for id := range want {
		if c.seen[id] == 0 {
			out = append(out, id)
		}
	}
	return out
}

// collector is a running otlpreceiver.
type collector struct {
	grpcAddr, httpAddr string
	rcv                receiver.Traces
}

// startCollector starts the Collector's OTLP receiver on grpcAddr and
// httpAddr, delivering to sink. The port may still be held for a moment by
// the previous instance's listener, so the start is retried briefly.
func startCollector(t *testing.T, grpcAddr, httpAddr string, sink *spanCounter) *collector {
	t.Helper()
	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	cfg.Protocols.GRPC.GetOrInsertDefault().NetAddr.Endpoint = grpcAddr
	cfg.Protocols.HTTP.GetOrInsertDefault().ServerConfig.NetAddr.Endpoint = httpAddr
	set := receiver.Settings{
		ID:                component.NewID(f.Type()),
		TelemetrySettings: componenttest.NewNopTelemetrySettings(),
		BuildInfo:         component.NewDefaultBuildInfo(),
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		rcv, err := f.CreateTraces(context.Background(), set, cfg, sink)
		if err != nil {
			t.Fatalf("cannot create the Collector's OTLP receiver: %v", err)
		}
		err = rcv.Start(context.Background(), componenttest.NewNopHost())
		if err == nil {
			c := &collector{grpcAddr: grpcAddr, httpAddr: httpAddr, rcv: rcv}
			t.Cleanup(c.stop)
			return c
		}
		rcv.Shutdown(context.Background())
		if time.Now().After(deadline) {
			t.Fatalf("cannot start the Collector's OTLP receiver: %v", err)
		}
		time.Sleep(50 * time.Millisecond) // the port is being released
	}
}

func (c *collector) stop() {
	if c.rcv != nil {
		c.rcv.Shutdown(context.Background())
		c.rcv = nil
	}
}

// fwdRequest is a request of n spans with ids prefix-0 ... prefix-(n-1).
func fwdRequest(prefix string, n int) *coltracepb.ExportTraceServiceRequest {
	spans := make([]*tracepb.Span, n)
	for i := range spans {
		tid := make([]byte, 16)
		copy(tid, fmt.Sprintf("%016d", i))
		spans[i] = &tracepb.Span{
			TraceId: tid, SpanId: []byte{1, 2, 3, 4, 5, 6, 7, 8}, Name: "forwarded",
			StartTimeUnixNano: 1, EndTimeUnixNano: 2,
			Attributes: []*commonpb.KeyValue{{Key: fwdIDKey, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: fmt.Sprintf("%s-%d", prefix, i)}}}},
		}
	}
	return &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: spans}}}}}
}

// load sends requests of spansPer spans to srv from one grpc-go client
// until stop is closed, and returns the ids of every span acknowledged.
func load(t *testing.T, srv *server, prefix string, spansPer int, stop <-chan struct{}) map[string]bool {
	client := coltracepb.NewTraceServiceClient(srv.dial(t))
	acked := map[string]bool{}
	for seq := 0; ; seq++ {
		select {
		case <-stop:
			return acked
		default:
		}
		p := fmt.Sprintf("%s-%d", prefix, seq)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := client.Export(ctx, fwdRequest(p, spansPer))
		cancel()
		if err != nil {
			continue // e.g. a SIGKILL: not acknowledged, no promise
		}
		for i := range spansPer {
			acked[fmt.Sprintf("%s-%d", p, i)] = true
		}
	}
}

// waitAll waits until sink has every id of want.
func waitAll(t *testing.T, sink *spanCounter, want map[string]bool, what string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		miss := sink.missing(want)
		if len(miss) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d of %d acknowledged spans never reached the Collector (e.g. %v)", what, len(miss), len(want), miss[:min(5, len(miss))])
		}
		time.Sleep(50 * time.Millisecond) // polling
	}
}

// scrape returns the value of one series of srv's /metrics, "" if absent.
func scrape(t *testing.T, adminAddr, series string) string {
	t.Helper()
	resp, err := http.Get("http://" + adminAddr + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			return v
		}
	}
	return ""
}

// waitMetric waits until series reads want.
func waitScrape(t *testing.T, adminAddr, series, want string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := scrape(t, adminAddr, series)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s = %q, want %q", series, got, want)
		}
		time.Sleep(50 * time.Millisecond) // polling
	}
}

// exportTraces sends one request and waits for its acknowledgement.
func exportTraces(conn *grpc.ClientConn, req *coltracepb.ExportTraceServiceRequest) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := coltracepb.NewTraceServiceClient(conn).Export(ctx, req)
	return err
}
