package kafkasource

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage/discard"
)

// TestLogLimiter: logBurst lines per logWindow; the first line of the next
// window says how many were not logged.
func TestLogLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var l logLimiter
		for i := range logBurst {
			if n, ok := l.allow(); !ok || n != 0 {
				t.Fatalf("line %d: allow = %d, %v; want 0, true", i, n, ok)
			}
		}
		for range 25 {
			if _, ok := l.allow(); ok {
				t.Fatal("a line past the burst was allowed")
			}
		}
		time.Sleep(logWindow)
		if n, ok := l.allow(); !ok || n != 25 {
			t.Fatalf("first line of the next window: allow = %d, %v; want 25, true", n, ok)
		}
	})
}

// TestNewConsumerTopicsAndOptions: the kafkareceiver's options are checked
// when the consumer is created.
func TestNewConsumerTopicsAndOptions(t *testing.T) {
	var sink discard.Sink
	p := ingest.New(ingest.Config{Sink: &sink})
	base := func() ConsumerConfig { return ConsumerConfig{Brokers: []string{"127.0.0.1:9"}, Pipeline: p} }
	for _, tc := range []struct {
		name string
		set  func(*ConsumerConfig)
		err  string
	}{
		{"regex", func(c *ConsumerConfig) {
			c.Topics = map[otlp.Signal]string{otlp.Traces: "^spans-.*", otlp.Logs: "otlp_logs"}
			c.ExcludeTopics = []string{"^spans-test$"}
		}, ""},
		{"bad regex", func(c *ConsumerConfig) { c.Topics = map[otlp.Signal]string{otlp.Traces: "^(spans"} }, "bad topic expression"},
		{"exclude without regex", func(c *ConsumerConfig) { c.ExcludeTopics = []string{"x"} }, "ExcludeTopics needs a regular expression"},
		{"bad exclude", func(c *ConsumerConfig) {
			c.Topics = map[otlp.Signal]string{otlp.Traces: "^s"}
			c.ExcludeTopics = []string{"("}
		}, "bad exclude-topics expression"},
		{"balancer", func(c *ConsumerConfig) { c.Balancer = "range" }, ""},
		{"bad balancer", func(c *ConsumerConfig) { c.Balancer = "fair" }, "unknown group balancer"},
		{"static member", func(c *ConsumerConfig) {
			c.InstanceID, c.HeartbeatInterval, c.FetchMaxWait, c.FetchMinBytes = "store-1", time.Second, 250*time.Millisecond, 1024
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base()
			tc.set(&cfg)
			c, err := NewConsumer(cfg)
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				c.Close()
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err = %v, want one containing %q", err, tc.err)
			}
		})
	}
}

// TestPermanentConnError: configuration errors are permanent, a broker
// that is not up yet is not.
func TestPermanentConnError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{&net.OpError{Op: "dial", Err: errors.New("connection refused")}, false},
		{fmt.Errorf("unable to dial: %w", &net.OpError{Op: "remote error", Err: errors.New("tls: certificate required")}), true},
		{fmt.Errorf("x: %w", kerr.SaslAuthenticationFailed), true},
		{errors.New("i/o timeout"), false},
	} {
		if got := PermanentConnError(tc.err); got != tc.want {
			t.Errorf("PermanentConnError(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
