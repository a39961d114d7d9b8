package interop

// The OpenTelemetry Collector's own components, used as libraries, against
// the otlp-lite binary for the profiles signal (OTLP v1.11, Alpha):
//
//   - its otlpexporter (OTLP/gRPC) and otlphttpexporter (OTLP/HTTP) send
//     profiles built with pdata/pprofile, plain, gzip and zstd, and as
//     pdata's OTLP/JSON; every request is stored exactly as the exporter
//     encoded it (read back with
//     the official generated types, and with `otlp-lite export`), and the
//     receiver's counters on /metrics count the samples as the Collector's
//     own receiver does;
//   - its otlpreceiver gets the stored profiles back from `otlp-lite
//     replay`, over OTLP/gRPC and OTLP/HTTP.
//
// Profiles support is no feature gate in Collector v0.165: the exporters'
// and the receiver's factories are xexporter/xreceiver factories with
// CreateProfiles (the profiles signal is "alpha" in their metadata).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/xconsumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/otlpexporter"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/exporter/xexporter"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/xreceiver"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	colprofilespb "go.opentelemetry.io/proto/otlp/collector/profiles/v1development"
	"go.uber.org/zap"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/otlp-lite/otlp-lite/storage"
)

// collectorProfiles builds the profiles of request seed the way a
// profiler does: one resource and scope, two CPU profiles of 300 samples
// each over deep stacks (8 to 40 frames), all sharing one dictionary, with
// every field of every profiles message set somewhere. The same seed always
// gives the same profiles.
func collectorProfiles(seed uint64) pprofile.Profiles {
	r := rand.New(rand.NewPCG(seed, 42))
	pd := pprofile.NewProfiles()
	d := pd.Dictionary()
	st := d.StringTable()
	str := func(s string) int32 {
		for i := range st.Len() {
			if st.At(i) == s {
				return int32(i)
			}
		}
		st.Append(s)
		return int32(st.Len() - 1)
	}
	str("") // string_table[0] is the empty string

	// Element 0 of every table is its zero value (profiles.proto).
	d.MappingTable().AppendEmpty()
	d.LocationTable().AppendEmpty()
	d.FunctionTable().AppendEmpty()
	d.LinkTable().AppendEmpty()
	d.AttributeTable().AppendEmpty()
	d.StackTable().AppendEmpty()

	attr := d.AttributeTable().AppendEmpty() // 1: thread.name
	attr.SetKeyStrindex(str("thread.name"))
	attr.Value().SetStr(fmt.Sprintf("worker-%d", seed))
	attr = d.AttributeTable().AppendEmpty() // 2: a measured value with a unit
	attr.SetKeyStrindex(str("process.cpu.utilization"))
	attr.Value().SetDouble(0.25)
	attr.SetUnitStrindex(str("1"))
	attr = d.AttributeTable().AppendEmpty() // 3: an integer
	attr.SetKeyStrindex(str("cpu.id"))
	attr.Value().SetInt(3)

	m := d.MappingTable().AppendEmpty()
	m.SetMemoryStart(0x400000)
	m.SetMemoryLimit(0x4f0000)
	m.SetFileOffset(0x1000)
	m.SetFilenameStrindex(str("/usr/bin/checkout"))
	m.AttributeIndices().Append(3)
	m = d.MappingTable().AppendEmpty()
	m.SetMemoryStart(0x7f0000000000)
	m.SetMemoryLimit(0x7f0000200000)
	m.SetFilenameStrindex(str("/usr/lib/libc.so.6"))

	const nFunctions, nLocations, nStacks = 60, 90, 40
	for i := range nFunctions {
		f := d.FunctionTable().AppendEmpty()
		f.SetNameStrindex(str(fmt.Sprintf("main.handler%d", i)))
		f.SetSystemNameStrindex(str(fmt.Sprintf("main.handler%d.abi0", i)))
		f.SetFilenameStrindex(str(fmt.Sprintf("/src/checkout/handler%d.go", i%7)))
		f.SetStartLine(int64(10 * i))
	}
	for i := range nLocations {
		l := d.LocationTable().AppendEmpty()
		l.SetMappingIndex(int32(1 + i%2))
		l.SetAddress(0x401000 + uint64(i)*0x40)
		for j := range 1 + i%3 { // inlined frames
			line := l.Lines().AppendEmpty()
			line.SetFunctionIndex(int32(1 + (i+j)%nFunctions))
			line.SetLine(int64(12 + i + j))
			line.SetColumn(int64(j + 1))
		}
		if i%10 == 0 {
			l.AttributeIndices().Append(3)
		}
	}
	for range nStacks {
		s := d.StackTable().AppendEmpty()
		for range 8 + r.IntN(33) {
			s.LocationIndices().Append(int32(1 + r.IntN(nLocations)))
		}
	}
	link := d.LinkTable().AppendEmpty()
	link.SetTraceID(pcommon.TraceID{0x5b, 0x8e, 0xff, 0xf7, 0x98, 0x03, 0x81, 0x03, 0xd2, 0x69, 0xb6, 0x33, 0x81, 0x3f, 0xc6, byte(seed)})
	link.SetSpanID(pcommon.SpanID{0xee, 0xe1, 0x9b, 0x7e, 0xc3, 0xc1, 0xb1, byte(seed)})

	rp := pd.ResourceProfiles().AppendEmpty()
	rp.SetSchemaUrl("https://opentelemetry.io/schemas/1.30.0")
	res := rp.Resource()
	res.Attributes().PutStr("service.name", "checkout")
	res.Attributes().PutInt("process.pid", 4242)
	res.Attributes().PutStr("host.name", fmt.Sprintf("node-%d", seed))
	res.SetDroppedAttributesCount(1)
	sp := rp.ScopeProfiles().AppendEmpty()
	sp.SetSchemaUrl("https://opentelemetry.io/schemas/1.30.0")
	sp.Scope().SetName("go.opentelemetry.io/ebpf-profiler")
	sp.Scope().SetVersion("0.0.202611")
	sp.Scope().Attributes().PutStr("profiler.mode", "cpu")
	sp.Scope().SetDroppedAttributesCount(2)

	start := time.Unix(1_795_000_000, int64(seed)).UTC()
	for p := range 2 {
		prof := sp.Profiles().AppendEmpty()
		prof.SampleType().SetTypeStrindex(str("cpu"))
		prof.SampleType().SetUnitStrindex(str("nanoseconds"))
		prof.PeriodType().SetTypeStrindex(str("cpu"))
		prof.PeriodType().SetUnitStrindex(str("nanoseconds"))
		prof.SetPeriod(10_000_000)
		prof.SetTime(pcommon.NewTimestampFromTime(start))
		prof.SetDurationNano(uint64(10 * time.Second))
		prof.SetProfileID(pprofile.ProfileID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, byte(seed), byte(p), 0xff})
		prof.SetDroppedAttributesCount(uint32(p))
		prof.AttributeIndices().Append(1)
		if p == 1 {
			prof.SetOriginalPayloadFormat("pprofext")
			prof.OriginalPayload().FromRaw([]byte{0x1f, 0x8b, 0x08, 0x00, byte(seed)})
		}
		for i := range 300 {
			s := prof.Samples().AppendEmpty()
			s.SetStackIndex(int32(1 + r.IntN(nStacks)))
			s.Values().Append(int64(10_000_000 * (1 + r.IntN(5))))
			if i%2 == 0 {
				s.TimestampsUnixNano().Append(uint64(start.UnixNano()) + uint64(i)*uint64(time.Millisecond))
			}
			if i%3 == 0 {
				s.AttributeIndices().Append(1, 2)
			}
			if i%50 == 0 {
				s.SetLinkIndex(1)
			}
		}
	}
	return pd
}

