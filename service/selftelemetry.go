package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/VictoriaMetrics/easyproto"
	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/admin"
	"github.com/otlp-lite/otlp-lite/forward"
	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlppb"
)

// Self-telemetry: the receiver's own metrics (what /metrics serves,
// converted to OTLP metrics) and its log records at WARN and above
// (converted to OTLP log records), pushed every interval to an OTLP
// endpoint (-self-telemetry-endpoint):
//
//	http://host:port[/prefix], https://...   OTLP/HTTP protobuf, to /v1/metrics and /v1/logs
//	grpc://host:port                         OTLP/gRPC (h2c)
//	self                                     this receiver's own pipeline, in process
//
// With "self" the requests go into the ingest pipeline as the receiver's
// own (ingest.Pipeline.WithSelf): charged to an admission reserve of
// selfReserve bytes that user requests cannot take, so a pipeline whose
// whole budget user tenants hold still stores them (as tenant "_self"
// when tenancy is on). Its own failures are logged at DEBUG only, so that
// they do not feed the logs it ships.
//
// The metrics are read from the same scrape /metrics answers
// (admin.Scrape): counters become cumulative monotonic Sums, gauges
// Gauges, histograms (their _bucket, _sum and _count) explicit-bucket
// Histograms, summaries Summaries; every label an attribute.

// DefaultSelfTelemetryInterval is how often self-telemetry is pushed.
const DefaultSelfTelemetryInterval = 10 * time.Second

// selfReserve is the admission reserve of the self tenant: the metrics
// request is about 100 KB (a few hundred series); 4 MiB leaves room for
// a log batch (selfLogMaxBytes) and one push still in the pipeline when
// the next begins.
const selfReserve = 4 << 20

// selfPushTimeout is the least time a push may take (retries included):
// the interval when it is longer. A push in progress delays the next.
const selfPushTimeout = 5 * time.Second

// selfLogMaxRecords and selfLogMaxBytes bound the log records kept between
// two pushes (the oldest go first, counted in
// otlplite_self_telemetry_dropped_log_records_total): a flood of warnings
// cannot grow the buffer, and a batch fits the reserve.
const (
	selfLogMaxRecords = 1000
	selfLogMaxBytes   = 1 << 20
)

// SelfTelemetryConfig configures self-telemetry.
type SelfTelemetryConfig struct {
	// Endpoint is where to push (-self-telemetry-endpoint, default "":
	// off): http(s)://host:port[/prefix], grpc://host:port or self.
	Endpoint string
	// Interval is the time between two pushes (-self-telemetry-interval,
	// default DefaultSelfTelemetryInterval).
	Interval time.Duration
}

// validate checks the endpoint.
func (c SelfTelemetryConfig) validate() error {
	if c.Interval < 0 {
		return fmt.Errorf("bad -self-telemetry-interval %v: want a positive duration", c.Interval)
	}
	_, err := c.destination()
	return err
}

// destination reads a remote endpoint, a destination URL as -forward's
// (docs/forwarding.md): grpc(s):// or http(s)://, unix:PATH, TLS files,
// headers, compression. The forwarder's parameters of its own (signals,
// start, inflight, tenant-header) do not apply and are refused. The zero
// Destination for "" and self.
func (c SelfTelemetryConfig) destination() (forward.Destination, error) {
	if c.Endpoint == "" || c.Endpoint == "self" {
		return forward.Destination{}, nil
	}
	switch scheme, _, _ := strings.Cut(c.Endpoint, "://"); scheme {
	case "grpc", "grpcs", "http", "https":
	default:
		// Not quoted: it may be a credential.
		return forward.Destination{}, errors.New("invalid -self-telemetry-endpoint: want grpc://host:port, grpcs://, http://, https:// (host:port or unix:PATH, and -forward's URL parameters) or self")
	}
	d, err := forward.ParseEndpointURL("-self-telemetry-endpoint", "self-telemetry", c.Endpoint)
	if err != nil {
		return d, err
	}
	_, rawQuery, _ := strings.Cut(c.Endpoint, "?")
	q, _ := url.ParseQuery(rawQuery) // parsed by ParseEndpointURL
	for _, key := range []string{"signals", "start", "inflight", "tenant-header"} {
		if q.Has(key) {
			return d, fmt.Errorf("invalid -self-telemetry-endpoint: %s= is a forwarder's parameter, not a self-telemetry one", key)
		}
	}
	return d, nil
}

// selfExporter sends one encoded request of a signal.
type selfExporter func(ctx context.Context, sig otlp.Signal, body []byte) error

