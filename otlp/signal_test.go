package otlp

import (
	"net/http"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
)

func TestSignalTable(t *testing.T) {
	for i, s := range Signals {
		if s != Signal(i+1) {
			t.Fatalf("Signals[%d] = %d: the values are stored on disk", i, s)
		}
		info := s.Info()
		if info == nil || info.Name == "" || info.Items == "" || info.GRPCPath != "/"+info.GRPCService+"/Export" ||
			info.StreamPath != "/"+StreamService+"/"+info.StreamMethod {
			t.Fatalf("%d: bad row %+v", s, info)
		}
		if got, err := ParseSignal(s.String()); err != nil || got != s {
			t.Fatalf("ParseSignal(%q) = %v, %v", s, got, err)
		}
		if SignalByHTTPPath(info.HTTPPath) != s || SignalByGRPCService(info.GRPCService) != s || SignalByStreamMethod(info.StreamMethod) != s {
			t.Fatalf("%s: lookups disagree", s)
		}
	}
	if Signal(0).Info() != nil || Signal(9).Info() != nil || Signal(9).String() != "signal(9)" {
		t.Fatal("not a signal")
	}
	if _, err := ParseSignal("events"); err == nil {
		t.Fatal("ParseSignal(events)")
	}
	// The profiles signal is Alpha: its names keep v1development (OTLP
	// v1.11 specification.md, "OTLP/HTTP Request"; profiles_service.proto).
	p := Profiles.Info()
	if p.HTTPPath != "/v1development/profiles" || p.GRPCService != "opentelemetry.proto.collector.profiles.v1development.ProfilesService" ||
		p.KafkaTopic != "otlp_profiles" || p.ItemsMetric != "profile_samples" || MaxSignal != Profiles {
		t.Fatalf("profiles row %+v", p)
	}
	if SignalByHTTPPath("/v1/profiles") != 0 || SignalByGRPCService("x") != 0 || SignalByStreamMethod("Export") != 0 {
		t.Fatal("unknown names")
	}
}

func TestRetryable(t *testing.T) {
	for _, tc := range []struct {
		code  grpcwire.Code
		delay int64
		want  bool
	}{
		{grpcwire.Unavailable, 0, true},
		{grpcwire.Canceled, 0, true},
		{grpcwire.DeadlineExceeded, 0, true},
		{grpcwire.Aborted, 0, true},
		{grpcwire.OutOfRange, 0, true},
		{grpcwire.DataLoss, 0, true},
		{grpcwire.ResourceExhausted, 0, false},
		{grpcwire.ResourceExhausted, 1e9, true},
		// An explicit zero RetryInfo still signals that recovery is
		// possible (handler/stream.go's copy said no).
		{grpcwire.ResourceExhausted, -1, true},
		{grpcwire.InvalidArgument, 1e9, false},
		{grpcwire.Unauthenticated, 0, false},
		{grpcwire.Internal, 0, false},
	} {
		st := &grpcwire.Status{Code: tc.code, RetryDelay: timeDuration(tc.delay)}
		if got := Retryable(st); got != tc.want {
			t.Errorf("Retryable(%v, delay %d) = %v", tc.code, tc.delay, got)
		}
	}
	for code, want := range map[int]bool{
		http.StatusTooManyRequests: true, http.StatusBadGateway: true, http.StatusServiceUnavailable: true, http.StatusGatewayTimeout: true,
		http.StatusBadRequest: false, http.StatusInternalServerError: false, http.StatusRequestEntityTooLarge: false, http.StatusUnauthorized: false,
	} {
		if RetryableHTTPStatus(code) != want {
			t.Errorf("RetryableHTTPStatus(%d) != %v", code, want)
		}
	}
}

func timeDuration(ns int64) time.Duration { return time.Duration(ns) }
