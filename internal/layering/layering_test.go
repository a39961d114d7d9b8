package layering

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/otlp-lite/otlp-lite/"

// allowed lists, for every package of the module but main, the packages of
// the module it may import. The data flows one way: transports and sources
// -> ingest -> sinks; forwarding reads the log; shared
// facts (signals, paths, retry rules, quoting, redaction) sit at the bottom
// and import nothing of the module but otlppb, the field numbers, lowest
// of all. A new package must be placed here; an
// import that is not listed fails the test, so an arrow against the flow is
// a decision written down, not an accident.
var allowed = map[string][]string{
	// Facts and helpers: import nothing of the module (otlp: otlppb).
	"otlp":               {"otlppb" /* the export response's field numbers (ParsePartialSuccess); otlppb sits below every fact */},
	"internal/quote":     nil,
	"internal/redact":    nil,
	"internal/wait":      nil,
	"internal/connstate": nil,
	"internal/watchfile": nil,
	"internal/kafkaconn": nil,
	"internal/pbappend":  nil,
	"otlppb":             nil, // the protobuf field reader and the OTLP field numbers, under every walk

	// Codecs and the storage contract.
	"compression":          {"internal/quote"},
	"storage":              {"otlp", "otlpdecode" /* the Visitor of an ItemSink's batch */},
	"otlpdecode":           {"otlp", "otlppb", "otlpview" /* the views its Visitor gets */},
	"otlpdecode/visittest": {"otlp", "otlpdecode"},
	"otlpview":             {"otlppb"},
	"otlpjson":             {"otlp", "internal/quote", "otlppb"},
	"otlpcolumns":          {"otlpdecode" /* the rules it vouches for (Decoder.Vouched) */, "otlppb" /* the field numbers its schema names */},

	// The wire and the sinks.
	"grpcwire":           {"compression", "otlppb" /* google.rpc.Status's field numbers */},
	"storage/disk":       {"otlp", "storage"},
	"storage/discard":    {"otlp", "storage"},
	"storage/deadletter": {"storage/disk"},

	// The ingest core: every way in passes through it, down to the sink.
	// grpcwire for its Status, the pipeline's error currency.
	"ingest": {"compression", "grpcwire", "internal/connstate", "internal/watchfile", "otlp", "otlpdecode", "otlpjson", "otlppb", "storage"},

	// Transports, above the ingest core.
	"server":  {"internal/connstate"},
	"handler": {"compression", "grpcwire", "ingest", "internal/connstate", "internal/quote", "internal/redact", "internal/watchfile", "otlp", "otlpcolumns", "otlpdecode", "otlpjson", "otlppb", "storage"},

	// Clients and forwarding, above the log.
	"otlpclient": {"compression", "grpcwire", "otlp", "otlpcolumns", "otlpjson", "otlppb"},
	"forward":    {"compression", "internal/redact", "internal/wait", "otlp", "otlpclient", "storage", "storage/deadletter", "storage/disk"},

	// Kafka: the sink, and the source beside the transports, storing
	// through the ingest core; both reach the brokers through
	// internal/kafkaconn, which also names the record format both speak
	// (the encodings, the tenant header): the source does not import the
	// sink.
	"storage/kafka": {"internal/kafkaconn", "otlp", "otlpdecode" /* the rewrites (split by resource, by trace id): codecs sit below sinks */, "otlpjson", "otlppb", "storage"},
	"kafkasource":   {"ingest", "internal/kafkaconn", "internal/wait", "otlp", "storage"},

	// STEF/gRPC, a transport beside handler.
	"stefreceiver": {"grpcwire", "ingest", "internal/pbappend", "otlp"},
	// OTel-Arrow, likewise (built with -tags otelarrow).
	"arrowreceiver": {"grpcwire", "ingest", "internal/pbappend", "otlp"},

	// The operator's view (the admin port's pages, the offline stats of a
	// data directory): reads a metrics set, the log and the cursors.
	"admin": {"forward", "internal/redact", "otlp", "storage", "storage/disk"},

	// The receiver composed, the top of the library: it may import every
	// package but cmd/, and none imports it.
	"service": {"admin", "arrowreceiver", "forward", "grpcwire", "handler", "ingest", "internal/redact", "kafkasource", "otlp", "otlpclient", "otlpdecode", "otlppb",
		"server", "stefreceiver", "storage", "storage/deadletter", "storage/discard", "storage/disk", "storage/kafka"},

	// Test harnesses.
	"internal/hostiledest": {"compression", "internal/pipenet", "otlp", "otlppb"},
	"internal/pipenet":     nil,
	"internal/pbtest":      nil,
	"internal/viewwalk":    {"otlpview"},
	"internal/layering":    nil,
}

// TestLayering checks every package's imports (not its tests') against
// allowed, with and without the nokafka tag, and with otelarrow; and that every arrow allowed
// is used by some build, so that the list stays the map of what is.
func TestLayering(t *testing.T) {
	used := map[[2]string]bool{}
	for _, tags := range []string{"", "nokafka", "otelarrow"} {
		out, err := exec.Command("go", "list", "-tags", tags, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"...").CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		seen := 0
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			fields := strings.Fields(line)
			pkg, ok := strings.CutPrefix(fields[0], module)
			if !ok || strings.HasPrefix(pkg, "cmd/") {
				continue // package main may import anything
			}
			seen++
			may, placed := allowed[pkg]
			if !placed {
				t.Errorf("package %s is not placed in a layer: add it to allowed with the packages it may import", pkg)
				continue
			}
			for _, imp := range fields[1:] {
				dep, mine := strings.CutPrefix(imp, module)
				if mine {
					used[[2]string{pkg, dep}] = true
				}
				if mine && !slices.Contains(may, dep) {
					t.Errorf("%s imports %s, which its layer does not allow (-tags %q): if the arrow is right, write it in allowed with its reason", pkg, dep, tags)
				}
			}
		}
		if seen < 15 {
			t.Fatalf("go list -tags %q saw only %d packages of the module", tags, seen)
		}
	}
	for pkg, deps := range allowed {
		for _, dep := range deps {
			if !used[[2]string{pkg, dep}] {
				t.Errorf("allowed says %s may import %s, but no build does: remove the arrow", pkg, dep)
			}
		}
	}
}
