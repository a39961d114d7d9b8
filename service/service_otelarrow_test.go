//go:build otelarrow

package service_test

import (
	"context"
	"testing"

	arrowpb "github.com/open-telemetry/otel-arrow/go/api/experimental/arrow/v1"
	"github.com/open-telemetry/otel-arrow/go/pkg/otel/arrow_record"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/otlp-lite/otlp-lite/service"
)

// TestOTelArrowBehindGates: with -otelarrow (on by default in this build)
// the Arrow streams are served on the OTLP port behind the handler's
// gates: without the token a stream is refused UNAUTHENTICATED and
// nothing is stored; with it, the batch is stored and answered OK.
// -otelarrow=false leaves the methods unserved.
func TestOTelArrowBehindGates(t *testing.T) {
	if !service.OTelArrowBuilt || !service.DefaultConfig().OTelArrow.Enabled {
		t.Fatal("built with -tags otelarrow, OTel-Arrow should be in and on")
	}
	sink := &countSink{}
	cfg := testConfig(t.TempDir())
	cfg.Sink = sink
	cfg.AuthTokenFile = tokenFile(t)
	svc := start(t, cfg)
	defer shutdown(t, svc)

	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	for i := range 5 {
		sp := ss.Spans().AppendEmpty()
		sp.SetName("s")
		sp.SetTraceID([16]byte{1, byte(i)})
		sp.SetSpanID([8]byte{2, byte(i)})
	}
	conn, err := grpc.NewClient(svc.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	send := func(ctx context.Context) (*arrowpb.BatchStatus, error) {
		s, err := arrowpb.NewArrowTracesServiceClient(conn).ArrowTraces(ctx)
		if err != nil {
			return nil, err
		}
		prod := arrow_record.NewProducer()
		defer prod.Close()
		bar, err := prod.BatchArrowRecordsFromTraces(td)
		if err != nil {
			t.Fatal(err)
		}
		// A refused stream's Send says io.EOF; Recv has its status.
		_ = s.Send(bar)
		return s.Recv()
	}
	if _, err := send(context.Background()); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("without a token: %v, want UNAUTHENTICATED", err)
	}
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer s3cret-token-for-review")
	st, err := send(ctx)
	if err != nil || st.StatusCode != arrowpb.StatusCode_OK {
		t.Fatalf("with the token: %v %v", st, err)
	}
	if sink.items != 5 {
		t.Fatalf("stored %d spans, want 5", sink.items)
	}
}

// TestOTelArrowOff: -otelarrow=false serves no Arrow method.
func TestOTelArrowOff(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.Sink = &countSink{}
	cfg.OTelArrow.Enabled = false
	svc := start(t, cfg)
	defer shutdown(t, svc)
	conn, err := grpc.NewClient(svc.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	s, err := arrowpb.NewArrowLogsServiceClient(conn).ArrowLogs(context.Background())
	if err == nil {
		_, err = s.Recv()
	}
	if status.Code(err) != codes.Unimplemented {
		t.Fatalf("got %v, want UNIMPLEMENTED", err)
	}
}