// profilesSamples is pprofile's sample count, the Collector's unit.
func profilesSamples(pd pprofile.Profiles) int { return pd.SampleCount() }

// wireProfiles is the ExportProfilesServiceRequest the Collector's
// exporters put on the wire for pd: pdata moves resource and scope
// attribute strings into the string table (key_strindex,
// string_value_strindex) as it encodes. pd must not be used afterwards.
func wireProfiles(t *testing.T, pd pprofile.Profiles) *colprofilespb.ExportProfilesServiceRequest {
	t.Helper()
	b, err := (&pprofile.ProtoMarshaler{}).MarshalProfiles(pd)
	if err != nil {
		t.Fatal(err)
	}
	req := new(colprofilespb.ExportProfilesServiceRequest)
	if err := proto.Unmarshal(b, req); err != nil {
		t.Fatal(err)
	}
	return req
}

// collectorTelemetry is quiet telemetry for Collector components.
func collectorTelemetry() component.TelemetrySettings {
	return component.TelemetrySettings{
		Logger:         zap.NewNop(),
		TracerProvider: tracenoop.NewTracerProvider(),
		MeterProvider:  metricnoop.NewMeterProvider(),
		Resource:       pcommon.NewResource(),
	}
}

// nopHost is a component.Host without extensions.
type nopHost struct{}

