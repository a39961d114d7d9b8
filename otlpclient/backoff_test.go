package otlpclient

import (
	"testing"
	"time"
)

func TestBackoffDelay(t *testing.T) {
	for _, tc := range []struct {
		name       string
		b          Backoff
		attempt    int
		server     time.Duration
		lo, hiExcl time.Duration
	}{
		{"first, defaults", Backoff{}, 1, 0, 50 * time.Millisecond, 60*time.Millisecond + 1},
		{"doubles", Backoff{Initial: 10 * time.Millisecond, Jitter: -1}, 4, 0, 80 * time.Millisecond, 80*time.Millisecond + 1},
		{"capped", Backoff{Initial: time.Second, Max: 3 * time.Second, Jitter: -1}, 30, 0, 3 * time.Second, 3*time.Second + 1},
		{"server delay is a floor", Backoff{Initial: 10 * time.Millisecond}, 1, 2 * time.Second, 2 * time.Second, 2400*time.Millisecond + 1},
		{"server delay above the cap", Backoff{Max: time.Second, Jitter: -1}, 1, 7 * time.Second, 7 * time.Second, 7*time.Second + 1},
		{"zero server delay", Backoff{Initial: time.Millisecond, Jitter: -1}, 1, 0, time.Millisecond, time.Millisecond + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 100 {
				if d := tc.b.Delay(tc.attempt, tc.server); d < tc.lo || d >= tc.hiExcl {
					t.Fatalf("Delay(%d, %v) = %v, want [%v, %v)", tc.attempt, tc.server, d, tc.lo, tc.hiExcl)
				}
			}
		})
	}
}
