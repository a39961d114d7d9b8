package bench

import (
	"errors"
	"math"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otlp-lite/otlp-lite/otlpview"
)

// The walks below read every field of every item, so that the visitor
// benchmarks pay for what pdata's Unmarshal materialises. They fold what
// they read into a checksum so that the compiler cannot drop the reads.

// sink keeps the checksums alive.
var sink uint64

func sumBytes(b []byte) uint64 {
	if len(b) == 0 {
		return 0
	}
	return uint64(len(b)) + uint64(b[0]) + uint64(b[len(b)-1])
}

// sumID folds an id; an all-zero id counts as absent, since pdata reports an
// absent id as zeros while the views report it as empty.
func sumID(b []byte) uint64 {
	for _, c := range b {
		if c != 0 {
			return sumBytes(b)
		}
	}
	return 0
}

func sumString(s string) uint64 {
	if len(s) == 0 {
		return 0
	}
	return uint64(len(s)) + uint64(s[0]) + uint64(s[len(s)-1])
}

// walker carries the iterator errors of a visitor walk: views' iterators
// report malformed input through Err, which a real consumer must check.
type walker struct {
	sum uint64
	err error
	// lastRes and lastScope identify the resource and scope last walked
	// (by where their bytes start in the request), so that they are walked
	// once per ResourceSpans/ScopeSpans rather than once per span, as a
	// real consumer would.
	lastRes, lastScope *byte
}

func (w *walker) reset() {
	w.sum, w.err, w.lastRes, w.lastScope = 0, nil, nil, nil
}

func (w *walker) setErr(err error) {
	if err != nil && w.err == nil {
		w.err = err
	}
}

func (w *walker) value(v *otlpview.AnyValue) {
	switch v.Kind() {
	case otlpview.KindString:
		w.sum += sumString(v.Str())
	case otlpview.KindBool:
		if v.Bool() {
			w.sum++
		}
	case otlpview.KindInt:
		w.sum += uint64(v.Int())
	case otlpview.KindDouble:
		w.sum += math.Float64bits(v.Double())
	case otlpview.KindBytes:
		w.sum += sumBytes(v.Bytes())
	case otlpview.KindArray:
		it := v.Array().Iter()
		for it.Next() {
			w.value(it.Value())
		}
		w.setErr(it.Err())
	case otlpview.KindKVList:
		w.kvs(v.KVList())
	}
}

func (w *walker) kvs(kvs otlpview.KeyValues) {
	it := kvs.Iter()
	for it.Next() {
		kv := it.KeyValue()
		w.sum += sumString(kv.Key)
		w.value(&kv.Value)
	}
	w.setErr(it.Err())
}

// resourceID tells apart the resources of a request by where their bytes
// are: the schema_url of their ResourceSpans when set (free), else their
// first attribute key (one KeyValue decode).
func resourceID(res *otlpview.Resource) *byte {
	if res.SchemaURL != "" {
		return unsafe.StringData(res.SchemaURL)
	}
	it := res.Attributes.Iter()
	if it.Next() {
		return unsafe.StringData(it.KeyValue().Key)
	}
	return nil
}

func (w *walker) strings(ss otlpview.Strings) {
	it := ss.Iter()
	for it.Next() {
		w.sum += sumString(it.String())
	}
	w.setErr(it.Err())
}

func (w *walker) resourceScope(res *otlpview.Resource, scope *otlpview.Scope) {
	if p := resourceID(res); p == nil || p != w.lastRes {
		w.lastRes = p
		w.lastScope = nil
		w.kvs(res.Attributes)
		w.sum += uint64(res.DroppedAttributesCount) + sumString(res.SchemaURL)
		it := res.EntityRefs.Iter()
		for it.Next() {
			e := it.EntityRef()
			w.sum += sumString(e.SchemaURL) + sumString(e.Type)
			w.strings(e.IDKeys)
			w.strings(e.DescriptionKeys)
		}
		w.setErr(it.Err())
	}
	if p := unsafe.StringData(scope.Name); p == nil || p != w.lastScope {
		w.lastScope = p
		w.sum += sumString(scope.Name) + sumString(scope.Version) + sumString(scope.SchemaURL)
		w.kvs(scope.Attributes)
		w.sum += uint64(scope.DroppedAttributesCount)
	}
}

