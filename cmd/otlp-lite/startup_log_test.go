package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/service"
)

// TestStartupLogShowsOnlyChanges: serve's start-up line of configuration
// names only the settings that differ from their defaults (a flag given
// its default value is not one, though it is listed as set by a flag),
// secrets redacted; /config keeps the whole set.
func TestStartupLogShowsOnlyChanges(t *testing.T) {
	env := map[string]string{"OTLP_LITE_KAFKA_SASL_PASSWORD": "startup-log-secret"}
	cfg, s, err := parseServeEnv(t, env, "-grpc-addr", "127.0.0.1:0", "-http-addr", "", "-admin-addr", "",
		"-storage", "discard", "-storage-sync", "always", "-retry-delay", "3s")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Effective = s.effective()
	var logBuf bytes.Buffer
	cfg.Logger, _ = service.NewLogger(&logBuf, "text", "info")
	svc, err := service.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := svc.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	var line string
	for l := range strings.Lines(logBuf.String()) {
		if strings.Contains(l, "effective configuration") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no configuration line in the log:\n%s", logBuf.String())
	}
	for _, want := range []string{"config.grpc-addr=127.0.0.1:0", "config.storage=discard", "config.retry-delay=3s",
		"config.kafka-sasl-password=<redacted>", "config.http-addr=\"\"", "set_by_flags=grpc-addr,http-addr,storage,storage-sync,retry-delay,admin-addr",
		"set_by_env=OTLP_LITE_KAFKA_SASL_PASSWORD"} {
		if !strings.Contains(line, want) {
			t.Errorf("the configuration line lacks %s:\n%s", want, line)
		}
	}
	for _, unwanted := range []string{"startup-log-secret", "config.storage-sync=", "config.max-connections=", "config.log-level="} {
		if strings.Contains(line, unwanted) {
			t.Errorf("the configuration line shows %s:\n%s", unwanted, line)
		}
	}
	n := 0
	for _, e := range cfg.Effective {
		if e.Changed {
			n++
		}
	}
	if n != 6 || len(cfg.Effective) < 50 {
		t.Errorf("%d of %d settings changed, want 6 of all of them", n, len(cfg.Effective))
	}
}
