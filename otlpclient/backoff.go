package otlpclient

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/otlp-lite/otlp-lite/otlp"
)

// Backoff computes how long to wait before resending a request or reopening
// a stream. OTLP v1.11 "Failures" asks for exponential back-off with jitter,
// and for at least the server's delay when it sends google.rpc.RetryInfo.
type Backoff struct {
	// Initial is the wait before the first retry; zero means 50ms.
	Initial time.Duration
	// Max caps the exponential growth (not a server's delay, which
	// otlp.MaxServerDelay caps); zero means 5s.
	Max time.Duration
	// Jitter is the fraction of the wait added at random, so clients that
	// failed together do not retry together; zero means 0.2, negative
	// none.
	Jitter float64
}

// Delay returns the wait before retry number attempt (1 for the first) when
// the server asked for serverDelay (zero if it did not). It is the one place
// every client path turns a server's delay into a wait: serverDelay is
// first cut to [0, otlp.MaxServerDelay] (otlp.ServerDelay), and the result
// is never less than that, jitter being only ever added, never more than
// max(Max, otlp.MaxServerDelay) plus its jitter, and never negative: no
// delay, however large, overflows into an immediate retry.
func (b Backoff) Delay(attempt int, serverDelay time.Duration) time.Duration {
	initial, maxd, jitter := b.Initial, b.Max, b.Jitter
	if initial <= 0 {
		initial = 50 * time.Millisecond
	}
	if maxd <= 0 {
		maxd = 5 * time.Second
	}
	if jitter == 0 {
		jitter = 0.2
	}
	d := min(initial, maxd)
	for i := 1; i < attempt && d < maxd; i++ {
		if d > maxd/2 {
			d = maxd
			break
		}
		d *= 2
	}
	d = max(d, otlp.ServerDelay(serverDelay))
	if jitter > 0 {
		// In floating point, saturated: d plus a large jitter must not
		// wrap around to a negative wait.
		j := float64(d) * (1 + rand.Float64()*jitter)
		if j >= math.MaxInt64 {
			return math.MaxInt64
		}
		d = time.Duration(j)
	}
	return d
}