// selfTelemetry is the pusher.
type selfTelemetry struct {
	set      *metrics.Set
	logs     *selfLogBuffer
	export   selfExporter
	interval time.Duration
	logger   *slog.Logger
	start    time.Time
	resource []byte // the encoded Resource
	// exports counts pushes by signal and result.
	exports map[string]*metrics.Counter
}

// startSelfTelemetry starts pushing, until s.stop, if it is configured.
func (s *Service) startSelfTelemetry() error {
	cfg := s.cfg.SelfTelemetry
	if cfg.Endpoint == "" {
		return nil
	}
	interval := cfg.Interval
	if interval <= 0 {
		interval = DefaultSelfTelemetryInterval
	}
	// The histograms' and counters' types come from the # TYPE lines.
	metrics.ExposeMetadata(true)
	st := &selfTelemetry{set: s.metrics, logs: s.selfLogs, interval: interval, logger: s.logger, start: time.Now(),
		resource: selfResource(s.cfg.Version), exports: map[string]*metrics.Counter{}}
	for _, sig := range []otlp.Signal{otlp.Metrics, otlp.Logs} {
		for _, r := range []string{"ok", "failed"} {
			st.exports[sig.String()+r] = s.metrics.GetOrCreateCounter(`otlplite_self_telemetry_exports_total{signal="` + sig.String() + `",result="` + r + `"}`)
		}
	}
	if st.logs != nil {
		s.metrics.GetOrCreateCounter("otlplite_self_telemetry_dropped_log_records_total")
		st.logs.dropped = s.metrics.GetOrCreateCounter("otlplite_self_telemetry_dropped_log_records_total")
	}
	shown := cfg.Endpoint
	if cfg.Endpoint == "self" {
		p := s.handler.Pipeline()
		st.export = func(ctx context.Context, sig otlp.Signal, body []byte) error {
			_, err := p.Export(p.WithSelf(ctx), ingest.Request{Transport: ingest.Embedded, Signal: sig, Body: body})
			return err
		}
	} else {
		d, err := cfg.destination()
		if err != nil {
			return err
		}
		export, err := forward.NewExporter(d, max(interval, selfPushTimeout))
		if err != nil {
			return err
		}
		st.export = selfExporter(export)
		shown = d.String() // without the URL's secrets
	}
	stop, done := make(chan struct{}), make(chan struct{})
	s.stopSelf = func() { close(stop); <-done }
	go func() { defer close(done); st.run(stop) }()
	s.logger.Info("self-telemetry on", "endpoint", shown, "interval", interval)
	return nil
}

func (st *selfTelemetry) run(stop <-chan struct{}) {
	t := time.NewTicker(st.interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			st.push(stop, now)
		}
	}
}

// push sends the metrics now and the log records buffered since the last
// push, within one interval or selfPushTimeout, whichever is longer.
func (st *selfTelemetry) push(stop <-chan struct{}, now time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), max(st.interval, selfPushTimeout))
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	e, err := admin.Scrape(st.set)
	if err == nil {
		st.send(ctx, otlp.Metrics, encodeSelfMetrics(e, st.resource, st.start, now))
	} else {
		st.logger.Debug("self-telemetry: cannot read the metrics", "err", err)
	}
	if st.logs != nil {
		if recs := st.logs.take(); len(recs) > 0 {
			st.send(ctx, otlp.Logs, encodeSelfLogs(recs, st.resource))
		}
	}
}

func (st *selfTelemetry) send(ctx context.Context, sig otlp.Signal, body []byte) {
	if err := st.export(ctx, sig, body); err != nil {
		st.exports[sig.String()+"failed"].Inc()
		// DEBUG: a WARN here would be shipped, fail, and be logged again.
		st.logger.Debug("self-telemetry not sent", "signal", sig.String(), "err", err)
		return
	}
	st.exports[sig.String()+"ok"].Inc()
}

// selfResource encodes the receiver's Resource: service.name otlp-lite,
// its version and host.name.
func selfResource(version string) []byte {
	var m easyproto.Marshaler
	mm := m.MessageMarshaler()
	host, _ := os.Hostname()
	for _, kv := range [][2]string{{"service.name", "otlp-lite"}, {"service.version", version}, {"host.name", host}} {
		if kv[1] != "" {
			appendStringKV(mm, otlppb.ResourceAttributes, kv[0], kv[1])
		}
	}
	return m.Marshal(nil)
}

