package interop

import (
	"context"
	"slices"
	"sort"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// otlpServices are the fully-qualified gRPC service names of OTLP/gRPC
// (opentelemetry-proto collector/*/v1/*_service.proto).
var otlpServices = []string{
	"opentelemetry.proto.collector.trace.v1.TraceService",
	"opentelemetry.proto.collector.metrics.v1.MetricsService",
	"opentelemetry.proto.collector.logs.v1.LogsService",
}

// TestHealth drives grpc.health.v1.Health with grpc-go's generated client:
// Check of the server ("") and of every OTLP service answers SERVING, an
// unknown service is NOT_FOUND (health.proto: "If the requested service is
// unknown, the call will fail with status NOT_FOUND"), Watch streams
// SERVING first, and List names every service.
func TestHealth(t *testing.T) {
	srv := startServer(t, t.TempDir())
	hc := healthpb.NewHealthClient(srv.dial(t))

	for _, svc := range append([]string{""}, otlpServices...) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: svc})
		cancel()
		if err != nil {
			t.Errorf("Check(%q): %v", svc, err)
		} else if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("Check(%q) = %v, want SERVING", svc, resp.GetStatus())
		}
	}

	t.Run("CheckUnknown", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: "no.such.v1.Service"})
		if status.Code(err) != codes.NotFound {
			t.Errorf("Check(unknown) = %v, %v; want code NotFound", resp, err)
		}
	})

	t.Run("Watch", func(t *testing.T) {
		for _, svc := range []string{"", otlpServices[0]} {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			stream, err := hc.Watch(ctx, &healthpb.HealthCheckRequest{Service: svc})
			if err != nil {
				cancel()
				t.Fatalf("Watch(%q): %v", svc, err)
			}
			resp, err := stream.Recv()
			cancel()
			if err != nil {
				t.Errorf("Watch(%q).Recv: %v", svc, err)
			} else if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
				t.Errorf("Watch(%q) first status = %v, want SERVING", svc, resp.GetStatus())
			}
		}
	})

	t.Run("WatchUnknown", func(t *testing.T) {
		// health.proto: Watch of an unknown service does not fail the
		// call; it sends SERVICE_UNKNOWN and keeps the stream open.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		stream, err := hc.Watch(ctx, &healthpb.HealthCheckRequest{Service: "no.such.v1.Service"})
		if err != nil {
			t.Fatalf("Watch(unknown): %v", err)
		}
		resp, err := stream.Recv()
		if err != nil {
			t.Errorf("Watch(unknown).Recv: %v", err)
		} else if resp.GetStatus() != healthpb.HealthCheckResponse_SERVICE_UNKNOWN {
			t.Errorf("Watch(unknown) first status = %v, want SERVICE_UNKNOWN", resp.GetStatus())
		}
	})

	t.Run("List", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := hc.List(ctx, &healthpb.HealthListRequest{})
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		var names []string
		for name, st := range resp.GetStatuses() {
			names = append(names, name)
			if st.GetStatus() != healthpb.HealthCheckResponse_SERVING {
				t.Errorf("List: %q is %v, want SERVING", name, st.GetStatus())
			}
		}
		sort.Strings(names)
		for _, svc := range append([]string{""}, otlpServices...) {
			if !slices.Contains(names, svc) {
				t.Errorf("List lacks %q; it lists %q", svc, names)
			}
		}
	})

	srv.stop()
}
