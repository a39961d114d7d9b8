// Package stef_test sends real metrics with the Collector's stefexporter
// (contrib v0.148.0, as a library) to otlp-lite's STEFDestination/Stream
// and finds every data point again in the disk log, read with pdata. It is
// a module of its own so that the Collector versions it needs do not fight
// those of interop/.
package stef_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/stefexporter"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/zap"

	"github.com/otlp-lite/otlp-lite/service"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// dataset is the OpenTelemetry demo's metrics (../../../shared/datasets,
// its README): one MetricsData message.
const dataset = "../../../shared/datasets/hipstershop-otelmetrics.zst"

// resourcesPerRequest cuts the dataset into requests of this many
// resources each, in order, as the STEF benchmarks do.
const resourcesPerRequest = 10

func loadRequests(t *testing.T) []pmetric.Metrics {
	t.Helper()
	f, err := os.Open(dataset)
	if err != nil {
		t.Skipf("dataset not available: %v", err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	br := bufio.NewReader(zr)
	var reqs []pmetric.Metrics
	var u pmetric.ProtoUnmarshaler
	for {
		var n [4]byte
		if _, err := io.ReadFull(br, n[:]); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, binary.BigEndian.Uint32(n[:]))
		if _, err := io.ReadFull(br, buf); err != nil {
			t.Fatal(err)
		}
		md, err := u.UnmarshalMetrics(buf)
		if err != nil {
			t.Fatal(err)
		}
		rms := md.ResourceMetrics()
		for i := 0; i < rms.Len(); i += resourcesPerRequest {
			req := pmetric.NewMetrics()
			for j := i; j < min(i+resourcesPerRequest, rms.Len()); j++ {
				rms.At(j).CopyTo(req.ResourceMetrics().AppendEmpty())
			}
			reqs = append(reqs, req)
		}
	}
	return reqs
}

// pointKeys returns one key per data point: its resource, scope, metric
// and the point itself, as what STEF keeps of them (see the README's
// STEF section for what it does not keep).
func pointKeys(md pmetric.Metrics, into map[string]int, add int) int {
	n := 0
	rms := md.ResourceMetrics()
	for i := range rms.Len() {
		rm := rms.At(i)
		res := fmt.Sprint(rm.Resource().Attributes().AsRaw(), rm.SchemaUrl())
		for j := range rm.ScopeMetrics().Len() {
			sm := rm.ScopeMetrics().At(j)
			scope := fmt.Sprint(sm.Scope().Name(), sm.Scope().Version(), sm.Scope().Attributes().AsRaw())
			for k := range sm.Metrics().Len() {
				m := sm.Metrics().At(k)
				met := fmt.Sprint(m.Name(), "|", m.Description(), "|", m.Unit(), "|", m.Type())
				each := func(attrs pcommon.Map, start, ts pcommon.Timestamp, v string) {
					into[strings.Join([]string{res, scope, met, fmt.Sprint(attrs.AsRaw()), fmt.Sprint(start, ts), v}, "\x00")] += add
					n++
				}
				switch m.Type() {
				case pmetric.MetricTypeGauge, pmetric.MetricTypeSum:
					var dps pmetric.NumberDataPointSlice
					if m.Type() == pmetric.MetricTypeGauge {
						dps = m.Gauge().DataPoints()
					} else {
						dps = m.Sum().DataPoints()
						met += fmt.Sprint(m.Sum().AggregationTemporality(), m.Sum().IsMonotonic())
					}
					for d := range dps.Len() {
						p := dps.At(d)
						each(p.Attributes(), p.StartTimestamp(), p.Timestamp(), fmt.Sprint(p.ValueType(), p.IntValue(), p.DoubleValue()))
					}
				case pmetric.MetricTypeHistogram:
					dps := m.Histogram().DataPoints()
					for d := range dps.Len() {
						p := dps.At(d)
						each(p.Attributes(), p.StartTimestamp(), p.Timestamp(), fmt.Sprint(p.Count(), p.Sum(), p.BucketCounts().AsRaw(), p.ExplicitBounds().AsRaw()))
					}
				case pmetric.MetricTypeExponentialHistogram:
					dps := m.ExponentialHistogram().DataPoints()
					for d := range dps.Len() {
						p := dps.At(d)
						each(p.Attributes(), p.StartTimestamp(), p.Timestamp(), fmt.Sprint(p.Count(), p.Sum(), p.Scale(), p.ZeroCount(), p.Positive().BucketCounts().AsRaw(), p.Negative().BucketCounts().AsRaw()))
					}
				case pmetric.MetricTypeSummary:
					dps := m.Summary().DataPoints()
					for d := range dps.Len() {
						p := dps.At(d)
						qs := ""
						for q := range p.QuantileValues().Len() {
							qs += fmt.Sprint(p.QuantileValues().At(q).Quantile(), p.QuantileValues().At(q).Value())
						}
						each(p.Attributes(), p.StartTimestamp(), p.Timestamp(), fmt.Sprint(p.Count(), p.Sum(), qs))
					}
				}
			}
		}
	}
	return n
}

// TestStefExporterEveryPointStored sends with the exporter's STEF frames
// uncompressed (its default) and zstd-compressed, decompressed by
// stefreceiver's window-bounded decoder.
func TestStefExporterEveryPointStored(t *testing.T) {
	t.Run("none", func(t *testing.T) { testStefExporter(t, false) })
	t.Run("zstd", func(t *testing.T) { testStefExporter(t, true) })
}

func testStefExporter(t *testing.T, zstd bool) {
	reqs := loadRequests(t)
	dir := t.TempDir()
	cfg := service.DefaultConfig()
	cfg.GRPCAddr, cfg.HTTPAddr, cfg.DataDir = "127.0.0.1:0", "", dir
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.STEF = true
	svc, err := service.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}

	f := stefexporter.NewFactory()
	ecfg := f.CreateDefaultConfig().(*stefexporter.Config)
	ecfg.ClientConfig.Endpoint = svc.GRPCAddr()
	ecfg.ClientConfig.TLS.Insecure = true
	ecfg.ClientConfig.Compression = ""
	if zstd {
		ecfg.ClientConfig.Compression = "zstd"
	}
	// The default queue (sending_queue on, as in a Collector): the
	// exporter sends from it; Shutdown drains it.
	exp, err := f.CreateMetrics(ctx, exporter.Settings{
		ID: component.NewID(f.Type()),
		TelemetrySettings: component.TelemetrySettings{
			Logger: zap.NewNop(), MeterProvider: noop.NewMeterProvider(), TracerProvider: tracenoop.NewTracerProvider(),
		},
		BuildInfo: component.NewDefaultBuildInfo(),
	}, ecfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.Start(ctx, nopHost{}); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	sent := 0
	for _, r := range reqs {
		sent += pointKeys(r, want, 1)
		if err := exp.ConsumeMetrics(ctx, r); err != nil {
			t.Fatalf("ConsumeMetrics: %v", err)
		}
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := exp.Shutdown(sctx); err != nil {
		t.Fatalf("exporter shutdown (draining its queue): %v", err)
	}
	var prom strings.Builder
	svc.Metrics().WritePrometheus(&prom)
	if err := svc.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}

	got := 0
	rd := disk.NewReader(dir, storage.Metrics, disk.Position{})
	defer rd.Close()
	var u pmetric.ProtoUnmarshaler
	requests := 0
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		md, err := u.UnmarshalMetrics(rec.Data)
		if err != nil {
			t.Fatalf("stored request is not OTLP: %v", err)
		}
		got += pointKeys(md, want, -1)
		requests++
	}
	var diff []string
	for k, v := range want {
		if v != 0 {
			diff = append(diff, fmt.Sprintf("%+d %q", -v, k))
		}
	}
	sort.Strings(diff)
	if len(diff) > 0 {
		t.Errorf("%d data points differ (+ stored, not sent; - sent, not stored), first: %s", len(diff), strings.Join(diff[:min(3, len(diff))], "\n"))
	}
	if got != sent {
		t.Errorf("sent %d data points in %d requests, stored %d", sent, len(reqs), got)
	}
	t.Logf("%d data points in %d requests sent with stefexporter, stored in %d requests (%s)", sent, len(reqs), requests, filepath.Base(dataset))
	for _, line := range strings.Split(prom.String(), "\n") {
		if strings.Contains(line, `transport="stef"`) && strings.Contains(line, "bytes_total") {
			t.Log(line)
		}
	}
}

type nopHost struct{}

func (nopHost) GetExtensions() map[component.ID]component.Component { return nil }