func (nopHost) GetExtensions() map[component.ID]component.Component { return nil }

// collectorProfilesExporter starts the Collector's otlp ("otlp") or
// otlphttp ("otlphttp", or "otlphttp-json" with its JSON encoding)
// exporter for profiles towards addr, with the
// compression comp and no sending queue, so ConsumeProfiles returns once
// the receiver answered (retries on failure stay on, as configured by
// default).
func collectorProfilesExporter(t *testing.T, kind, addr string, comp configcompression.Type) xexporter.Profiles {
	t.Helper()
	var f exporter.Factory
	var cfg component.Config
	switch kind {
	case "otlp":
		f = otlpexporter.NewFactory()
		c := f.CreateDefaultConfig().(*otlpexporter.Config)
		c.ClientConfig.Endpoint = addr
		c.ClientConfig.TLS.Insecure = true
		c.ClientConfig.Compression = comp
		c.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
		cfg = c
	case "otlphttp", "otlphttp-json":
		f = otlphttpexporter.NewFactory()
		c := f.CreateDefaultConfig().(*otlphttpexporter.Config)
		c.ClientConfig.Endpoint = "http://" + addr
		c.ClientConfig.Compression = comp
		c.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
		if kind == "otlphttp-json" {
			c.Encoding = otlphttpexporter.EncodingJSON
		}
		cfg = c
	default:
		t.Fatalf("unknown exporter %q", kind)
	}
	xf, ok := f.(xexporter.Factory)
	if !ok {
		t.Fatalf("the %s exporter factory has no profiles support (not an xexporter.Factory)", kind)
	}
	ctx := context.Background()
	exp, err := xf.CreateProfiles(ctx, exporter.Settings{ID: component.NewID(f.Type()), TelemetrySettings: collectorTelemetry(), BuildInfo: component.NewDefaultBuildInfo()}, cfg)
	if err != nil {
		t.Fatalf("cannot create the %s profiles exporter: %v", kind, err)
	}
	if err := exp.Start(ctx, nopHost{}); err != nil {
		t.Fatalf("cannot start the %s profiles exporter: %v", kind, err)
	}
	t.Cleanup(func() { exp.Shutdown(context.Background()) })
	return exp
}

// scrapeMetrics returns the body of the admin listener's /metrics.
func scrapeMetrics(t *testing.T, adminAddr string) string {
	t.Helper()
	resp, err := http.Get("http://" + adminAddr + "/metrics")
	if err != nil {
		t.Fatalf("cannot scrape /metrics: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %d, %v", resp.StatusCode, err)
	}
	return string(b)
}

