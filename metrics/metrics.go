// Package metrics is a small Prometheus text-format registry: counters,
// gauges and histograms with labels, written without the Prometheus client
// library and its dependency tree. The receiver's operator metrics (handler,
// storage, connections) all register here and the admin listener serves
// WritePrometheus at /metrics.
//
// Hot-path use resolves a labelled series once (Vec.With) and keeps the
// returned *Counter or *Histogram; updating it is one atomic operation.
package metrics

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Registry holds metric families and writes them in the Prometheus text
// exposition format (version 0.0.4).
type Registry struct {
	mu       sync.Mutex
	families []*family
	byName   map[string]*family
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{byName: map[string]*family{}} }

type kind uint8

const (
	kindCounter kind = iota
	kindGauge
	kindHistogram
)

func (k kind) String() string {
	return [...]string{"counter", "gauge", "histogram"}[k]
}

type family struct {
	name, help string
	kind       kind
	labels     []string
	buckets    []float64

	mu     sync.Mutex
	series map[string]*series // by encoded label values
	order  []string
	fn     func() float64 // GaugeFunc / CounterFunc
	vecFn  func(emit func(v float64, values ...string))
}

type series struct {
	labelPairs string // `a="x",b="y"`
	value      atomic.Uint64
	// histogram state: counts[i] counts observations in bucket i alone
	// (not cumulative); the last one, past the highest bound, counts those
	// only +Inf holds. There is no separate total: a scrape derives
	// +Inf and _count from the same reads of counts (see family.append).
	counts []atomic.Uint64
	sum    atomic.Uint64 // float64 bits
}

func (r *Registry) register(name, help string, k kind, labels []string, buckets []float64) *family {
	r.mu.Lock()
	defer r.mu.Unlock()
	if f, ok := r.byName[name]; ok {
		if f.kind != k || strings.Join(f.labels, ",") != strings.Join(labels, ",") {
			panic(fmt.Sprintf("metrics: %s registered twice with different shapes", name))
		}
		return f
	}
	f := &family{name: name, help: help, kind: k, labels: labels, buckets: buckets, series: map[string]*series{}}
	r.families = append(r.families, f)
	r.byName[name] = f
	return f
}

func (f *family) with(values []string) *series {
	if len(values) != len(f.labels) {
		panic(fmt.Sprintf("metrics: %s takes %d label values, got %d", f.name, len(f.labels), len(values)))
	}
	key := strings.Join(values, "\xff")
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.series[key]; ok {
		return s
	}
	var b strings.Builder
	for i, l := range f.labels {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l)
		b.WriteString(`="`)
		b.WriteString(escapeLabel(values[i]))
		b.WriteByte('"')
	}
	s := &series{labelPairs: b.String()}
	if f.kind == kindHistogram {
		s.counts = make([]atomic.Uint64, len(f.buckets)+1)
	}
	f.series[key] = s
	f.order = append(f.order, key)
	return s
}

func escapeLabel(v string) string {
	if !strings.ContainsAny(v, "\\\n\"") {
		return v // nearly always: no copy, and no replacer built
	}
	return labelEscaper.Replace(v)
}

// labelEscaper is built once: a strings.Replacer with multi-byte
// replacements sets up ~500 KB of tables on first use.
var labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)

// Counter is a monotonically increasing value.
type Counter struct{ s *series }

// Add adds n (which must not be negative).
func (c *Counter) Add(n int64) { c.s.value.Add(uint64(n)) }

// Inc adds one.
func (c *Counter) Inc() { c.s.value.Add(1) }

// Value returns the current count.
func (c *Counter) Value() int64 { return int64(c.s.value.Load()) }

// CounterVec is a counter family with labels.
type CounterVec struct{ f *family }

// Counter registers a counter family. Prometheus counters end in _total.
func (r *Registry) Counter(name, help string, labels ...string) *CounterVec {
	return &CounterVec{r.register(name, help, kindCounter, labels, nil)}
}

// With returns the series with the given label values, creating it.
func (v *CounterVec) With(values ...string) *Counter { return &Counter{v.f.with(values)} }

// Gauge is a value that goes up and down.
type Gauge struct{ s *series }

// Add adds n (may be negative).
func (g *Gauge) Add(n int64) { g.s.value.Add(uint64(n)) }

// Set sets the value.
func (g *Gauge) Set(n int64) { g.s.value.Store(uint64(n)) }

// Value returns the current value.
func (g *Gauge) Value() int64 { return int64(g.s.value.Load()) }

// GaugeVec is a gauge family with labels.
type GaugeVec struct{ f *family }

// Gauge registers a gauge family.
func (r *Registry) Gauge(name, help string, labels ...string) *GaugeVec {
	return &GaugeVec{r.register(name, help, kindGauge, labels, nil)}
}

// With returns the series with the given label values, creating it.
func (v *GaugeVec) With(values ...string) *Gauge { return &Gauge{v.f.with(values)} }

// GaugeFunc registers an unlabelled gauge whose value is read from fn at
// scrape time.
func (r *Registry) GaugeFunc(name, help string, fn func() float64) {
	f := r.register(name, help, kindGauge, nil, nil)
	f.fn = fn
}

// CounterFunc registers an unlabelled counter read from fn at scrape time.
func (r *Registry) CounterFunc(name, help string, fn func() float64) {
	f := r.register(name, help, kindCounter, nil, nil)
	f.fn = fn
}

