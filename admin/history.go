package admin

import (
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/otlp-lite/otlp-lite/otlp"
)

// The status page's charts: the last HistoryLen samples (15 minutes at the
// default interval of 5 s) of a few figures, served as JSON at
// /status/history and drawn by the page's own script (status.html).
//
// A sample is taken from the same scrape of the metrics set as the page's
// rate ring (statusPage.snapshot), so a chart and /metrics agree by
// construction: nothing is counted twice. A sample holds the cumulative
// values (items stored per signal, refusals per reason, the request
// latency histogram's buckets) and the gauges (admission in use,
// forwarding lag) as they were; rates and percentiles are computed when
// /status/history is served, between consecutive samples.
//
// Memory: a fixed ring of HistoryLen samples, each a few dozen float64s
// (4 signals, the 13 refusal reasons in a map, 15 latency buckets and
// their bounds, one lag per forwarding destination): under 1 KB a sample,
// under 200 KB in all, whatever the load.

// HistoryLen is how many samples the ring keeps: 15 minutes of 5 s samples.
const HistoryLen = 180

// DefaultHistoryInterval is the time between two samples (and between two
// snapshots of the page's rate ring).
const DefaultHistoryInterval = 5 * time.Second

// requestDuration is the request latency histogram (package ingest).
const requestDuration = "otlplite_request_duration_seconds"

// historySample is the ring's view of one scrape.
type historySample struct {
	at time.Time
	// items is every signal's accepted items (otlp.Signals order).
	items [otlp.MaxSignal + 1]float64
	// refusals is otlplite_refusals_total by reason.
	refusals map[string]float64
	inUse    float64
	limit    float64
	// les are the latency histogram's bounds, buckets its cumulative
	// counts at each (all transports and signals summed).
	les     []float64
	buckets []float64
	// lag is otlplite_forward_lag_seconds by destination, the largest of
	// its signals.
	lag map[string]float64
}

// history is the ring.
type history struct {
	mu      sync.Mutex
	samples [HistoryLen]historySample
	next, n int
}

// sampleOf reads a sample from a scrape.
func sampleOf(e *exposition, at time.Time) historySample {
	s := historySample{at: at, refusals: map[string]float64{}, lag: map[string]float64{}}
	for _, sig := range otlp.Signals {
		s.items[sig], _ = e.sum(sel("otelcol_receiver_accepted_" + sig.Info().ItemsMetric + "_total"))
	}
	s.inUse, _ = e.sum(sel("otlplite_admission_bytes_in_flight"))
	s.limit, _ = e.sum(sel("otlplite_admission_bytes_limit"))
	byLE := map[float64]float64{}
	for i := range e.series {
		x := &e.series[i]
		switch x.name {
		case "otlplite_refusals_total":
			s.refusals[x.label("reason")] += x.value
		case requestDuration + "_bucket":
			le, err := strconv.ParseFloat(x.label("le"), 64)
			if err == nil {
				byLE[le] += x.value
			}
		case "otlplite_forward_lag_seconds":
			d := x.label("destination")
			s.lag[d] = max(s.lag[d], x.value)
		}
	}
	for le := range byLE {
		s.les = append(s.les, le)
	}
	slices.Sort(s.les)
	for _, le := range s.les {
		s.buckets = append(s.buckets, byLE[le])
	}
	return s
}

// add puts s in the ring, over the oldest sample once it is full.
func (h *history) add(s historySample) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.samples[h.next] = s
	h.next = (h.next + 1) % HistoryLen
	h.n = min(h.n+1, HistoryLen)
}

// list returns the samples, oldest first.
func (h *history) list() []historySample {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]historySample, 0, h.n)
	for i := range h.n {
		out = append(out, h.samples[(h.next-h.n+i+HistoryLen)%HistoryLen])
	}
	return out
}

// HistoryView is /status/history: one point per sample after the first,
// each at T (Unix milliseconds) and covering the interval since the
// sample before it. Rates are per second over that interval (a counter
// that went down, a restart of the set, counts from zero); percentiles
// are of the requests answered in it (null when none were); gauges are
// as sampled. Series names the selectors each chart sums, as the page's
// data-series do, so a reader can check them against /metrics.
type HistoryView struct {
	IntervalSeconds float64 `json:"interval_seconds"`
	Capacity        int     `json:"capacity"`
	T               []int64 `json:"t"`
	// ItemsPerSecond is items stored per second, by signal.
	ItemsPerSecond map[string][]float64 `json:"items_per_second"`
	// Items is the cumulative count of each signal at each point (what
	// ItemsPerSecond is the change of).
	Items map[string][]float64 `json:"items"`
	// RefusalsPerSecond is requests refused per second, by reason (the
	// reasons that had any in the window).
	RefusalsPerSecond map[string][]float64 `json:"refusals_per_second"`
	AdmissionInUse    []float64            `json:"admission_in_use_bytes"`
	AdmissionLimit    float64              `json:"admission_limit_bytes"`
	// LatencyP50 and LatencyP99 are seconds, from the buckets of
	// otlplite_request_duration_seconds (linear within a bucket, as
	// Prometheus' histogram_quantile).
	LatencyP50 []*float64 `json:"latency_p50_seconds"`
	LatencyP99 []*float64 `json:"latency_p99_seconds"`
	// ForwardLag is otlplite_forward_lag_seconds by destination (its
	// largest signal).
	ForwardLag map[string][]float64 `json:"forward_lag_seconds"`
	Series     map[string]string    `json:"series"`
}