func appendStringKV(mm *easyproto.MessageMarshaler, field uint32, k, v string) {
	kv := mm.AppendMessage(field)
	kv.AppendString(otlppb.KeyValueKey, k)
	kv.AppendMessage(otlppb.KeyValueValue).AppendString(otlppb.AnyValueStringValue, v)
}

// appendScope writes the instrumentation scope: this package.
func appendScope(mm *easyproto.MessageMarshaler, field uint32) {
	sc := mm.AppendMessage(field)
	sc.AppendString(otlppb.InstrumentationScopeName, "github.com/otlp-lite/otlp-lite/service")
}

// selfFamily is one metric family of the scrape being converted.
type selfFamily struct {
	name, typ string
	series    []admin.Series
}

// encodeSelfMetrics converts a scrape to an ExportMetricsServiceRequest.
func encodeSelfMetrics(e *admin.Exposition, resource []byte, start, now time.Time) []byte {
	// Families in the order first seen; a histogram's or summary's
	// series under its base name.
	var fams []*selfFamily
	byName := map[string]*selfFamily{}
	for _, x := range e.Series() {
		typ := e.Type(x.Name)
		name := x.Name
		if typ == "histogram" || typ == "summary" {
			for _, suf := range []string{"_bucket", "_sum", "_count"} {
				if b, ok := strings.CutSuffix(name, suf); ok && e.Type(b) == typ {
					name = b
					break
				}
			}
		}
		f := byName[name]
		if f == nil {
			f = &selfFamily{name: name, typ: typ}
			byName[name] = f
			fams = append(fams, f)
		}
		f.series = append(f.series, x)
	}
	var m easyproto.Marshaler
	req := m.MessageMarshaler()
	rm := req.AppendMessage(otlppb.MetricsDataResourceMetrics)
	rm.AppendBytes(otlppb.ResourceMetricsResource, resource) // an encoded message is length-delimited bytes
	sm := rm.AppendMessage(otlppb.ResourceMetricsScopeMetrics)
	appendScope(sm, otlppb.ScopeMetricsScope)
	t0, t1 := uint64(start.UnixNano()), uint64(now.UnixNano())
	for _, f := range fams {
		mt := sm.AppendMessage(otlppb.ScopeMetricsMetrics)
		mt.AppendString(otlppb.MetricName, f.name)
		switch f.typ {
		case "counter":
			sum := mt.AppendMessage(otlppb.MetricSum)
			for _, x := range f.series {
				appendNumberPoint(sum.AppendMessage(otlppb.SumDataPoints), x.Labels, t0, t1, x.Value)
			}
			sum.AppendInt32(otlppb.SumAggregationTemporality, 2) // CUMULATIVE
			sum.AppendBool(otlppb.SumIsMonotonic, true)
		case "histogram":
			h := mt.AppendMessage(otlppb.MetricHistogram)
			appendHistogramPoints(h, f, t0, t1)
			h.AppendInt32(otlppb.HistogramAggregationTemporality, 2)
		case "summary":
			appendSummaryPoints(mt.AppendMessage(otlppb.MetricSummary), f, t0, t1)
		default:
			g := mt.AppendMessage(otlppb.MetricGauge)
			for _, x := range f.series {
				appendNumberPoint(g.AppendMessage(otlppb.GaugeDataPoints), x.Labels, 0, t1, x.Value)
			}
		}
	}
	return m.Marshal(nil)
}

func appendAttrs(mm *easyproto.MessageMarshaler, field uint32, labels [][2]string) {
	for _, l := range labels {
		appendStringKV(mm, field, l[0], l[1])
	}
}

func appendNumberPoint(dp *easyproto.MessageMarshaler, labels [][2]string, t0, t1 uint64, v float64) {
	if t0 != 0 {
		dp.AppendFixed64(otlppb.NumberDataPointStartTimeUnixNano, t0)
	}
	dp.AppendFixed64(otlppb.NumberDataPointTimeUnixNano, t1)
	dp.AppendDouble(otlppb.NumberDataPointAsDouble, v)
	appendAttrs(dp, otlppb.NumberDataPointAttributes, labels)
}

// pointKey is a series' labels without le or quantile: its point's.
func pointKey(labels [][2]string, drop string) ([][2]string, string) {
	var kept [][2]string
	var b strings.Builder
	for _, l := range labels {
		if l[0] == drop {
			continue
		}
		kept = append(kept, l)
		b.WriteString(l[0] + "\x00" + l[1] + "\x00")
	}
	return kept, b.String()
}

// histPoint is one histogram point being assembled.
type histPoint struct {
	labels     [][2]string
	les        []float64
	cumulative []float64
	sum, count float64
	quantiles  [][2]float64
}