// GaugeVecFunc registers a labelled gauge family whose series are produced
// at scrape time: fn calls emit once per series. It suits values another
// component already keeps (a store's per-signal sizes).
func (r *Registry) GaugeVecFunc(name, help string, labels []string, fn func(emit func(v float64, values ...string))) {
	f := r.register(name, help, kindGauge, labels, nil)
	f.vecFn = fn
}

// CounterVecFunc is GaugeVecFunc for counters.
func (r *Registry) CounterVecFunc(name, help string, labels []string, fn func(emit func(v float64, values ...string))) {
	f := r.register(name, help, kindCounter, labels, nil)
	f.vecFn = fn
}

// Histogram counts observations into cumulative buckets.
type Histogram struct {
	s       *series
	buckets []float64
}

// Observe records v: it adds v to the sum, then counts it in one bucket.
// The order matters to a concurrent scrape, which reads the buckets before
// the sum (see family.append).
func (h *Histogram) Observe(v float64) {
	for {
		old := h.s.sum.Load()
		if h.s.sum.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			break
		}
	}
	i := 0
	for i < len(h.buckets) && !(v <= h.buckets[i]) { // NaN goes past every bound, to +Inf
		i++
	}
	h.s.counts[i].Add(1)
}

// HistogramVec is a histogram family with labels.
type HistogramVec struct{ f *family }

// Histogram registers a histogram family with the given upper bounds
// (sorted; +Inf is implied).
func (r *Registry) Histogram(name, help string, buckets []float64, labels ...string) *HistogramVec {
	b := append([]float64(nil), buckets...)
	sort.Float64s(b)
	return &HistogramVec{r.register(name, help, kindHistogram, labels, b)}
}

// With returns the series with the given label values, creating it.
func (v *HistogramVec) With(values ...string) *Histogram {
	return &Histogram{s: v.f.with(values), buckets: v.f.buckets}
}

// LatencyBuckets are upper bounds in seconds from 0.5 ms to 10 s, for
// request and storage latencies.
var LatencyBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// WritePrometheus writes every family in registration order.
func (r *Registry) WritePrometheus(w io.Writer) error {
	r.mu.Lock()
	fams := append([]*family(nil), r.families...)
	r.mu.Unlock()
	var b []byte
	for _, f := range fams {
		b = f.append(b)
	}
	_, err := w.Write(b)
	return err
}

func (f *family) append(b []byte) []byte {
	b = fmt.Appendf(b, "# HELP %s %s\n# TYPE %s %s\n", f.name, strings.ReplaceAll(f.help, "\n", " "), f.name, f.kind)
	if f.fn != nil {
		return appendSample(b, f.name, "", f.fn())
	}
	if f.vecFn != nil {
		f.vecFn(func(v float64, values ...string) {
			var lb strings.Builder
			for i, l := range f.labels {
				if i > 0 {
					lb.WriteByte(',')
				}
				lb.WriteString(l + `="` + escapeLabel(values[i]) + `"`)
			}
			b = appendSample(b, f.name, lb.String(), v)
		})
		return b
	}
	f.mu.Lock()
	keys := append([]string(nil), f.order...)
	f.mu.Unlock()
	for _, k := range keys {
		f.mu.Lock()
		s := f.series[k]
		f.mu.Unlock()
		switch f.kind {
		case kindHistogram:
			// Observers keep running while we read, so the reads are not
			// one snapshot; the scrape is consistent anyway, without a
			// lock on Observe, because of what is derived from what:
			//   - each bucket is read once, and the cumulative values are
			//     running sums of those reads, so they cannot decrease;
			//   - +Inf and _count are the sum of all the reads, overflow
			//     bucket included, so they are equal and not below any
			//     finite bucket. (The old separate total, updated after
			//     the bucket and read after the buckets, could miss an
			//     observation whose bucket we had read: +Inf below le=x.
			//     Ordering could fix that too, but deriving the total
			//     needs no ordering argument and one atomic less.)
			//   - _sum is read after the buckets, and Observe adds to the
			//     sum before it counts, so _sum includes every observation
			//     the buckets count (plus perhaps a few not counted yet).
			// Each counter only grows, so successive scrapes never go
			// backwards either.
			var cum uint64
			for i, ub := range f.buckets {
				cum += s.counts[i].Load()
				b = appendSample(b, f.name+"_bucket", joinLabels(s.labelPairs, `le="`+formatFloat(ub)+`"`), float64(cum))
			}
			cum += s.counts[len(f.buckets)].Load()
			b = appendSample(b, f.name+"_bucket", joinLabels(s.labelPairs, `le="+Inf"`), float64(cum))
			b = appendSample(b, f.name+"_sum", s.labelPairs, math.Float64frombits(s.sum.Load()))
			b = appendSample(b, f.name+"_count", s.labelPairs, float64(cum))
		default:
			b = appendSample(b, f.name, s.labelPairs, float64(int64(s.value.Load())))
		}
	}
	return b
}

func joinLabels(a, b string) string {
	if a == "" {
		return b
	}
	return a + "," + b
}

func appendSample(b []byte, name, labels string, v float64) []byte {
	b = append(b, name...)
	if labels != "" {
		b = append(b, '{')
		b = append(b, labels...)
		b = append(b, '}')
	}
	b = append(b, ' ')
	b = append(b, formatFloat(v)...)
	return append(b, '\n')
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
