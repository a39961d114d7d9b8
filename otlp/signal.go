// Package otlp holds the facts of the OTLP protocol that the receiver, the
// client, the commands and the storage share: the signals and everything
// named after them (services, paths, topics, item words), which failures a
// client may retry, how a partial success is read, otlp-lite's stream
// envelope (proto/otlplite/v1/stream.proto), and the tenant of a request:
// its name rule and the context that carries it (tenant.go).
//
// It sits at the bottom of the module: it imports only the standard
// library (not net/http) and easyproto, and none of the packages that use
// it, so that code which only names or validates OTLP data can import it
// alone (retry rules take a gRPC status through the small Status
// interface, which *grpcwire.Status implements).
package otlp

import "fmt"

// Signal names one of the OTLP signals. The zero value is no signal.
type Signal uint8

// The OTLP signals. The numeric values are stored on disk (storage/disk);
// never renumber them.
const (
	Traces  Signal = 1
	Metrics Signal = 2
	Logs    Signal = 3
	// Profiles is the profiles signal of OTLP v1.11 (Alpha, protobuf
	// package still v1development).
	Profiles Signal = 4
)

// MaxSignal is the largest Signal: arrays indexed by a signal are
// [MaxSignal + 1], so a new signal (its constant, its row in the table and
// in Signals) grows them all.
const MaxSignal = Profiles

// Signals lists every signal in a fixed order.
var Signals = []Signal{Traces, Metrics, Logs, Profiles}

// SignalInfo is what differs between the signals' export services: one row
// per signal, so a new signal is one row of the table.
type SignalInfo struct {
	// Name is the lower-case name: flags, metric labels, messages.
	Name string
	// Items names the items, plural, in messages ("spans").
	Items string
	// ItemsMetric names the items in the collector's metric names
	// ("otelcol_receiver_accepted_spans_total"). For profiles it is
	// "profile_samples": the Collector's receiverhelper counts profiles in
	// samples (otelcol_receiver_accepted_profile_samples), while the
	// partial success counts whole profiles (rejected_profiles).
	ItemsMetric string
	// Request and Response are the export messages
	// (opentelemetry/proto/collector/*/v1/*_service.proto); Data is the
	// message sharing Request's wire format (TracesData: the stored form
	// and the file exporter's).
	Request, Response, Data string
	// GRPCService is the standard OTLP/gRPC service and GRPCPath its Export
	// method's path ("/service/Export").
	GRPCService, GRPCPath string
	// StreamMethod is the method of otlp-lite's StreamService and
	// UnaryEnvelopeService for the signal; StreamPath is its path in
	// StreamService.
	StreamMethod, StreamPath string
	// HTTPPath is the OTLP/HTTP path.
	HTTPPath string
	// KafkaTopic is the default Kafka topic (the collector's
	// kafkaexporter/kafkareceiver default: otlp_spans, otlp_metrics,
	// otlp_logs, otlp_profiles).
	KafkaTopic string
}

// The otlp-lite services of proto/otlplite/v1/stream.proto.
const (
	StreamService        = "otlplite.v1.StreamExporter"
	UnaryEnvelopeService = "otlplite.v1.UnaryExporter"
)

var signalTable = [...]SignalInfo{
	Traces: {
		Name: "traces", Items: "spans", ItemsMetric: "spans",
		Request: "ExportTraceServiceRequest", Response: "ExportTraceServiceResponse", Data: "TracesData",
		GRPCService:  "opentelemetry.proto.collector.trace.v1.TraceService",
		GRPCPath:     "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
		StreamMethod: "ExportTraces", StreamPath: "/" + StreamService + "/ExportTraces",
		HTTPPath: "/v1/traces", KafkaTopic: "otlp_spans",
	},
	Metrics: {
		Name: "metrics", Items: "data points", ItemsMetric: "metric_points",
		Request: "ExportMetricsServiceRequest", Response: "ExportMetricsServiceResponse", Data: "MetricsData",
		GRPCService:  "opentelemetry.proto.collector.metrics.v1.MetricsService",
		GRPCPath:     "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export",
		StreamMethod: "ExportMetrics", StreamPath: "/" + StreamService + "/ExportMetrics",
		HTTPPath: "/v1/metrics", KafkaTopic: "otlp_metrics",
	},
	Logs: {
		Name: "logs", Items: "log records", ItemsMetric: "log_records",
		Request: "ExportLogsServiceRequest", Response: "ExportLogsServiceResponse", Data: "LogsData",
		GRPCService:  "opentelemetry.proto.collector.logs.v1.LogsService",
		GRPCPath:     "/opentelemetry.proto.collector.logs.v1.LogsService/Export",
		StreamMethod: "ExportLogs", StreamPath: "/" + StreamService + "/ExportLogs",
		HTTPPath: "/v1/logs", KafkaTopic: "otlp_logs",
	},
	Profiles: {
		Name: "profiles", Items: "profiles", ItemsMetric: "profile_samples",
		Request: "ExportProfilesServiceRequest", Response: "ExportProfilesServiceResponse", Data: "ProfilesData",
		GRPCService:  "opentelemetry.proto.collector.profiles.v1development.ProfilesService",
		GRPCPath:     "/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export",
		StreamMethod: "ExportProfiles", StreamPath: "/" + StreamService + "/ExportProfiles",
		HTTPPath: "/v1development/profiles", KafkaTopic: "otlp_profiles",
	},
}

// Info returns the signal's row of the table, or nil if s is not a signal.
func (s Signal) Info() *SignalInfo {
	if s == 0 || int(s) >= len(signalTable) {
		return nil
	}
	return &signalTable[s]
}

// String returns the signal's name: "traces", "metrics", "logs" or
// "profiles".
func (s Signal) String() string {
	if i := s.Info(); i != nil {
		return i.Name
	}
	return fmt.Sprintf("signal(%d)", uint8(s))
}

// ParseSignal is the inverse of Signal.String.
func ParseSignal(name string) (Signal, error) {
	for _, s := range Signals {
		if s.Info().Name == name {
			return s, nil
		}
	}
	return 0, fmt.Errorf("unknown signal %q: want traces, metrics, logs or profiles", name)
}

// SignalByHTTPPath returns the signal whose OTLP/HTTP path is path, or 0.
func SignalByHTTPPath(path string) Signal {
	for _, s := range Signals {
		if signalTable[s].HTTPPath == path {
			return s
		}
	}
	return 0
}

// SignalByGRPCService returns the signal whose OTLP/gRPC service is
// service, or 0.
func SignalByGRPCService(service string) Signal {
	for _, s := range Signals {
		if signalTable[s].GRPCService == service {
			return s
		}
	}
	return 0
}

// SignalByStreamMethod returns the signal whose StreamService (and
// UnaryEnvelopeService) method is method, or 0.
func SignalByStreamMethod(method string) Signal {
	for _, s := range Signals {
		if signalTable[s].StreamMethod == method {
			return s
		}
	}
	return 0
}
