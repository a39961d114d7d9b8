package otlpclient

import (
	"math/rand/v2"
	"time"
)

// Backoff computes how long to wait before resending a request or reopening
// a stream. OTLP v1.11 "Failures" asks for exponential back-off with jitter,
// and for at least the server's delay when it sends google.rpc.RetryInfo.
type Backoff struct {
	// Initial is the wait before the first retry; zero means 50ms.
	Initial time.Duration
	// Max caps the exponential growth (not a server's RetryInfo); zero
	// means 5s.
	Max time.Duration
	// Jitter is the fraction of the wait added at random, so clients that
	// failed together do not retry together; zero means 0.2, negative
	// none.
	Jitter float64
}

// Delay returns the wait before retry number attempt (1 for the first) when
// the server asked for serverDelay (zero if it did not). The result is never
// less than serverDelay: jitter is only ever added.
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
	d := initial
	for i := 1; i < attempt && d < maxd; i++ {
		d *= 2
	}
	d = min(d, maxd)
	d = max(d, serverDelay)
	if jitter > 0 {
		d += time.Duration(rand.Float64() * jitter * float64(d))
	}
	return d
}
