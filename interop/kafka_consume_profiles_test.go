package interop

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/kafkaexporter"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/exporter/xexporter"
	colprofilespb "go.opentelemetry.io/proto/otlp/collector/profiles/v1development"

	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/kafkasource"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// collectorProfilesKafkaExporter starts the Collector's kafkaexporter for
// profiles (its version pinned in go.mod exports them, to otlp_profiles)
// with the given encoding, synchronous as collectorExporters' are.
func collectorProfilesKafkaExporter(t *testing.T, brokers []string, encoding string) xexporter.Profiles {
	t.Helper()
	f := kafkaexporter.NewFactory().(xexporter.Factory)
	cfg := f.CreateDefaultConfig().(*kafkaexporter.Config)
	cfg.Brokers = brokers
	cfg.QueueBatchConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	cfg.BackOffConfig.Enabled = false
	cfg.Profiles.Encoding = encoding
	exp, err := f.CreateProfiles(context.Background(), exportertest.NewNopSettings(component.MustNewType("kafka")), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { exp.Shutdown(context.Background()) })
	return exp
}

// TestKafkaConsumeProfilesFromCollector: the Collector's kafkaexporter
// writes profiles to otlp_profiles in otlp_proto and in otlp_json (pdata's
// JSON, hex profile ids); otlp-lite's consumer reads both, detecting the
// encoding per record. Every profiles request is stored equal, field for
// field through the official generated types
// (opentelemetry-proto's profiles/v1development), to what the exporter
// put on the wire, and the sample counts are exact.
func TestKafkaConsumeProfilesFromCollector(t *testing.T) {
	brokers := newKfake(t)
	var sent []*colprofilespb.ExportProfilesServiceRequest
	samples, profiles := 0, 0
	seed := uint64(100)
	for _, enc := range []string{"otlp_proto", "otlp_json"} {
		exp := collectorProfilesKafkaExporter(t, brokers, enc)
		for range 3 {
			seed++
			pd := collectorProfiles(seed)
			samples += profilesSamples(pd)
			profiles += pd.ProfileCount()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err := exp.ConsumeProfiles(ctx, pd)
			cancel()
			if err != nil {
				t.Fatalf("kafkaexporter, %s: %v", enc, err)
			}
			sent = append(sent, wireProfiles(t, collectorProfiles(seed)))
		}
	}

	dataDir := filepath.Join(t.TempDir(), "data")
	store, err := disk.Open(dataDir, disk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sink := newCountingSink(store)
	set := metrics.NewSet()
	h := handler.New(handler.Config{Sink: sink, Metrics: set, Logger: quietLogger(t)})
	c, err := kafkasource.NewConsumer(kafkasource.ConsumerConfig{Brokers: brokers, Pipeline: h.Pipeline(), Metrics: set, Logger: quietLogger(t),
		Topics: map[otlp.Signal]string{otlp.Profiles: "otlp_profiles"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- c.Run(ctx) }()
	// The sink counts a profiles request's items in profiles.
	sink.waitItems(t, [otlp.MaxSignal + 1]int{storage.Profiles: profiles}, 60*time.Second)
	stop()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	if got := metricValue(set, `otlplite_kafka_consume_dead_letter_records_total{topic="otlp_profiles"}`); got != 0 {
		t.Errorf("%d profiles records dead-lettered, want none", got)
	}
	matchMessages(t, "profiles", sent, scanStore(t, dataDir, storage.Profiles, func() *colprofilespb.ExportProfilesServiceRequest {
		return new(colprofilespb.ExportProfilesServiceRequest)
	}))
	t.Logf("%d profiles requests (%d samples) through Kafka, otlp_proto and otlp_json", len(sent), samples)
}
