package otlpview_test

import (
	"strings"
	"testing"

	"github.com/otlp-lite/otlp-lite/internal/pbtest"
	"github.com/otlp-lite/otlp-lite/internal/viewwalk"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
	"github.com/otlp-lite/otlp-lite/otlppb"
	. "github.com/otlp-lite/otlp-lite/otlpview"
)

// pb is short for pbtest's builder, which the tests write requests with.
type pb = pbtest.PB

// decodesWhatCheckAccepts fails t if walking src failed with walkErr while
// check accepts src: a request the receiver validated and stored must be
// readable through the views.
func decodesWhatCheckAccepts(t *testing.T, src []byte, walkErr error, check func([]byte, *otlpdecode.Options) (otlpdecode.Result, error)) {
	t.Helper()
	if walkErr == nil {
		return
	}
	if _, err := check(src, nil); err == nil {
		t.Fatalf("Decode refuses what Check accepts: %v", walkErr)
	}
}

// TestTruncationNeverPanics cuts the golden payloads at every byte offset
// (every 3rd for all_fields traces, every 1009th for the large one) and
// mutates single bytes; the walks must not panic and must accept what
// Check accepts.
func TestTruncationNeverPanics(t *testing.T) {
	var d viewwalk.Decoders // reused after errors, too
	for _, tt := range []struct {
		file   string
		walk   func([]byte) error
		check  func([]byte, *otlpdecode.Options) (otlpdecode.Result, error)
		stride int
	}{
		{"traces_all_fields.pb", d.Traces, otlpdecode.CheckTraces, 3},
		{"traces_500x10.pb", d.Traces, otlpdecode.CheckTraces, 1009},
		{"metrics_all_kinds.pb", d.Metrics, otlpdecode.CheckMetrics, 1},
		{"logs_all_fields.pb", d.Logs, otlpdecode.CheckLogs, 1},
	} {
		src := pbtest.Golden(t, tt.file)
		if pbtest.RaceEnabled {
			tt.stride *= 11
		}
		for n := 0; n <= len(src); n += tt.stride {
			decodesWhatCheckAccepts(t, src[:n:n], tt.walk(src[:n:n]), tt.check)
		}
		buf := make([]byte, len(src))
		for i := 0; i < len(src); i += tt.stride * 3 {
			for _, b := range []byte{src[i] ^ 0xff, 0x80} {
				copy(buf, src)
				buf[i] = b
				decodesWhatCheckAccepts(t, buf, tt.walk(buf), tt.check)
			}
		}
	}
}

// TestErrors: malformed data is reported by Decode when the walk to the
// items meets it, with its position in the request, and by an iterator's
// Err when the iterator meets it, with its position in the message the
// iterator walks. otlppb.ErrorPosition splits both.
func TestErrors(t *testing.T) {
	span, request := pbtest.Span, pbtest.Request
	var d viewwalk.Decoders
	traces, metrics, logs := d.Traces, d.Metrics, d.Logs
	truncated := pb{0x08} // a varint field without its value
	histogram := func(point pb) pb { return pb{}.Msg(9, pb{}.Msg(1, point)) }
	tests := []struct {
		name  string
		src   pb
		walk  func([]byte) error
		field string // "": no position
	}{
		{"request", pb{0x0a, 0x10, 0x01}, traces, ""},
		{"status", request(nil, nil, []pb{span(16, 8, nil), span(16, 8, pb{}.Msg(15, truncated))}), traces,
			"resource_spans[0].scope_spans[0].spans[1].status"},
		{"scope", request(nil, pb{0x1a, 0x01}, []pb{span(16, 8, nil)}), traces, "resource_spans[0].scope_spans[0].scope"},
		{"event", request(nil, nil, []pb{span(16, 8, pb{}.Msg(11, nil).Msg(11, truncated))}), traces, "events[1]"},
		{"link", request(nil, nil, []pb{span(16, 8, pb{}.Msg(13, truncated))}), traces, "links[0]"},
		{"entity ref", request(pb{}.Msg(3, truncated), nil, []pb{span(16, 8, nil)}), traces, "entity_refs[0]"},
		{"log body", request(nil, nil, []pb{pb{}.Msg(5, truncated)}), logs, "resource_logs[0].scope_logs[0].log_records[0].body"},
		{"metric data", request(nil, nil, []pb{pb{}.Msg(7, truncated)}), metrics, "resource_metrics[0].scope_metrics[0].metrics[0].sum"},
		{"data point", request(nil, nil, []pb{pb{}.Msg(5, pb{}.Msg(1, truncated))}), metrics, "data_points[0]"},
		{"bucket counts", request(nil, nil, []pb{histogram(pb{}.Msg(6, make(pb, 9)))}), metrics, "data_points[0].bucket_counts"},
		{"explicit bounds", request(nil, nil, []pb{histogram(pb{}.Msg(7, make(pb, 4)))}), metrics, "data_points[0].explicit_bounds"},
		{"exponential buckets", request(nil, nil, []pb{pb{}.Msg(10, pb{}.Msg(1, pb{}.Msg(9, pb{}.Msg(2, pb{0x80}))))}), metrics,
			"data_points[0].negative.bucket_counts"},
		{"exemplar", request(nil, nil, []pb{pb{}.Msg(7, pb{}.Msg(1, pb{}.Msg(5, truncated)))}), metrics, "exemplars[0]"},
		{"quantile", request(nil, nil, []pb{pb{}.Msg(11, pb{}.Msg(1, pb{}.Msg(6, pb{0x09, 0x00})))}), metrics, "quantile_values[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.walk(tt.src)
			if err == nil {
				t.Fatal("malformed data decoded")
			}
			field, desc, ok := otlppb.ErrorPosition(err)
			if field != tt.field || ok != (tt.field != "") {
				t.Fatalf("ErrorPosition(%q) = %q, %q, %v; want field %q", err, field, desc, ok, tt.field)
			}
			if !ok && !strings.HasPrefix(err.Error(), "cannot decode request: ") {
				t.Errorf("error %q does not say it is in the request", err)
			}
		})
	}
}

func TestUnknownFieldsAndGroupsSkipped(t *testing.T) {
	group := pb{}.Tag(100, 3).Varint(1, 1).Tag(101, 3).Tag(101, 4).Tag(100, 4)
	sp := pbtest.Span(16, 8, group.Varint(99, 1).Str(98, "x").Fixed32(97, 1).Fixed64(96, 1))
	var d TracesDecoder
	n, attrs, err := viewwalk.Traces(&d, pbtest.Request(nil, nil, []pb{sp}).Append(group))
	if err != nil || n != 1 || attrs != 2 {
		t.Fatalf("Decode: %d spans, %d attributes, %v", n, attrs, err)
	}
}
