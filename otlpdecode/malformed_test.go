package otlpdecode

import (
	"errors"
	"strings"
	"testing"

	"github.com/otlp-lite/otlp-lite/internal/pbtest"
	"github.com/otlp-lite/otlp-lite/otlppb"
)

// consistency runs both entry points on src and checks they agree: a
// request Check accepts must be accepted by AppendValid, and AppendValid's
// output must pass Check with nothing rejected and the valid items all
// kept. (otlpview's tests check that its decoders accept what Check
// accepts.)
func consistency(t *testing.T, sig signal, src []byte, opts *Options) {
	t.Helper()
	var check func([]byte, *Options) (Result, error)
	var appendValid func(dst, src []byte, opts *Options) ([]byte, error)
	switch sig {
	case signalTraces:
		check, appendValid = CheckTraces, AppendValidTraces
	case signalMetrics:
		check, appendValid = CheckMetrics, AppendValidMetrics
	case signalProfiles:
		check, appendValid = CheckProfiles, AppendValidProfiles
	default:
		check, appendValid = CheckLogs, AppendValidLogs
	}
	res, err := check(src, opts)
	out, appendErr := appendValid(nil, src, opts)
	if err != nil {
		if appendErr == nil {
			t.Fatalf("AppendValid accepts what Check refuses (%v)", err)
		}
		return
	}
	if res.Rejected > res.Items || (res.Rejected == 0) != (res.FirstRejection == "") {
		t.Fatalf("inconsistent result %+v", res)
	}
	if appendErr != nil {
		t.Fatalf("AppendValid refuses what Check accepts: %v", appendErr)
	}
	after, err := check(out, opts)
	if err != nil || after.Rejected != 0 || after.Items != res.Items-res.Rejected {
		t.Fatalf("AppendValid output: %+v, %v; input %+v", after, err, res)
	}
}

// TestTruncationNeverPanics cuts the golden payloads at every byte offset (every 3rd for all_fields traces,
// every 1009th for the large one) and mutates single bytes.
func TestTruncationNeverPanics(t *testing.T) {
	for _, tt := range []struct {
		file   string
		sig    signal
		stride int
	}{
		{"traces_all_fields.pb", signalTraces, 3},
		{"traces_500x10.pb", signalTraces, 1009},
		{"metrics_all_kinds.pb", signalMetrics, 1},
		{"logs_all_fields.pb", signalLogs, 1},
	} {
		src := golden(t, tt.file)
		if pbtest.RaceEnabled {
			tt.stride *= 11
		}
		for n := 0; n <= len(src); n += tt.stride {
			consistency(t, tt.sig, src[:n:n], utf8Opts)
		}
		buf := make([]byte, len(src))
		for i := 0; i < len(src); i += tt.stride * 3 {
			copy(buf, src)
			buf[i] ^= 0xff
			consistency(t, tt.sig, buf, nil)
			buf[i] = 0x80
			consistency(t, tt.sig, buf, utf8Opts)
		}
	}
}

// TestErrorPosition: a decoding error splits into where the bad data is
// and what is wrong with it, for the handler's google.rpc.BadRequest.
func TestErrorPosition(t *testing.T) {
	// The third span's second attribute is truncated protobuf.
	bad := span(16, 8, pb{}.Msg(9, pb{0x0a, 0x05, 'a'}))
	_, err := CheckTraces(request(nil, nil, []pb{span(16, 8, nil), span(16, 8, nil), bad}), nil)
	if err == nil {
		t.Fatal("CheckTraces accepted truncated protobuf")
	}
	field, desc, ok := otlppb.ErrorPosition(err)
	if !ok || field != "resource_spans[0].scope_spans[0].spans[2].attributes[2]" || desc == "" || strings.Contains(desc, "spans[2]") {
		t.Fatalf("otlppb.ErrorPosition(%q) = %q, %q, %v", err, field, desc, ok)
	}
	if err.Error() != "cannot decode "+field+": "+desc {
		t.Errorf("Error() %q is not the position and the description", err)
	}
	if _, _, ok := otlppb.ErrorPosition(errors.New("plain")); ok {
		t.Error("ErrorPosition found a position in a plain error")
	}
}