func (w *walker) span(res *otlpview.Resource, scope *otlpview.Scope, s *otlpview.Span) error {
	w.resourceScope(res, scope)
	w.sum += sumID(s.TraceID) + sumID(s.SpanID) + sumID(s.ParentSpanID) + sumString(s.TraceState)
	w.sum += uint64(s.Flags) + sumString(s.Name) + uint64(s.Kind) + s.StartTimeUnixNano + s.EndTimeUnixNano
	w.kvs(s.Attributes)
	w.sum += uint64(s.DroppedAttributesCount) + uint64(s.DroppedEventsCount) + uint64(s.DroppedLinksCount)
	evs := s.Events.Iter()
	for evs.Next() {
		e := evs.Event()
		w.sum += e.TimeUnixNano + sumString(e.Name) + uint64(e.DroppedAttributesCount)
		w.kvs(e.Attributes)
	}
	w.setErr(evs.Err())
	links := s.Links.Iter()
	for links.Next() {
		l := links.Link()
		w.sum += sumID(l.TraceID) + sumID(l.SpanID) + sumString(l.TraceState)
		w.sum += uint64(l.DroppedAttributesCount) + uint64(l.Flags)
		w.kvs(l.Attributes)
	}
	w.setErr(links.Err())
	w.sum += sumString(s.Status.Message) + uint64(s.Status.Code)
	return nil
}

func (w *walker) exemplars(es otlpview.Exemplars) {
	it := es.Iter()
	for it.Next() {
		e := it.Exemplar()
		w.kvs(e.FilteredAttributes)
		w.sum += e.TimeUnixNano + math.Float64bits(e.AsDouble) + uint64(e.AsInt)
		w.sum += sumID(e.SpanID) + sumID(e.TraceID)
	}
	w.setErr(it.Err())
}

// metric walks a metric and its data points; items counts the data points.
func (w *walker) metric(res *otlpview.Resource, scope *otlpview.Scope, m *otlpview.Metric) (items int) {
	w.resourceScope(res, scope)
	w.sum += sumString(m.Name) + sumString(m.Description) + sumString(m.Unit)
	w.kvs(m.Metadata)
	w.sum += uint64(m.Type) + uint64(m.AggregationTemporality)
	if m.IsMonotonic {
		w.sum++
	}
	switch m.Type {
	case otlpview.MetricTypeGauge, otlpview.MetricTypeSum:
		it := m.NumberDataPoints()
		for it.Next() {
			p := it.Point()
			items++
			w.kvs(p.Attributes)
			w.sum += p.StartTimeUnixNano + p.TimeUnixNano
			w.sum += math.Float64bits(p.AsDouble) + uint64(p.AsInt) + uint64(p.Flags)
			w.exemplars(p.Exemplars)
		}
		w.setErr(it.Err())
	case otlpview.MetricTypeHistogram:
		it := m.HistogramDataPoints()
		for it.Next() {
			p := it.Point()
			items++
			w.kvs(p.Attributes)
			w.sum += p.StartTimeUnixNano + p.TimeUnixNano + p.Count + math.Float64bits(p.Sum)
			for _, c := range p.BucketCounts {
				w.sum += c
			}
			for _, b := range p.ExplicitBounds {
				w.sum += math.Float64bits(b)
			}
			w.exemplars(p.Exemplars)
			w.sum += uint64(p.Flags) + math.Float64bits(p.Min) + math.Float64bits(p.Max)
			if p.HasSum && p.HasMin && p.HasMax {
				w.sum++
			}
		}
		w.setErr(it.Err())
	case otlpview.MetricTypeExponentialHistogram:
		it := m.ExponentialHistogramDataPoints()
		for it.Next() {
			p := it.Point()
			items++
			w.kvs(p.Attributes)
			w.sum += p.StartTimeUnixNano + p.TimeUnixNano + p.Count + math.Float64bits(p.Sum)
			w.sum += uint64(p.Scale) + p.ZeroCount + math.Float64bits(p.ZeroThreshold)
			for _, b := range [2]otlpview.Buckets{p.Positive, p.Negative} {
				w.sum += uint64(b.Offset)
				for _, c := range b.BucketCounts {
					w.sum += c
				}
			}
			w.exemplars(p.Exemplars)
			w.sum += uint64(p.Flags) + math.Float64bits(p.Min) + math.Float64bits(p.Max)
			if p.HasSum && p.HasMin && p.HasMax {
				w.sum++
			}
		}
		w.setErr(it.Err())
	case otlpview.MetricTypeSummary:
		it := m.SummaryDataPoints()
		for it.Next() {
			p := it.Point()
			items++
			w.kvs(p.Attributes)
			w.sum += p.StartTimeUnixNano + p.TimeUnixNano + p.Count + math.Float64bits(p.Sum) + uint64(p.Flags)
			qs := p.QuantileValues.Iter()
			for qs.Next() {
				q := qs.Quantile()
				w.sum += math.Float64bits(q.Quantile) + math.Float64bits(q.Value)
			}
			w.setErr(qs.Err())
		}
		w.setErr(it.Err())
	}
	return items
}

