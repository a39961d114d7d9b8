package interop

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"
	"google.golang.org/protobuf/proto"
)

// capture records, on the client side of a grpc-go connection, every OTLP
// export the client made and what the server answered. Installed into an
// OpenTelemetry SDK exporter through WithDialOption, it tells the test the
// exact messages the server acknowledged, so the store can be compared with
// them field by field (proto.Equal) instead of with a re-derivation of what
// the SDK would have sent.
type capture struct {
	mu           sync.Mutex
	traces       []*coltracepb.ExportTraceServiceRequest
	metrics      []*colmetricspb.ExportMetricsServiceRequest
	logs         []*collogspb.ExportLogsServiceRequest
	failures     []string       // RPCs that returned an error
	partial      []string       // OK responses that carried a partial_success
	compressions map[string]int // grpc-encoding of each sent request ("" = identity)
}

func newCapture() *capture {
	return &capture{compressions: make(map[string]int)}
}

func (c *capture) dialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithChainUnaryInterceptor(c.intercept),
		grpc.WithStatsHandler(c),
	}
}

// intercept is a grpc.UnaryClientInterceptor.
func (c *capture) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.failures = append(c.failures, fmt.Sprintf("%s: %v", method, err))
		return err
	}
	switch r := req.(type) {
	case *coltracepb.ExportTraceServiceRequest:
		c.traces = append(c.traces, proto.Clone(r).(*coltracepb.ExportTraceServiceRequest))
		if ps := reply.(*coltracepb.ExportTraceServiceResponse).GetPartialSuccess(); ps != nil {
			c.partial = append(c.partial, fmt.Sprintf("%s: %v", method, ps))
		}
	case *colmetricspb.ExportMetricsServiceRequest:
		c.metrics = append(c.metrics, proto.Clone(r).(*colmetricspb.ExportMetricsServiceRequest))
		if ps := reply.(*colmetricspb.ExportMetricsServiceResponse).GetPartialSuccess(); ps != nil {
			c.partial = append(c.partial, fmt.Sprintf("%s: %v", method, ps))
		}
	case *collogspb.ExportLogsServiceRequest:
		c.logs = append(c.logs, proto.Clone(r).(*collogspb.ExportLogsServiceRequest))
		if ps := reply.(*collogspb.ExportLogsServiceResponse).GetPartialSuccess(); ps != nil {
			c.partial = append(c.partial, fmt.Sprintf("%s: %v", method, ps))
		}
	default:
		c.failures = append(c.failures, fmt.Sprintf("%s: unexpected request type %T", method, req))
	}
	return nil
}

// TagRPC, HandleRPC, TagConn and HandleConn make capture a stats.Handler;
// only the client's outgoing headers matter: they name the compressor the
// RPC was really sent with.
func (c *capture) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }

func (c *capture) HandleRPC(_ context.Context, s stats.RPCStats) {
	if h, ok := s.(*stats.OutHeader); ok && h.Client {
		c.mu.Lock()
		c.compressions[h.Compression]++
		c.mu.Unlock()
	}
}

func (c *capture) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }

func (c *capture) HandleConn(context.Context, stats.ConnStats) {}

// summary describes what was captured, for failure messages.
func (c *capture) summary() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var comps []string
	for k, n := range c.compressions {
		comps = append(comps, fmt.Sprintf("%q×%d", k, n))
	}
	sort.Strings(comps)
	return fmt.Sprintf("%d trace, %d metrics, %d logs requests OK; failures: [%s]; partial successes: [%s]; compressions: %s",
		len(c.traces), len(c.metrics), len(c.logs), strings.Join(c.failures, "; "), strings.Join(c.partial, "; "), strings.Join(comps, " "))
}