// TestProfilesFromCollectorExporters: the Collector's OTLP exporters send
// profiles to otlp-lite over gRPC (its unary ProfilesService/Export) and
// OTLP/HTTP (/v1development/profiles), uncompressed, gzip and zstd, and
// OTLP/HTTP with pdata's JSON encoding; every
// request is stored as sent, readable with the official generated types and
// as the fileexporter's ProfilesData JSON lines.
func TestProfilesFromCollectorExporters(t *testing.T) {
	dataDir := t.TempDir()
	adminAddr := freeAddr(t)
	srv := startServerHTTP(t, dataDir, "-admin-addr", adminAddr)

	type send struct {
		exporter string
		comp     configcompression.Type
	}
	var sends []send
	for _, e := range []string{"otlp", "otlphttp"} {
		for _, c := range []configcompression.Type{"none", configcompression.TypeGzip, configcompression.TypeZstd} {
			sends = append(sends, send{e, c})
		}
	}
	// pdata's OTLP/JSON, whose profileId is hex (read as such, see
	// otlpjson's kProfileID), decoded by the receiver to the same protobuf.
	sends = append(sends, send{"otlphttp-json", configcompression.TypeGzip})
	var sent []*colprofilespb.ExportProfilesServiceRequest
	samples, requests := map[string]int{}, map[string]int{}
	for i, s := range sends {
		addr := srv.addr
		transport := "grpc"
		if strings.HasPrefix(s.exporter, "otlphttp") {
			addr, transport = srv.httpAddr, "http"
		}
		exp := collectorProfilesExporter(t, s.exporter, addr, s.comp)
		seed := uint64(i + 1)
		pd := collectorProfiles(seed)
		samples[transport] += profilesSamples(pd)
		requests[transport]++
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := exp.ConsumeProfiles(ctx, pd)
		cancel()
		if err != nil {
			t.Fatalf("%s exporter, compression %s: %v", s.exporter, s.comp, err)
		}
		sent = append(sent, wireProfiles(t, collectorProfiles(seed)))
	}

	// The operator's view: the Collector's counter names, in samples.
	metrics := scrapeMetrics(t, adminAddr)
	for transport, n := range samples {
		for _, want := range []string{
			fmt.Sprintf(`otelcol_receiver_accepted_profile_samples_total{receiver="otlp",transport=%q} %d`, transport, n),
			fmt.Sprintf(`otelcol_receiver_failed_profile_samples_total{receiver="otlp",transport=%q} 0`, transport),
			fmt.Sprintf(`otlplite_requests_total{transport=%q,signal="profiles",code="OK"} %d`, transport, requests[transport]),
		} {
			if !strings.Contains(metrics, want) {
				t.Errorf("/metrics lacks %q", want)
			}
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", metrics)
	}
	srv.stop()

	stored := scanStore(t, dataDir, storage.Profiles, func() *colprofilespb.ExportProfilesServiceRequest {
		return new(colprofilespb.ExportProfilesServiceRequest)
	})
	matchMessages(t, "profiles", sent, stored)

	// `otlp-lite export -signal profiles`: one ProfilesData per line, each
	// a stored request (with its dictionary) as OTLP/JSON, which the
	// Collector's pdata reads back to the same profiles.
	lines := bytes.Split(bytes.TrimSuffix(exportJSON(t, dataDir, storage.Profiles), []byte("\n")), []byte("\n"))
	if len(lines) != len(stored) {
		t.Fatalf("export printed %d lines for %d records", len(lines), len(stored))
	}
	for i, line := range lines {
		if !bytes.HasPrefix(line, []byte(`{"resourceProfiles":[`)) || !bytes.Contains(line, []byte(`"dictionary":{`)) {
			t.Fatalf("export line %d is not a ProfilesData with its dictionary: %.300s", i, line)
		}
		got := jsonProfilesAsWire(t, line)
		if !proto.Equal(got, stored[i]) {
			t.Errorf("export line %d differs from record %d:\n%s", i, i, diffProto(stored[i], got))
		}
	}
}

// jsonProfilesAsWire reads one OTLP/JSON ProfilesData line with protojson,
// after turning the hex trace and span ids back to base64 (the OTLP/JSON
// exception protojson does not know).
func jsonProfilesAsWire(t *testing.T, line []byte) *colprofilespb.ExportProfilesServiceRequest {
	t.Helper()
	b, err := json.Marshal(ojBase64IDs(t, ojParse(t, line)))
	if err != nil {
		t.Fatal(err)
	}
	m := new(colprofilespb.ExportProfilesServiceRequest)
	if err := protojson.Unmarshal(b, m); err != nil {
		t.Fatalf("protojson cannot read an export line: %v\n%.500s", err, line)
	}
	return m
}

// profilesConsumer collects what a Collector receiver hands on.
type profilesConsumer struct {
	mu  sync.Mutex
	got []pprofile.Profiles
	n   chan struct{} // one value per ConsumeProfiles
}

func (c *profilesConsumer) consume(_ context.Context, pd pprofile.Profiles) error {
	cp := pprofile.NewProfiles()
	pd.CopyTo(cp)
	c.mu.Lock()
	c.got = append(c.got, cp)
	c.mu.Unlock()
	c.n <- struct{}{}
	return nil
}

// startCollectorReceiver starts the Collector's otlpreceiver for profiles
// on free ports (gRPC and HTTP), handing everything it receives to c.
func startCollectorReceiver(t *testing.T, c *profilesConsumer) (grpcAddr, httpAddr string) {
	t.Helper()
	f, ok := otlpreceiver.NewFactory().(xreceiver.Factory)
	if !ok {
		t.Fatal("the otlp receiver factory has no profiles support (not an xreceiver.Factory)")
	}
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	grpcAddr, httpAddr = freeAddr(t), freeAddr(t)
	cfg.Protocols.GRPC.GetOrInsertDefault().NetAddr.Endpoint = grpcAddr
	cfg.Protocols.HTTP.GetOrInsertDefault().ServerConfig.NetAddr.Endpoint = httpAddr
	next, err := xconsumer.NewProfiles(c.consume)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rcv, err := f.CreateProfiles(ctx, receiver.Settings{ID: component.NewID(f.Type()), TelemetrySettings: collectorTelemetry(), BuildInfo: component.NewDefaultBuildInfo()}, cfg, next)
	if err != nil {
		t.Fatalf("cannot create the Collector's otlp receiver: %v", err)
	}
	if err := rcv.Start(ctx, nopHost{}); err != nil {
		t.Fatalf("cannot start the Collector's otlp receiver: %v", err)
	}
	t.Cleanup(func() { rcv.Shutdown(context.Background()) })
	return grpcAddr, httpAddr
}

// TestProfilesReplayToCollector: profiles stored by otlp-lite and replayed
// with `otlp-lite replay` (OTLP/gRPC, then OTLP/HTTP) reach the Collector's
// otlpreceiver as the same profiles pdata reads from the stored records.
func TestProfilesReplayToCollector(t *testing.T) {
	dataDir := t.TempDir()
	srv := startServer(t, dataDir)
	exp := collectorProfilesExporter(t, "otlp", srv.addr, configcompression.TypeGzip)
	const requests = 3
	for i := range requests {
		if err := exp.ConsumeProfiles(context.Background(), collectorProfiles(uint64(100+i))); err != nil {
			t.Fatal(err)
		}
	}
	srv.stop()

	// What pdata reads from each stored record, as its JSON (pdata's
	// canonical form of a pprofile.Profiles, references resolved).
	var want []string
	for _, rec := range scanStore(t, dataDir, storage.Profiles, func() *colprofilespb.ExportProfilesServiceRequest {
		return new(colprofilespb.ExportProfilesServiceRequest)
	}) {
		b, err := proto.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		pd, err := (&pprofile.ProtoUnmarshaler{}).UnmarshalProfiles(b)
		if err != nil {
			t.Fatalf("pdata cannot read a stored record: %v", err)
		}
		want = append(want, pdataJSON(t, pd))
	}
	if len(want) != requests {
		t.Fatalf("%d records stored, want %d", len(want), requests)
	}

	for _, protocol := range []string{"grpc", "http"} {
		t.Run(protocol, func(t *testing.T) {
			c := &profilesConsumer{n: make(chan struct{}, 2*requests)}
			grpcAddr, httpAddr := startCollectorReceiver(t, c)
			endpoint := grpcAddr
			if protocol == "http" {
				endpoint = httpAddr
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, serverBin, "replay", "-data-dir", dataDir, "-endpoint", endpoint,
				"-protocol", protocol, "-insecure", "-signal", "profiles")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("otlp-lite replay -protocol %s: %v\n%s", protocol, err, out)
			}
			// replay exits once every record is acknowledged, and the
			// receiver acknowledges after its consumer returned.
			c.mu.Lock()
			defer c.mu.Unlock()
			if len(c.got) != requests {
				t.Fatalf("the Collector received %d requests, want %d\nreplay: %s", len(c.got), requests, out)
			}
			for i, pd := range c.got {
				if got := pdataJSON(t, pd); got != want[i] {
					t.Errorf("request %d differs from the stored record:\ngot:  %.2000s\nwant: %.2000s", i, got, want[i])
				}
			}
		})
	}
}

