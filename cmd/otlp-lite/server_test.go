package main

import (
	"flag"
	"io"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/server"
	"github.com/otlp-lite/otlp-lite/service"
)

// parseServeFlags parses args as serve's flags.
func parseServeFlags(t *testing.T, args ...string) service.Config {
	t.Helper()
	cfg := service.DefaultConfig()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	registerServeFlags(newFlagSections(fs), &cfg)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestServerLimitFlagsDefault(t *testing.T) {
	cfg := parseServeFlags(t)
	if got, want := cfg.DerivedLimits(), server.DefaultLimits(); got != want {
		t.Fatalf("limits without flags: %+v, want server.DefaultLimits() %+v", got, want)
	}
}

// TestServerWindowsDerived: the HTTP/2 windows left to their default are
// derived from the admission budget and the connection limit.
func TestServerWindowsDerived(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{nil, 256 << 10},
		{[]string{"-max-connections", "64"}, 2 << 20},
		{[]string{"-max-connections", "8"}, 4 << 20},
		{[]string{"-max-connections", "0"}, 256 << 10},
		{[]string{"-admission-request-limit", "4294967296"}, 1 << 20},
	} {
		l := parseServeFlags(t, tc.args...).DerivedLimits()
		if l.StreamWindow != tc.want || l.ConnWindow != tc.want {
			t.Errorf("%v: windows %d/%d, want %d", tc.args, l.StreamWindow, l.ConnWindow, tc.want)
		}
	}
	l := parseServeFlags(t, "-max-connections", "64", "-http2-stream-window", "100000").DerivedLimits()
	if l.StreamWindow != 100000 || l.ConnWindow != 2<<20 {
		t.Errorf("an explicit window is kept and the other derived: got %d/%d", l.StreamWindow, l.ConnWindow)
	}
}

// TestServerLimitFlags: each limit flag sets its own field, and zero stays
// zero (net/http's default or no limit, as before the server package).
func TestServerLimitFlags(t *testing.T) {
	got := parseServeFlags(t,
		"-http2-max-concurrent-streams", "1", "-http2-stream-window", "2", "-http2-conn-window", "3",
		"-http2-max-frame-size", "4", "-max-header-bytes", "5", "-read-header-timeout", "0",
		"-idle-timeout", "7s", "-write-timeout", "8s", "-max-connection-age", "9s", "-max-connection-age-grace", "10s",
		"-max-connections", "11").Limits
	want := server.Limits{MaxConcurrentStreams: 1, StreamWindow: 2, ConnWindow: 3, MaxFrameSize: 4, MaxHeaderBytes: 5,
		ReadHeaderTimeout: 0, IdleTimeout: 7 * time.Second, WriteByteTimeout: 8 * time.Second,
		MaxConnectionAge: 9 * time.Second, MaxConnectionAgeGrace: 10 * time.Second, MaxConnections: 11}
	if got != want {
		t.Fatalf("limits %+v, want %+v", got, want)
	}
}
