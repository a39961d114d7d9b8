package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/admin"
	"github.com/otlp-lite/otlp-lite/internal/redact"
	"github.com/otlp-lite/otlp-lite/service"
)

// parseServeEnv parses args and env (name → value) as serve does.
func parseServeEnv(t *testing.T, env map[string]string, args ...string) (service.Config, *flagSections, error) {
	t.Helper()
	cfg := service.DefaultConfig()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	s := newFlagSections(fs)
	registerServeFlags(s, &cfg)
	err := s.parse(args, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	return cfg, s, err
}

// A flag on the command line wins over the environment, which wins over
// the default; the effective configuration says where each value came from.
func TestServeEnvPrecedence(t *testing.T) {
	env := map[string]string{
		"OTLP_LITE_GRPC_ADDR":           "127.0.0.1:9999",
		"OTLP_LITE_HTTP_ADDR":           "127.0.0.1:9998",
		"OTLP_LITE_STORAGE_SYNC":        "interval",
		"OTLP_LITE_ADMISSION_MAX_WAIT":  "3s",
		"OTLP_LITE_VALIDATE_UTF8":       "true",
		"OTLP_LITE_KAFKA_SASL_PASSWORD": "hunter2",
		"UNRELATED":                     "x",
	}
	cfg, s, err := parseServeEnv(t, env, "-grpc-addr", "127.0.0.1:7777")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.GRPCAddr != "127.0.0.1:7777" || cfg.HTTPAddr != "127.0.0.1:9998" || cfg.Disk.Sync != "interval" ||
		cfg.Admission.MaxWait != 3*time.Second || !cfg.ValidateUTF8 || cfg.AdminAddr != "localhost:8888" {
		t.Fatalf("flag > env > default not applied: %+v", cfg)
	}
	got := map[string]admin.ConfigEntry{}
	for _, e := range s.effective() {
		got[e.Flag] = e
	}
	for flagName, want := range map[string]string{"grpc-addr": "flag", "http-addr": "env", "storage-sync": "env", "admin-addr": "default"} {
		if got[flagName].Source != want {
			t.Errorf("-%s: source %q, want %q", flagName, got[flagName].Source, want)
		}
	}
	if e, ok := got["kafka-sasl-password"]; ok && e.Value != "<redacted>" {
		t.Errorf("the Kafka password is shown in the effective configuration: %q", e.Value)
	}
	if got["http-addr"].Env != "OTLP_LITE_HTTP_ADDR" {
		t.Errorf("env name of -http-addr: %q", got["http-addr"].Env)
	}
}

// A bad value in the environment names the variable.
func TestServeEnvBadValue(t *testing.T) {
	_, _, err := parseServeEnv(t, map[string]string{"OTLP_LITE_ADMISSION_MAX_WAIT": "soon"})
	if err == nil || !strings.Contains(err.Error(), "OTLP_LITE_ADMISSION_MAX_WAIT") {
		t.Fatalf("err = %v, want one naming OTLP_LITE_ADMISSION_MAX_WAIT", err)
	}
}

// Every serve flag has a section and an environment variable in the help,
// the sections come in the documented order, and the help goes to stdout
// with exit status 0.
func TestServeHelpSections(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"serve", "-h"}, &stdout, &stderr); code != 0 || stderr.Len() != 0 {
		t.Fatalf("serve -h: exit %d, stderr %q", code, stderr.String())
	}
	help := stdout.String()
	last := -1
	for _, title := range []string{"\nListeners:", "\nStorage:", "\nRequests and limits:", "\nTLS and auth:", "\nObservability:"} {
		i := strings.Index(help, title)
		if i < 0 || i < last {
			t.Fatalf("section %q missing or out of order in:\n%s", title, help)
		}
		last = i
	}
	_, s, err := parseServeEnv(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.fs.VisitAll(func(f *flag.Flag) {
		if s.section[f.Name] == "" {
			t.Errorf("-%s has no help section", f.Name)
		}
		if !strings.Contains(help, "\n  -"+f.Name) || !strings.Contains(help, "env "+envName(f.Name)+")") {
			t.Errorf("help lacks -%s or its variable %s", f.Name, envName(f.Name))
		}
	})
	if !strings.Contains(help, `(default "localhost:4317"; env OTLP_LITE_GRPC_ADDR)`) {
		t.Errorf("help does not show -grpc-addr's default and variable:\n%s", help)
	}
}

