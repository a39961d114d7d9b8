package kafka_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/kafka"
)

// These tests need no broker: they run in every `go test`.

func TestOpenConfig(t *testing.T) {
	ok := []string{"127.0.0.1:9092"}
	tests := []struct {
		name    string
		cfg     kafka.Config
		wantErr string // "" means Open succeeds
	}{
		{name: "defaults", cfg: kafka.Config{Brokers: ok}},
		{name: "everything", cfg: kafka.Config{Brokers: ok, TracesTopic: "t", MetricsTopic: "m", LogsTopic: "l", PartitionTracesByID: true,
			MaxMessageBytes: 4 << 20, ProduceTimeout: time.Second, MaxBufferedBytes: 1 << 20, MaxBufferedRecords: 10,
			Compression: "zstd", SASL: &kafka.SASL{Mechanism: "SCRAM-SHA-512", Username: "u", Password: "p"}}},
		{name: "no brokers", cfg: kafka.Config{}, wantErr: "no brokers"},
		{name: "broker without port", cfg: kafka.Config{Brokers: []string{"localhost"}}, wantErr: "bad broker address"},
		{name: "message limit too small", cfg: kafka.Config{Brokers: ok, MaxMessageBytes: 100}, wantErr: "MaxMessageBytes"},
		{name: "unknown compression", cfg: kafka.Config{Brokers: ok, Compression: "brotli"}, wantErr: "unknown compression"},
		{name: "unknown SASL mechanism", cfg: kafka.Config{Brokers: ok, SASL: &kafka.SASL{Mechanism: "GSSAPI", Username: "u"}}, wantErr: "unknown SASL mechanism"},
		{name: "SASL without user", cfg: kafka.Config{Brokers: ok, SASL: &kafka.SASL{Mechanism: "PLAIN"}}, wantErr: "username"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := kafka.Open(tt.cfg)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				s.Close()
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestTopicDefaults(t *testing.T) {
	s, err := kafka.Open(kafka.Config{Brokers: []string{"127.0.0.1:9092"}, MetricsTopic: "m"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for sig, want := range map[storage.Signal]string{storage.Traces: "otlp_spans", storage.Metrics: "m", storage.Logs: "otlp_logs", storage.Profiles: "otlp_profiles"} {
		if got := s.Topic(sig); got != want {
			t.Errorf("Topic(%v) = %q, want %q", sig, got, want)
		}
	}
}

// deadAddr returns a loopback address nothing listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestWriteBrokerDown: with no broker, Write fails with a retryable
// storage.ErrUnavailable instead of waiting for one.
func TestWriteBrokerDown(t *testing.T) {
	s, err := kafka.Open(kafka.Config{Brokers: []string{deadAddr(t)}, ProduceTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	msg := payload(t, "logs_all_fields.pb")
	for range 3 {
		if err := s.Write(context.Background(), storage.Logs, msg, 1); !errors.Is(err, storage.ErrUnavailable) {
			t.Fatalf("err = %v, want storage.ErrUnavailable", err)
		}
	}
	if err := s.Ping(context.Background()); err == nil {
		t.Error("Ping succeeded without a broker")
	}
}

// TestWriteOverloaded: records beyond MaxBufferedRecords are refused at
// once with storage.ErrOverloaded, not queued.
func TestWriteOverloaded(t *testing.T) {
	s, err := kafka.Open(kafka.Config{Brokers: []string{deadAddr(t)}, ProduceTimeout: 300 * time.Millisecond,
		MaxMessageBytes: 2048, MaxBufferedRecords: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Two resources of 1.5 KB: two records, and room for one.
	var msg []byte
	for i := range 2 {
		msg = append(msg, spanResource(bytes.Repeat([]byte{byte(i + 1)}, 16), "s", 1500)...)
	}
	if err := s.Write(context.Background(), storage.Traces, msg, 2); !errors.Is(err, storage.ErrOverloaded) {
		t.Fatalf("err = %v, want storage.ErrOverloaded", err)
	}
}

func TestWriteCanceled(t *testing.T) {
	s, err := kafka.Open(kafka.Config{Brokers: []string{deadAddr(t)}, ProduceTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Write(ctx, storage.Logs, payload(t, "logs_all_fields.pb"), 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestWriteErrors(t *testing.T) {
	s, err := kafka.Open(kafka.Config{Brokers: []string{deadAddr(t)}, MaxMessageBytes: 2048})
	if err != nil {
		t.Fatal(err)
	}
	big := spanResource(bytes.Repeat([]byte{1}, 16), "big", 4096)
	if err := s.Write(context.Background(), storage.Traces, append(bytes.Clone(big), big...), 2); !errors.Is(err, kafka.ErrTooLarge) {
		t.Errorf("resource over the limit: err = %v, want kafka.ErrTooLarge", err)
	}
	if err := s.Write(context.Background(), storage.Signal(9), nil, 0); err == nil {
		t.Error("unknown signal accepted")
	}
	s.Close()
	if err := s.Write(context.Background(), storage.Logs, nil, 0); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("after Close: err = %v, want storage.ErrClosed", err)
	}
}