func collectPoints(f *selfFamily, drop string) []*histPoint {
	var order []*histPoint
	points := map[string]*histPoint{}
	for _, x := range f.series {
		labels, key := pointKey(x.Labels, drop)
		p := points[key]
		if p == nil {
			p = &histPoint{labels: labels}
			points[key] = p
			order = append(order, p)
		}
		switch {
		case strings.HasSuffix(x.Name, "_sum") && x.Name != f.name:
			p.sum = x.Value
		case strings.HasSuffix(x.Name, "_count") && x.Name != f.name:
			p.count = x.Value
		default:
			for _, l := range x.Labels {
				if l[0] != drop {
					continue
				}
				b, err := strconv.ParseFloat(l[1], 64)
				if err != nil {
					continue
				}
				if drop == "le" {
					p.les = append(p.les, b)
					p.cumulative = append(p.cumulative, x.Value)
				} else {
					p.quantiles = append(p.quantiles, [2]float64{b, x.Value})
				}
			}
		}
	}
	return order
}

// appendHistogramPoints writes a Prometheus histogram's points: explicit
// bounds are its finite le values, bucket counts the differences of its
// cumulative ones (the last, +Inf's, included).
func appendHistogramPoints(h *easyproto.MessageMarshaler, f *selfFamily, t0, t1 uint64) {
	for _, p := range collectPoints(f, "le") {
		idx := make([]int, len(p.les))
		for i := range idx {
			idx[i] = i
		}
		slices.SortFunc(idx, func(a, b int) int { return cmpFloat(p.les[a], p.les[b]) })
		dp := h.AppendMessage(otlppb.HistogramDataPoints)
		dp.AppendFixed64(otlppb.HistogramDataPointStartTimeUnixNano, t0)
		dp.AppendFixed64(otlppb.HistogramDataPointTimeUnixNano, t1)
		dp.AppendFixed64(otlppb.HistogramDataPointCount, uint64(p.count))
		dp.AppendDouble(otlppb.HistogramDataPointSum, p.sum)
		var bounds []float64
		var counts []uint64
		prev := 0.0
		for _, i := range idx {
			if !math.IsInf(p.les[i], 1) {
				bounds = append(bounds, p.les[i])
			}
			counts = append(counts, uint64(max(p.cumulative[i]-prev, 0)))
			prev = p.cumulative[i]
		}
		if len(idx) == 0 || !math.IsInf(p.les[idx[len(idx)-1]], 1) {
			// No +Inf bucket written: the rest of the count is above.
			counts = append(counts, uint64(max(p.count-prev, 0)))
		}
		dp.AppendFixed64s(otlppb.HistogramDataPointBucketCounts, counts)
		dp.AppendDoubles(otlppb.HistogramDataPointExplicitBounds, bounds)
		appendAttrs(dp, otlppb.HistogramDataPointAttributes, p.labels)
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// appendSummaryPoints writes a Prometheus summary's points.
func appendSummaryPoints(s *easyproto.MessageMarshaler, f *selfFamily, t0, t1 uint64) {
	for _, p := range collectPoints(f, "quantile") {
		dp := s.AppendMessage(otlppb.SummaryDataPoints)
		dp.AppendFixed64(otlppb.SummaryDataPointStartTimeUnixNano, t0)
		dp.AppendFixed64(otlppb.SummaryDataPointTimeUnixNano, t1)
		dp.AppendFixed64(otlppb.SummaryDataPointCount, uint64(p.count))
		dp.AppendDouble(otlppb.SummaryDataPointSum, p.sum)
		for _, q := range p.quantiles {
			vq := dp.AppendMessage(otlppb.SummaryDataPointQuantileValues)
			vq.AppendDouble(otlppb.SummaryDataPointValueAtQuantileQuantile, q[0])
			vq.AppendDouble(otlppb.SummaryDataPointValueAtQuantileValue, q[1])
		}
		appendAttrs(dp, otlppb.SummaryDataPointAttributes, p.labels)
	}
}

// selfLogRecord is one log record kept for the next push: its attributes
// already through redactAttr.
type selfLogRecord struct {
	t     time.Time
	level slog.Level
	msg   string
	attrs [][2]string
	size  int
}

// selfLogBuffer keeps the records of WARN and above between two pushes.
type selfLogBuffer struct {
	mu      sync.Mutex
	recs    []selfLogRecord
	bytes   int
	dropped *metrics.Counter // nil until self-telemetry starts
}

func (b *selfLogBuffer) add(r selfLogRecord) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.recs = append(b.recs, r)
	b.bytes += r.size
	for len(b.recs) > selfLogMaxRecords || b.bytes > selfLogMaxBytes {
		b.bytes -= b.recs[0].size
		b.recs = b.recs[1:]
		if b.dropped != nil {
			b.dropped.Inc()
		}
	}
}

func (b *selfLogBuffer) take() []selfLogRecord {
	b.mu.Lock()
	defer b.mu.Unlock()
	recs := b.recs
	b.recs, b.bytes = nil, 0
	return recs
}

// selfLogHandler passes every record to the logger's own handler and
// keeps those at WARN and above for self-telemetry.
type selfLogHandler struct {
	inner slog.Handler
	buf   *selfLogBuffer
	// attrs are those of WithAttrs, prefix the groups of WithGroup.
	attrs  [][2]string
	prefix string
}

// withSelfLogs returns logger teeing its WARN and above into a buffer.
func withSelfLogs(logger *slog.Logger) (*slog.Logger, *selfLogBuffer) {
	buf := &selfLogBuffer{}
	return slog.New(&selfLogHandler{inner: logger.Handler(), buf: buf}), buf
}

func (h *selfLogHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn || h.inner.Enabled(ctx, l)
}

func (h *selfLogHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		rec := selfLogRecord{t: r.Time, level: r.Level, msg: redactAttr(slog.String("msg", r.Message)).Value.String(), attrs: slices.Clone(h.attrs)}
		r.Attrs(func(a slog.Attr) bool {
			rec.attrs = appendFlat(rec.attrs, h.prefix, a)
			return true
		})
		rec.size = len(rec.msg)
		for _, a := range rec.attrs {
			rec.size += len(a[0]) + len(a[1]) + 8
		}
		h.buf.add(rec)
	}
	if h.inner.Enabled(ctx, r.Level) {
		return h.inner.Handle(ctx, r)
	}
	return nil
}