// view computes the points of the ring.
func (h *history) view(interval time.Duration) HistoryView {
	samples := h.list()
	v := HistoryView{IntervalSeconds: interval.Seconds(), Capacity: HistoryLen, T: []int64{},
		ItemsPerSecond: map[string][]float64{}, Items: map[string][]float64{}, RefusalsPerSecond: map[string][]float64{},
		AdmissionInUse: []float64{}, LatencyP50: []*float64{}, LatencyP99: []*float64{}, ForwardLag: map[string][]float64{},
		Series: map[string]string{
			"refusals_per_second":    "otlplite_refusals_total{reason=…}",
			"admission_in_use_bytes": "otlplite_admission_bytes_in_flight",
			"latency":                requestDuration + "_bucket",
			"forward_lag_seconds":    "max of otlplite_forward_lag_seconds{destination=…}",
		}}
	for _, sig := range otlp.Signals {
		v.ItemsPerSecond[sig.String()] = []float64{}
		v.Items[sig.String()] = []float64{}
		v.Series["items_per_second."+sig.String()] = "otelcol_receiver_accepted_" + sig.Info().ItemsMetric + "_total"
	}
	if len(samples) == 0 {
		return v
	}
	v.AdmissionLimit = samples[len(samples)-1].limit
	// The reasons and destinations of the whole window, so that every
	// series has a point per sample.
	var reasons, dests []string
	for i, s := range samples {
		for r, n := range s.refusals {
			if i > 0 && n-samples[i-1].refusals[r] != 0 && !slices.Contains(reasons, r) {
				reasons = append(reasons, r)
			}
		}
		for d := range s.lag {
			if !slices.Contains(dests, d) {
				dests = append(dests, d)
			}
		}
	}
	slices.Sort(reasons)
	slices.Sort(dests)
	for i := 1; i < len(samples); i++ {
		prev, cur := &samples[i-1], &samples[i]
		dt := cur.at.Sub(prev.at).Seconds()
		if dt <= 0 {
			continue
		}
		v.T = append(v.T, cur.at.UnixMilli())
		for _, sig := range otlp.Signals {
			v.ItemsPerSecond[sig.String()] = append(v.ItemsPerSecond[sig.String()], rate(prev.items[sig], cur.items[sig], dt))
			v.Items[sig.String()] = append(v.Items[sig.String()], cur.items[sig])
		}
		for _, r := range reasons {
			v.RefusalsPerSecond[r] = append(v.RefusalsPerSecond[r], rate(prev.refusals[r], cur.refusals[r], dt))
		}
		v.AdmissionInUse = append(v.AdmissionInUse, cur.inUse)
		p50, p99 := latencyQuantiles(prev, cur)
		v.LatencyP50 = append(v.LatencyP50, p50)
		v.LatencyP99 = append(v.LatencyP99, p99)
		for _, d := range dests {
			v.ForwardLag[d] = append(v.ForwardLag[d], cur.lag[d])
		}
	}
	return v
}

// rate is the change of a cumulative value over dt seconds; a value that
// went down was reset, and counts from zero.
func rate(before, after, dt float64) float64 {
	d := after - before
	if d < 0 {
		d = after
	}
	return d / dt
}

// latencyQuantiles returns the median and 99th percentile of the requests
// counted between two samples, nil when there were none.
func latencyQuantiles(prev, cur *historySample) (p50, p99 *float64) {
	if !slices.Equal(prev.les, cur.les) {
		if len(prev.les) != 0 {
			return nil, nil // the buckets changed: no common ground
		}
		prev = &historySample{} // the histogram appeared: from zero
	}
	delta := make([]float64, len(cur.buckets))
	for i, c := range cur.buckets {
		if i < len(prev.buckets) {
			c -= prev.buckets[i]
		}
		delta[i] = max(c, 0)
	}
	return quantile(0.5, cur.les, delta), quantile(0.99, cur.les, delta)
}

// quantile is Prometheus' histogram_quantile over cumulative bucket counts
// counts at upper bounds les (sorted, the last +Inf): the rank's bucket,
// linearly within it; the highest finite bound when the rank is in the
// +Inf bucket. Nil when the histogram is empty.
func quantile(q float64, les, counts []float64) *float64 {
	if len(counts) == 0 || counts[len(counts)-1] <= 0 {
		return nil
	}
	rank := q * counts[len(counts)-1]
	for i, c := range counts {
		if c < rank {
			continue
		}
		if math.IsInf(les[i], 1) {
			if i == 0 {
				return nil
			}
			v := les[i-1]
			return &v
		}
		lo, below := 0.0, 0.0
		if i > 0 {
			lo, below = les[i-1], counts[i-1]
		}
		v := les[i]
		if c > below {
			v = lo + (les[i]-lo)*(rank-below)/(c-below)
		}
		return &v
	}
	return nil
}

// serveHistory serves the ring as JSON (HistoryView).
func (p *statusPage) serveHistory(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(p.hist.view(p.interval))
}

// windowQuantiles returns the median and 99th percentile of the requests
// of the request latency histogram's series with labels kv answered
// between two scrapes (old nil: since start), nil when there were none.
func windowQuantiles(cur, old *exposition, kv ...string) (p50, p99 *float64) {
	s := sel(requestDuration+"_bucket", kv...)
	byLE := func(e *exposition) (les, counts []float64) {
		if e == nil {
			return nil, nil
		}
		m := map[float64]float64{}
		for i := range e.series {
			if x := &e.series[i]; s.matches(x) {
				if le, err := strconv.ParseFloat(x.label("le"), 64); err == nil {
					m[le] += x.value
				}
			}
		}
		for le := range m {
			les = append(les, le)
		}
		slices.Sort(les)
		for _, le := range les {
			counts = append(counts, m[le])
		}
		return les, counts
	}
	var a, b historySample
	a.les, a.buckets = byLE(old)
	b.les, b.buckets = byLE(cur)
	return latencyQuantiles(&a, &b)
}