func (w *walker) logRecord(res *otlpview.Resource, scope *otlpview.Scope, r *otlpview.LogRecord) error {
	w.resourceScope(res, scope)
	w.sum += r.TimeUnixNano + r.ObservedTimeUnixNano + uint64(r.SeverityNumber) + sumString(r.SeverityText)
	w.value(&r.Body)
	w.kvs(r.Attributes)
	w.sum += uint64(r.DroppedAttributesCount) + uint64(r.Flags)
	w.sum += sumID(r.TraceID) + sumID(r.SpanID) + sumString(r.EventName)
	return nil
}

// tracesWalk holds a TracesDecoder and a walker with the callback bound
// once, so that the steady-state walk allocates nothing.
type tracesWalk struct {
	d  otlpview.TracesDecoder
	w  walker
	fn func(*otlpview.Resource, *otlpview.Scope, *otlpview.Span) error
	n  int
}

func newTracesWalk() *tracesWalk {
	t := &tracesWalk{}
	t.fn = func(res *otlpview.Resource, scope *otlpview.Scope, s *otlpview.Span) error {
		t.n++
		return t.w.span(res, scope, s)
	}
	return t
}

// walk visits every field of src and returns the number of spans.
func (t *tracesWalk) walk(src []byte) (int, error) {
	t.w.reset()
	t.n = 0
	if err := t.d.Decode(src, t.fn); err != nil {
		return 0, err
	}
	sink += t.w.sum
	return t.n, t.w.err
}

type metricsWalk struct {
	d  otlpview.MetricsDecoder
	w  walker
	fn func(*otlpview.Resource, *otlpview.Scope, *otlpview.Metric) error
	n  int
}

func newMetricsWalk() *metricsWalk {
	t := &metricsWalk{}
	t.fn = func(res *otlpview.Resource, scope *otlpview.Scope, m *otlpview.Metric) error {
		t.n += t.w.metric(res, scope, m)
		return nil
	}
	return t
}

// walk visits every field of src and returns the number of data points.
func (t *metricsWalk) walk(src []byte) (int, error) {
	t.w.reset()
	t.n = 0
	if err := t.d.Decode(src, t.fn); err != nil {
		return 0, err
	}
	sink += t.w.sum
	return t.n, t.w.err
}

type logsWalk struct {
	d  otlpview.LogsDecoder
	w  walker
	fn func(*otlpview.Resource, *otlpview.Scope, *otlpview.LogRecord) error
	n  int
}

