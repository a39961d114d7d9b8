package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/otelarrowreceiver"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/receivertest"
)

// counter is the reference receiver's consumer: it counts items and keeps
// nothing (as otlp-lite's -storage discard).
type counter struct{ items atomic.Int64 }

func (c *counter) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (c *counter) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	c.items.Add(int64(td.SpanCount()))
	return nil
}

func (c *counter) ConsumeMetrics(_ context.Context, md pmetric.Metrics) error {
	c.items.Add(int64(md.DataPointCount()))
	return nil
}

func (c *counter) ConsumeLogs(_ context.Context, ld plog.Logs) error {
	c.items.Add(int64(ld.LogRecordCount()))
	return nil
}

// serveContrib runs contrib's otelarrowreceiver (v0.148.0, its default
// configuration but the endpoint) on addr until SIGTERM, then prints the
// items it counted.
func serveContrib(addr string) error {
	f := otelarrowreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otelarrowreceiver.Config)
	cfg.GRPC.NetAddr.Endpoint = addr
	set := receivertest.NewNopSettings(f.Type())
	c := &counter{}
	ctx := context.Background()
	tr, err := f.CreateTraces(ctx, set, cfg, c)
	if err != nil {
		return err
	}
	mr, err := f.CreateMetrics(ctx, set, cfg, c)
	if err != nil {
		return err
	}
	lr, err := f.CreateLogs(ctx, set, cfg, c)
	if err != nil {
		return err
	}
	host := componenttest.NewNopHost()
	if err := tr.Start(ctx, host); err != nil {
		return err
	}
	if err := mr.Start(ctx, host); err != nil {
		return err
	}
	if err := lr.Start(ctx, host); err != nil {
		return err
	}
	fmt.Println("ready")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	<-sig
	tr.Shutdown(ctx)
	mr.Shutdown(ctx)
	lr.Shutdown(ctx)
	fmt.Println("items", c.items.Load())
	return nil
}
