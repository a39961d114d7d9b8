package forward

import (
	"fmt"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// register creates the lane's otlplite_forward_* series, labelled with the
// destination and the signal.
func (l *lane) register(set *metrics.Set) {
	labels := fmt.Sprintf(`{destination=%q,signal=%q}`, l.dest.d.Name, l.sig.String())
	c := func(name string) *metrics.Counter { return set.NewCounter(name + labels) }
	l.sent = c("otlplite_forward_sent_records_total")                  // records the destination acknowledged
	l.items = c("otlplite_forward_sent_items_total")                   // their spans, data points or log records (minus rejected ones)
	l.failed = c("otlplite_forward_failed_records_total")              // records refused for good (then dead-lettered)
	l.deadLettered = c("otlplite_forward_dead_lettered_records_total") // records written to the dead-letter store
	l.rejectedItems = c("otlplite_forward_rejected_items_total")       // items a partial success rejected
	l.retries = c("otlplite_forward_retries_total")                    // retried attempts (unary and HTTP)
	l.damaged = c("otlplite_forward_damaged_regions_total")            // damaged log regions skipped
	l.commits = c("otlplite_forward_cursor_commits_total")             // cursor commits (two fsyncs each)
	// The loss counter is created here so that it shows zero before any
	// loss; CountLoss adds to it, and so does a dead letter that could not
	// be written (lane.deadLetter).
	l.lost = set.GetOrCreateCounter("otlplite_forward_lost_records_total" + labels)
	g := func(name string, fn func() float64) { set.NewGauge(name+labels, fn) }
	g("otlplite_forward_lag_records", func() float64 { r, _ := l.lag(); return float64(r) })
	g("otlplite_forward_lag_bytes", func() float64 { _, b := l.lag(); return float64(b) })
	g("otlplite_forward_lag_seconds", func() float64 { return l.lagSeconds(time.Now()) })
	g("otlplite_forward_in_flight_records", func() float64 { return float64(l.win.Unfinished()) })
}

// register creates the destination's state series: one per state, 1 for
// the current one. A destination is as bad as its worst signal.
func (d *dest) register(set *metrics.Set) {
	for s := range stateNames {
		set.NewGauge(fmt.Sprintf(`otlplite_forward_state{destination=%q,state=%q}`, d.d.Name, stateNames[s]), func() float64 {
			if d.State() == State(s) {
				return 1
			}
			return 0
		})
	}
}

// State returns the destination's state: the worst of its signals'.
func (d *dest) State() State {
	worst := Up
	for _, l := range d.lanes {
		worst = max(worst, l.currentState())
	}
	return worst
}

func (l *lane) currentState() State {
	s := State(l.state.Load())
	if s == Up && l.send != nil && l.send.holding() != nil {
		s = BackingOff
	}
	return s
}

// lag is how much of the log the destination has not acknowledged.
func (l *lane) lag() (records, bytes int64) {
	if l.f.opts.Store == nil {
		return 0, 0
	}
	return l.f.opts.Store.Lag(l.sig, l.win.Position())
}

// lagSeconds is the age of the oldest record not acknowledged, zero when
// everything read is acknowledged.
func (l *lane) lagSeconds(now time.Time) float64 {
	t := l.win.Oldest()
	if t.IsZero() {
		return 0
	}
	return now.Sub(t).Seconds()
}