func newLogsWalk() *logsWalk {
	t := &logsWalk{}
	t.fn = func(res *otlpview.Resource, scope *otlpview.Scope, r *otlpview.LogRecord) error {
		t.n++
		return t.w.logRecord(res, scope, r)
	}
	return t
}

// walk visits every field of src and returns the number of log records.
func (t *logsWalk) walk(src []byte) (int, error) {
	t.w.reset()
	t.n = 0
	if err := t.d.Decode(src, t.fn); err != nil {
		return 0, err
	}
	sink += t.w.sum
	return t.n, t.w.err
}

// The pdata walks read the same fields through pdata's accessors, for the
// "unmarshal then consume" comparison.

func pdataValue(v pcommon.Value) uint64 {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return sumString(v.Str())
	case pcommon.ValueTypeBool:
		if v.Bool() {
			return 1
		}
	case pcommon.ValueTypeInt:
		return uint64(v.Int())
	case pcommon.ValueTypeDouble:
		return math.Float64bits(v.Double())
	case pcommon.ValueTypeBytes:
		return sumBytes(v.Bytes().AsRaw())
	case pcommon.ValueTypeSlice:
		var sum uint64
		s := v.Slice()
		for i := range s.Len() {
			sum += pdataValue(s.At(i))
		}
		return sum
	case pcommon.ValueTypeMap:
		return pdataMap(v.Map())
	}
	return 0
}

func pdataMap(m pcommon.Map) uint64 {
	var sum uint64
	for k, v := range m.All() {
		sum += sumString(k) + pdataValue(v)
	}
	return sum
}

func pdataResourceScope(res pcommon.Resource, schemaURL string, scope pcommon.InstrumentationScope, scopeURL string) uint64 {
	return pdataMap(res.Attributes()) + uint64(res.DroppedAttributesCount()) + sumString(schemaURL) +
		sumString(scope.Name()) + sumString(scope.Version()) + pdataMap(scope.Attributes()) +
		uint64(scope.DroppedAttributesCount()) + sumString(scopeURL)
}

func pdataTraces(td ptrace.Traces) (n int, sum uint64) {
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		rs := rss.At(i)
		sss := rs.ScopeSpans()
		for j := range sss.Len() {
			ss := sss.At(j)
			sum += pdataResourceScope(rs.Resource(), rs.SchemaUrl(), ss.Scope(), ss.SchemaUrl())
			spans := ss.Spans()
			for k := range spans.Len() {
				s := spans.At(k)
				n++
				tid, sid, pid := s.TraceID(), s.SpanID(), s.ParentSpanID()
				sum += sumID(tid[:]) + sumID(sid[:]) + sumID(pid[:]) + sumString(s.TraceState().AsRaw())
				sum += uint64(s.Flags()) + sumString(s.Name()) + uint64(s.Kind())
				sum += uint64(s.StartTimestamp()) + uint64(s.EndTimestamp())
				sum += pdataMap(s.Attributes()) + uint64(s.DroppedAttributesCount())
				sum += uint64(s.DroppedEventsCount()) + uint64(s.DroppedLinksCount())
				evs := s.Events()
				for e := range evs.Len() {
					ev := evs.At(e)
					sum += uint64(ev.Timestamp()) + sumString(ev.Name()) + pdataMap(ev.Attributes()) + uint64(ev.DroppedAttributesCount())
				}
				links := s.Links()
				for l := range links.Len() {
					lk := links.At(l)
					ltid, lsid := lk.TraceID(), lk.SpanID()
					sum += sumID(ltid[:]) + sumID(lsid[:]) + sumString(lk.TraceState().AsRaw())
					sum += pdataMap(lk.Attributes()) + uint64(lk.DroppedAttributesCount()) + uint64(lk.Flags())
				}
				sum += sumString(s.Status().Message()) + uint64(s.Status().Code())
			}
		}
	}
	return n, sum
}

