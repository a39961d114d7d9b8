package admin

import (
	"encoding/json"
	"math"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// TestHistoryRing: the page's run loop samples the set every interval
// into a ring of HistoryLen samples, overwriting the oldest; each point of
// /status/history is the change of a counter over the interval before it,
// and the latency percentiles are those of the requests of that interval.
func TestHistoryRing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		set := metrics.NewSet()
		metrics.ExposeMetadata(true)
		spans := set.GetOrCreateCounter(`otelcol_receiver_accepted_spans_total{transport="grpc"}`)
		refused := set.GetOrCreateCounter(`otlplite_refusals_total{transport="http",reason="invalid_argument"}`)
		set.GetOrCreateGauge("otlplite_admission_bytes_in_flight", func() float64 { return 4096 })
		set.GetOrCreateGauge("otlplite_admission_bytes_limit", func() float64 { return 1 << 20 })
		lag := set.GetOrCreateGauge(`otlplite_forward_lag_seconds{destination="a",signal="traces"}`, nil)
		lat := set.GetOrCreatePrometheusHistogramExt(`otlplite_request_duration_seconds{transport="grpc",signal="traces"}`, []float64{0.001, 0.01, 0.1})
		const interval = 100 * time.Millisecond
		p := newStatusPage(set, Settings{}, nil, interval)
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() { p.run(stop); close(done) }()
		synctest.Wait() // the first sample, at start
		for i := range HistoryLen + 20 {
			spans.Add(10 * (i + 1)) // interval i: 10(i+1) spans, 100(i+1) a second
			if i%2 == 0 {
				refused.Inc()
			}
			for range 99 {
				lat.Update(0.005)
			}
			lat.Update(0.05)
			lag.Set(float64(i))
			time.Sleep(interval)
			synctest.Wait()
		}
		close(stop)
		<-done

		if p.hist.n != HistoryLen {
			t.Fatalf("%d samples kept, want %d", p.hist.n, HistoryLen)
		}
		rec := httptest.NewRecorder()
		p.serveHistory(rec, httptest.NewRequest("GET", "/status/history", nil))
		var v HistoryView
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		n := len(v.T)
		if n != HistoryLen-1 || v.IntervalSeconds != 0.1 || v.Capacity != HistoryLen {
			t.Fatalf("%d points every %v s of %d, want %d every 0.1 s", n, v.IntervalSeconds, v.Capacity, HistoryLen-1)
		}
		for j := 1; j < n; j++ {
			if v.T[j]-v.T[j-1] != interval.Milliseconds() {
				t.Fatalf("points %d, %d are %d ms apart", j-1, j, v.T[j]-v.T[j-1])
			}
		}
		// The last point covers the last interval: i = HistoryLen+19.
		last := HistoryLen + 20
		tr := v.ItemsPerSecond["traces"]
		if got, want := tr[n-1], float64(100*last); math.Abs(got-want) > 1e-6 {
			t.Errorf("last traces rate %v/s, want %v/s", got, want)
		}
		if got, want := v.Items["traces"][n-1], float64(10*last*(last+1)/2); got != want {
			t.Errorf("last traces total %v, want %v", got, want)
		}
		if got := (v.Items["traces"][n-1] - v.Items["traces"][n-2]) / 0.1; math.Abs(got-tr[n-1]) > 1e-6 {
			t.Errorf("the rate %v is not the change of the total %v", tr[n-1], got)
		}
		if r := v.RefusalsPerSecond["invalid_argument"]; len(r) != n || r[n-1]+r[n-2] != 10 {
			t.Errorf("refusal rates %v, want 10/s every other point", r[max(0, len(r)-2):])
		}
		if v.AdmissionInUse[n-1] != 4096 || v.AdmissionLimit != 1<<20 {
			t.Errorf("admission %v of %v", v.AdmissionInUse[n-1], v.AdmissionLimit)
		}
		if l := v.ForwardLag["a"]; l[n-1] != float64(last-1) {
			t.Errorf("lag %v, want %d", l[n-1], last-1)
		}
		// 99 requests of 5 ms and one of 50 ms per interval: the median
		// in the (1 ms, 10 ms] bucket, the 99th percentile at its top.
		p50, p99 := v.LatencyP50[n-1], v.LatencyP99[n-1]
		if p50 == nil || *p50 <= 0.001 || *p50 > 0.01 || p99 == nil || math.Abs(*p99-0.01) > 1e-9 {
			t.Errorf("p50 %v, p99 %v", p50, p99)
		}
	})
}

func TestQuantile(t *testing.T) {
	inf := math.Inf(1)
	les := []float64{0.1, 1, inf}
	for _, tc := range []struct {
		q      float64
		counts []float64
		want   float64 // NaN: nil
	}{
		{0.5, []float64{0, 0, 0}, math.NaN()},
		{0.5, []float64{10, 10, 10}, 0.05},
		{0.5, []float64{0, 10, 10}, 0.55},
		{0.99, []float64{0, 0, 10}, 1}, // in +Inf: the highest finite bound
	} {
		got := quantile(tc.q, les, tc.counts)
		if math.IsNaN(tc.want) {
			if got != nil {
				t.Errorf("q%v of %v = %v, want none", tc.q, tc.counts, *got)
			}
			continue
		}
		if got == nil || math.Abs(*got-tc.want) > 1e-9 {
			t.Errorf("q%v of %v = %v, want %v", tc.q, tc.counts, got, tc.want)
		}
	}
}