// appendFlat appends a (groups flattened into dotted keys) as strings,
// through redactAttr as the log itself is.
func appendFlat(out [][2]string, prefix string, a slog.Attr) [][2]string {
	a.Value = a.Value.Resolve()
	if a.Value.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += a.Key + "."
		}
		for _, g := range a.Value.Group() {
			out = appendFlat(out, p, g)
		}
		return out
	}
	if a.Key == "" {
		return out
	}
	a = redactAttr(a)
	return append(out, [2]string{prefix + a.Key, a.Value.String()})
}

func (h *selfLogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	n := *h
	n.inner = h.inner.WithAttrs(attrs)
	n.attrs = slices.Clone(h.attrs)
	for _, a := range attrs {
		n.attrs = appendFlat(n.attrs, h.prefix, a)
	}
	return &n
}

func (h *selfLogHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	n := *h
	n.inner = h.inner.WithGroup(name)
	n.prefix = h.prefix + name + "."
	return &n
}

// severity maps a slog level to an OTLP SeverityNumber (the logs data
// model's mapping: WARN 13, ERROR 17, each slog step of 1 one number).
func severity(l slog.Level) int32 {
	return int32(min(max(l+9, 1), 24))
}

// encodeSelfLogs converts records to an ExportLogsServiceRequest.
func encodeSelfLogs(recs []selfLogRecord, resource []byte) []byte {
	var m easyproto.Marshaler
	req := m.MessageMarshaler()
	rl := req.AppendMessage(otlppb.LogsDataResourceLogs)
	rl.AppendBytes(otlppb.ResourceLogsResource, resource)
	sl := rl.AppendMessage(otlppb.ResourceLogsScopeLogs)
	appendScope(sl, otlppb.ScopeLogsScope)
	now := uint64(time.Now().UnixNano())
	for _, r := range recs {
		lr := sl.AppendMessage(otlppb.ScopeLogsLogRecords)
		if !r.t.IsZero() {
			lr.AppendFixed64(otlppb.LogRecordTimeUnixNano, uint64(r.t.UnixNano()))
		}
		lr.AppendFixed64(otlppb.LogRecordObservedTimeUnixNano, now)
		lr.AppendInt32(otlppb.LogRecordSeverityNumber, severity(r.level))
		lr.AppendString(otlppb.LogRecordSeverityText, r.level.String())
		lr.AppendMessage(otlppb.LogRecordBody).AppendString(otlppb.AnyValueStringValue, r.msg)
		appendAttrs(lr, otlppb.LogRecordAttributes, r.attrs)
	}
	return m.Marshal(nil)
}
