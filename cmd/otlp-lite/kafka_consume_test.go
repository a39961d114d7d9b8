//go:build !nokafka

package main

import (
	"bytes"
	"strings"
	"testing"
)

// The Kafka source's values, the kafkareceiver's options among them, are
// checked before serve starts: one line on stderr, exit status 2.
func TestKafkaConsumeValuesCheckedAtParseTime(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-kafka-consume-balancer", "fair"}, "-kafka-consume-balancer"},
		{[]string{"-kafka-consume-topic-traces", "^(spans"}, "-kafka-consume-topic-traces"},
		{[]string{"-kafka-consume-exclude-topics", "^x$"}, "-kafka-consume-exclude-topics needs"},
		{[]string{"-kafka-consume-topic-traces", "^spans-", "-kafka-consume-exclude-topics", "("}, "-kafka-consume-exclude-topics"},
		{[]string{"-kafka-consume-heartbeat-interval", "45s"}, "-kafka-consume-heartbeat-interval"},
		{[]string{"-kafka-consume-fetch-max-bytes", "0"}, "-kafka-consume-fetch"},
		{[]string{"-kafka-consume-fetch-min-bytes", "0"}, "-kafka-consume-fetch"},
		{[]string{"-kafka-consume-fetch-max-wait", "0s"}, "-kafka-consume-fetch-max-wait"},
		{[]string{"-kafka-consume-max-batch-bytes", "1048576"}, "-grpc-max-recv-msg-size"},
		{[]string{"-kafka-consume-dead-letter-max-bytes", "-1"}, "-kafka-consume-dead-letter"},
		{[]string{"-kafka-consume-max-decompressed-bytes", "1024"}, "-kafka-consume-max-decompressed-bytes"},
		{[]string{"-grpc-max-recv-msg-size", "134217728", "-kafka-consume-max-batch-bytes", "67108864"}, "-kafka-consume-max-batch-bytes"},
		{[]string{"-kafka-consume-start", "middle"}, "-kafka-consume-start"},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"serve", "-data-dir", dir, "-kafka-consume", "127.0.0.1:9092"}, tc.args...)
		code := run(args, &stdout, &stderr)
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		if code != 2 || len(lines) != 1 || !strings.Contains(lines[0], tc.want) {
			t.Errorf("serve %v: exit %d, stderr %q; want exit 2 and one line mentioning %q", tc.args, code, stderr.String(), tc.want)
		}
	}
	// The options a migration from the kafkareceiver sets parse.
	_, _, err := parseServeEnv(t, nil, "-kafka-consume", "127.0.0.1:9092", "-kafka-consume-topic-traces", "^otlp_spans(_.*)?$",
		"-kafka-consume-exclude-topics", "^otlp_spans_test$", "-kafka-consume-balancer", "range", "-kafka-consume-instance-id", "store-1",
		"-kafka-consume-heartbeat-interval", "3s", "-kafka-consume-session-timeout", "10s", "-kafka-consume-fetch-max-bytes", "1048576",
		"-kafka-consume-fetch-max-partition-bytes", "1048576", "-kafka-consume-fetch-min-bytes", "1", "-kafka-consume-fetch-max-wait", "250ms",
		"-kafka-consume-start", "latest")
	if err != nil {
		t.Fatal(err)
	}
}