// Every value is checked before serve starts: a bad one is one line on
// stderr and exit status 2, whether it came from a flag or the environment.
func TestServeValuesCheckedAtParseTime(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.pem")
	if err := os.WriteFile(junk, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte("Bearer abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-log-level", "loud"}, "-log-level"},
		{[]string{"-log-format", "xml"}, "-log-format"},
		{[]string{"-storage", "tape"}, "-storage"},
		{[]string{"-grpc-addr", "4317"}, "-grpc-addr"},
		{[]string{"-admin-addr", "nohost"}, "-admin-addr"},
		{[]string{"-storage-sync", "sometimes"}, "-storage-sync"},
		{[]string{"-memory-limit", "lots"}, "-memory-limit"},
		{[]string{"-tls-min-version", "1.1"}, "-tls-min-version"},
		{[]string{"-tls-cert", junk}, "-tls-key"},
		{[]string{"-tls-cert", junk, "-tls-key", junk}, "-tls-cert"},
		{[]string{"-tls-client-ca", junk}, "-tls-client-ca"},
		{[]string{"-auth-token-file", filepath.Join(dir, "missing")}, "-auth-token-file"},
		{[]string{"-auth-token-file", tokens}, "line 1"},
		{[]string{"-cors-allowed-origins", "example.com"}, "-cors-allowed-origins"},
		{[]string{"-admission-request-limit", "0"}, "-admission-request-limit"},
		{[]string{"-max-connections", "-1"}, "-max-connections"},
		{[]string{"-http2-max-frame-size", "100"}, "-http2-max-frame-size"},
		{[]string{"-shutdown-timeout", "-1s"}, "-shutdown-timeout"},
		{[]string{"extra"}, "unexpected arguments"},
		// Kafka flags are checked even when -storage is not kafka.
		{[]string{"-kafka-compression", "bogus"}, "-kafka"},
		{[]string{"-kafka-brokers", "nohost"}, "-kafka"},
		{[]string{"-kafka-log-level", "loud"}, "-kafka"},
		{[]string{"-kafka-required-acks", "0"}, "acks"},
		{[]string{"-kafka-partitioner", "sticky"}, "partitioner"},
		{[]string{"-kafka-partitioner", "round_robin", "-kafka-partitioner-hasher", "murmur2"}, "sticky_key"},
		{[]string{"-kafka-compression-level", "5"}, "level"},
		{[]string{"-kafka-include-metadata-keys", "tenant"}, "tenant"},
		{[]string{"-kafka-topic-from-metadata-key-logs", "x topic"}, "header name"},
		{[]string{"-kafka-message-key-from-metadata-key-traces", "x-key", "-kafka-partition-traces-by-id"}, "PartitionTracesByID"},
		{[]string{"-kafka-encoding-metrics", "raw"}, "encoding"},
		{[]string{"-kafka-max-client-topics", "0"}, "-kafka-max-client-topics"},
		{[]string{"-kafka-flush-max-messages", "0"}, "-kafka-flush-max-messages"},
		{[]string{"-kafka-client-id", ""}, "-kafka-client-id"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"serve", "-data-dir", dir}, tc.args...), &stdout, &stderr)
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		if code != 2 || len(lines) != 1 || !strings.Contains(lines[0], tc.want) {
			t.Errorf("serve %v: exit %d, stderr %q; want exit 2 and one line mentioning %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}

// /config on the admin port shows the effective configuration as text
// and as JSON.
func TestConfigHandler(t *testing.T) {
	_, s, err := parseServeEnv(t, map[string]string{"OTLP_LITE_STORAGE_MAX_AGE": "24h"})
	if err != nil {
		t.Fatal(err)
	}
	h := admin.New(admin.Config{Metrics: metrics.NewSet(), Settings: admin.Settings{Effective: s.effective()}}).Handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/config", nil))
	if body := rec.Body.String(); !strings.Contains(body, `storage-max-age="24h0m0s"`) || !strings.Contains(body, "# Storage") {
		t.Fatalf("/config text:\n%s", body)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/config?format=json", nil))
	var entries []admin.ConfigEntry
	if err := json.Unmarshal(rec.Body.Bytes(), &entries); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Flag == "storage-max-age" && (e.Source != "env" || e.Env != "OTLP_LITE_STORAGE_MAX_AGE") {
			t.Fatalf("/config?format=json: %+v", e)
		}
	}
}

// A flag that can hold secrets is not echoed in its parse error: a -forward
// URL may carry an Authorization header.
func TestServeFlagErrorRedactsSecrets(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"serve", "-forward", "a=grpc://x:1?header=Authorization:Bearer%20sekrit&bogus=1"}, &stdout, &stderr)
	if code != 2 || strings.Contains(stderr.String(), "sekrit") || !strings.Contains(stderr.String(), "-forward") || !strings.Contains(stderr.String(), "bogus") {
		t.Fatalf("exit %d, stderr %q: want exit 2, the flag and the problem named, the value not shown", code, stderr.String())
	}
}

// One rule decides which flags hold secrets (redact.Name): serve's
// -kafka-sasl-password and the client commands' -token, and no other (a
// flag judged secret by mistake would hide its value from /config).
func TestSecretFlags(t *testing.T) {
	_, s, err := parseServeEnv(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	var c clientFlags
	cfs := flag.NewFlagSet("replay", flag.ContinueOnError)
	c.register(cfs, true, "gzip")
	for _, fs := range []*flag.FlagSet{s.fs, cfs} {
		var got []string
		fs.VisitAll(func(f *flag.Flag) {
			if redact.Name(f.Name) {
				got = append(got, f.Name)
			}
		})
		want := map[string]string{"serve": "kafka-sasl-password", "replay": "token"}[fs.Name()]
		if strings.Join(got, ",") != want {
			t.Errorf("%s: the flags judged secret are %q, want %q", fs.Name(), got, want)
		}
	}
}

// The client commands' flag errors are one line without the secret: a
// -header without its colon cannot be told from its credential, an
// -endpoint URL's userinfo is not shown.
func TestClientFlagErrorRedactsSecrets(t *testing.T) {
	for _, args := range [][]string{
		{"loadgen", "-header", "Authorization Bearer cl1-SeCrEt"},
		{"replay", "-header", "X-Api-Key\ncl1-SeCrEt"},
		{"replay", "-header=Authorization Bearer cl1-SeCrEt", "-bogus"},
		{"replay", "-data-dir", t.TempDir(), "-endpoint", "https://otlp:cl1-SeCrEt@127.0.0.1:4317"},
		{"loadgen", "-endpoint", "http://otlp:cl1-SeCrEt@127.0.0.1:4317"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(args, &stdout, &stderr)
		if code != 2 || strings.Contains(stderr.String(), "cl1-SeCrEt") || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q: want exit 2, one line, the value not shown", args, code, stderr.String())
		}
	}
}
