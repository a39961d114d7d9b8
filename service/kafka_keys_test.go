//go:build !nokafka

package service

import (
	"strings"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/storage/kafka"
)

// TestKafkaKeysReadTimeout: -kafka-keys-read-timeout reaches the sink (its
// default kafka.DefaultKeysReadTimeout), 0 turns the read off (a negative
// Config.KeysReadTimeout), and a negative value is refused naming the flag.
func TestKafkaKeysReadTimeout(t *testing.T) {
	k := defaultKafkaConfig()
	for _, tc := range []struct {
		flag, want time.Duration
	}{{k.KeysReadTimeout, kafka.DefaultKeysReadTimeout}, {3 * time.Second, 3 * time.Second}, {0, -1}} {
		k.KeysReadTimeout = tc.flag
		cfg, err := k.sinkConfig()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.KeysReadTimeout != tc.want {
			t.Errorf("-kafka-keys-read-timeout %v: the sink's KeysReadTimeout is %v, want %v", tc.flag, cfg.KeysReadTimeout, tc.want)
		}
	}
	k.KeysReadTimeout = -time.Second
	if _, err := k.sinkConfig(); err == nil || !strings.Contains(err.Error(), "-kafka-keys-read-timeout") {
		t.Errorf("a negative timeout: %v", err)
	}
}