func pdataExemplars(es pmetric.ExemplarSlice) (sum uint64) {
	for i := range es.Len() {
		e := es.At(i)
		tid, sid := e.TraceID(), e.SpanID()
		sum += pdataMap(e.FilteredAttributes()) + uint64(e.Timestamp())
		sum += math.Float64bits(e.DoubleValue()) + uint64(e.IntValue()) + sumID(tid[:]) + sumID(sid[:])
	}
	return sum
}

func pdataNumberPoints(dps pmetric.NumberDataPointSlice) (n int, sum uint64) {
	for i := range dps.Len() {
		p := dps.At(i)
		n++
		sum += pdataMap(p.Attributes()) + uint64(p.StartTimestamp()) + uint64(p.Timestamp())
		sum += math.Float64bits(p.DoubleValue()) + uint64(p.IntValue()) + uint64(p.Flags()) + pdataExemplars(p.Exemplars())
	}
	return n, sum
}

func pdataMetrics(md pmetric.Metrics) (n int, sum uint64) {
	rms := md.ResourceMetrics()
	for i := range rms.Len() {
		rm := rms.At(i)
		sms := rm.ScopeMetrics()
		for j := range sms.Len() {
			sm := sms.At(j)
			sum += pdataResourceScope(rm.Resource(), rm.SchemaUrl(), sm.Scope(), sm.SchemaUrl())
			ms := sm.Metrics()
			for k := range ms.Len() {
				m := ms.At(k)
				sum += sumString(m.Name()) + sumString(m.Description()) + sumString(m.Unit()) + pdataMap(m.Metadata())
				sum += uint64(m.Type())
				var c int
				var s uint64
				switch m.Type() {
				case pmetric.MetricTypeGauge:
					c, s = pdataNumberPoints(m.Gauge().DataPoints())
				case pmetric.MetricTypeSum:
					sum += uint64(m.Sum().AggregationTemporality())
					if m.Sum().IsMonotonic() {
						sum++
					}
					c, s = pdataNumberPoints(m.Sum().DataPoints())
				case pmetric.MetricTypeHistogram:
					h := m.Histogram()
					sum += uint64(h.AggregationTemporality())
					dps := h.DataPoints()
					for d := range dps.Len() {
						p := dps.At(d)
						c++
						s += pdataMap(p.Attributes()) + uint64(p.StartTimestamp()) + uint64(p.Timestamp())
						s += p.Count() + math.Float64bits(p.Sum()) + uint64(p.Flags())
						s += math.Float64bits(p.Min()) + math.Float64bits(p.Max())
						if p.HasSum() && p.HasMin() && p.HasMax() {
							s++
						}
						for _, b := range p.BucketCounts().All() {
							s += b
						}
						for _, b := range p.ExplicitBounds().All() {
							s += math.Float64bits(b)
						}
						s += pdataExemplars(p.Exemplars())
					}
				case pmetric.MetricTypeExponentialHistogram, pmetric.MetricTypeSummary:
					// The payloads hold neither kind.
					panic(errors.New("pdataMetrics: unexpected metric type " + m.Type().String()))
				}
				n += c
				sum += s
			}
		}
	}
	return n, sum
}

func pdataLogs(ld plog.Logs) (n int, sum uint64) {
	rls := ld.ResourceLogs()
	for i := range rls.Len() {
		rl := rls.At(i)
		sls := rl.ScopeLogs()
		for j := range sls.Len() {
			sl := sls.At(j)
			sum += pdataResourceScope(rl.Resource(), rl.SchemaUrl(), sl.Scope(), sl.SchemaUrl())
			recs := sl.LogRecords()
			for k := range recs.Len() {
				r := recs.At(k)
				n++
				tid, sid := r.TraceID(), r.SpanID()
				sum += uint64(r.Timestamp()) + uint64(r.ObservedTimestamp()) + uint64(r.SeverityNumber())
				sum += sumString(r.SeverityText()) + pdataValue(r.Body()) + pdataMap(r.Attributes())
				sum += uint64(r.DroppedAttributesCount()) + uint64(r.Flags())
				sum += sumID(tid[:]) + sumID(sid[:]) + sumString(r.EventName())
			}
		}
	}
	return n, sum
}