// pdataJSON is pdata's JSON of pd.
func pdataJSON(t *testing.T, pd pprofile.Profiles) string {
	t.Helper()
	b, err := (&pprofile.JSONMarshaler{}).MarshalProfiles(pd)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestProfilesReplayStream: `otlp-lite replay -protocol stream` carries
// profiles to a second otlp-lite in the streaming mode, whose envelope
// (ProfilesExportRequest) holds the dictionary as field 3: the second
// store holds exactly the first one's records.
func TestProfilesReplayStream(t *testing.T) {
	dirA, dirB := t.TempDir(), t.TempDir()
	a := startServer(t, dirA)
	exp := collectorProfilesExporter(t, "otlp", a.addr, "none")
	for i := range 3 {
		if err := exp.ConsumeProfiles(context.Background(), collectorProfiles(uint64(200+i))); err != nil {
			t.Fatal(err)
		}
	}
	a.stop()
	b := startServer(t, dirB)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, serverBin, "replay", "-data-dir", dirA, "-endpoint", b.addr,
		"-protocol", "stream", "-insecure", "-signal", "profiles").CombinedOutput()
	if err != nil {
		t.Fatalf("otlp-lite replay -protocol stream: %v\n%s", err, out)
	}
	b.stop()
	newReq := func() *colprofilespb.ExportProfilesServiceRequest {
		return new(colprofilespb.ExportProfilesServiceRequest)
	}
	want, got := scanStore(t, dirA, storage.Profiles, newReq), scanStore(t, dirB, storage.Profiles, newReq)
	if len(want) != 3 {
		t.Fatalf("%d records stored by the first server, want 3", len(want))
	}
	matchMessages(t, "profiles replayed on a stream", want, got)
}
