package stefreceiver

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/otlp-lite/otlp-lite/internal/pbappend"
	"math"

	"github.com/splunk/stef/go/otel/otelstef"
)

// maxAnyValueDepth bounds the nesting of an attribute value the decoder
// writes (arrays and key-value lists in each other): the pipeline's
// validation refuses deeper values anyway (otlpdecode), and the recursion
// here must not follow a hostile nesting down the stack.
const maxAnyValueDepth = 64

var (
	errTooDeep = errors.New("attribute value nested too deep")
	// errRecordTooLarge: the record writes more than recordLimit.
	errRecordTooLarge = errors.New("record decodes to more OTLP than a request may hold")
	errNilRef         = errors.New("record without resource, scope or metric")
)

// metricsBuilder turns a sequence of STEF Metrics records into one
// ExportMetricsServiceRequest. Consecutive records with the same resource,
// scope and metric share their ResourceMetrics, ScopeMetrics and Metric,
// which is how the writers order them (sorted by resource, scope, metric).
//
// Records are data points: each becomes one NumberDataPoint,
// HistogramDataPoint, ExponentialHistogramDataPoint or SummaryDataPoint.
// What STEF does not carry is not written: data point flags, and the
// Metric's type-specific fields not in its schema.
type metricsBuilder struct {
	rec *otelstef.Metrics // the reader's record, which add appends
	out []byte            // the request so far: closed ResourceMetrics
	// Open containers (At < 0 when none), and the content sizes of the
	// last ones closed: the next is opened with room for a length of
	// that size (pbappend.OpenLenFor), closed without moving its
	// content when the guess holds.
	rm, sm, m, data                 pbappend.Len
	rmSize, smSize, mSize, dataSize int
	// The resource, scope and metric of the open containers.
	res   otelstef.Resource
	scope otelstef.Scope
	met   otelstef.Metric
	// points counts the data points of the request.
	points int
	// attrs is the last record's point attributes as written.
	attrs attrCache
	// last is the size of the recent requests finished (highWater,
	// outBuffer).
	last int
	// maxRecord bounds what a record writes (recordLimit).
	maxRecord int
}

func (b *metricsBuilder) reset(buf []byte) {
	b.out = outBuffer(buf, b.last)
	b.rm, b.sm, b.m, b.data = pbappend.NoLen, pbappend.NoLen, pbappend.NoLen, pbappend.NoLen
	b.points = 0
}

func (b *metricsBuilder) closeMetric() {
	if b.m.At < 0 {
		return
	}
	b.dataSize = b.data.Content(b.out)
	b.out = pbappend.CloseLenFor(b.out, b.data)
	b.mSize = b.m.Content(b.out)
	b.out = pbappend.CloseLenFor(b.out, b.m)
	b.m, b.data = pbappend.NoLen, pbappend.NoLen
}

func (b *metricsBuilder) closeScope() {
	b.closeMetric()
	if b.sm.At < 0 {
		return
	}
	b.smSize = b.sm.Content(b.out)
	b.out = pbappend.CloseLenFor(b.out, b.sm)
	b.sm = pbappend.NoLen
}

func (b *metricsBuilder) closeResource() {
	b.closeScope()
	if b.rm.At < 0 {
		return
	}
	b.rmSize = b.rm.Content(b.out)
	b.out = pbappend.CloseLenFor(b.out, b.rm)
	b.rm = pbappend.NoLen
}

// finish closes every open container and returns the request.
func (b *metricsBuilder) finish() []byte {
	b.closeResource()
	if len(b.out) > 0 {
		b.last = highWater(b.last, len(b.out))
	}
	return b.out
}

// buf is the buffer the request is built in (stream.idle).
func (b *metricsBuilder) buf() *[]byte { return &b.out }

func (b *metricsBuilder) items() int { return b.points }

func (b *metricsBuilder) setMaxRecord(n int) { b.maxRecord = n }
func (b *metricsBuilder) size() int          { return len(b.out) }

// add appends the reader's record.
func (b *metricsBuilder) add() (err error) {
	r := b.rec
	if b.out == nil {
		b.out = firstBuffer(b.last)
	}
	// The last record's attributes as written are this one's when it
	// did not modify them; they are kept only for a record written whole.
	b.attrs.reuse = b.attrs.ok && fastPaths && !r.IsAttributesModified()
	b.attrs.ok = false
	start, rm0, sm0, m0, data0 := len(b.out), b.rm, b.sm, b.m, b.data
	lim := recordLimit(start, b.maxRecord)
	// closed marks where the record's own bytes begin once it has closed
	// the previous record's containers (a close moves bytes: the record
	// cannot go back to before it).
	closed := func() { start, rm0, sm0, m0, data0 = len(b.out), b.rm, b.sm, b.m, b.data }
	defer func() {
		if err != nil {
			// Nothing of a bad record stays: the containers open before
			// it are closed (their lengths written), and the next record
			// opens its own.
			b.out, b.rm, b.sm, b.m, b.data = b.out[:start], rm0, sm0, m0, data0
			b.closeResource()
		}
	}()
	// A dictionary reference 0 decodes to nil: not something a writer
	// makes, and not something to follow.
	if r.Resource() == nil || r.Scope() == nil || r.Metric() == nil {
		return errNilRef
	}
	// A field the record did not carry (not modified) is the previous
	// record's, which the open container was compared with or copied
	// from: the comparison is needed only for a field it carried.
	if b.rm.At < 0 || (!fastPaths || r.IsResourceModified()) && !b.res.IsEqual(r.Resource()) {
		if b.rm.At >= 0 {
			b.closeResource()
			closed()
		}
		b.res.CopyFrom(r.Resource())
		b.out, b.rm = pbappend.OpenLenFor(b.out, 1, b.rmSize) // ResourceMetrics
		// schema_url (3) before scope_metrics (2): the order of fields
		// is free, and the container is then closed by its length alone.
		b.out = pbappend.StringNonEmpty(b.out, 3, r.Resource().SchemaURL())
		if b.out, err = appendResource(b.out, r.Resource(), lim); err != nil {
			return err
		}
	}
	if b.sm.At < 0 || (!fastPaths || r.IsScopeModified()) && !b.scope.IsEqual(r.Scope()) {
		if b.sm.At >= 0 {
			b.closeScope()
			closed()
		}
		b.scope.CopyFrom(r.Scope())
		b.out, b.sm = pbappend.OpenLenFor(b.out, 2, b.smSize) // ScopeMetrics
		b.out = pbappend.StringNonEmpty(b.out, 3, r.Scope().SchemaURL())
		if b.out, err = appendScope(b.out, r.Scope(), lim); err != nil {
			return err
		}
	}
	m := r.Metric()
	if b.m.At < 0 || (!fastPaths || r.IsMetricModified()) && !b.met.IsEqual(m) {
		if b.m.At >= 0 {
			b.closeMetric()
			closed()
		}
		b.met.CopyFrom(m)
		b.out, b.m = pbappend.OpenLenFor(b.out, 2, b.mSize) // Metric
		b.out = pbappend.StringNonEmpty(b.out, 1, m.Name())
		b.out = pbappend.StringNonEmpty(b.out, 2, m.Description())
		b.out = pbappend.StringNonEmpty(b.out, 3, m.Unit())
		if b.out, err = appendAttributes(b.out, 12, m.Metadata(), lim); err != nil {
			return fmt.Errorf("cannot decode metric: %w", err)
		}
		field, ok := dataField(m.Type())
		if !ok {
			return fmt.Errorf("cannot decode metric: unknown metric type %d", m.Type())
		}
		b.out, b.data = pbappend.OpenLenFor(b.out, field, b.dataSize)
		switch m.Type() {
		case otelstef.MetricTypeSum:
			b.out = pbappend.VarintField(b.out, 2, uint64(m.AggregationTemporality()))
			if m.Monotonic() {
				b.out = pbappend.VarintField(b.out, 3, 1)
			}
		case otelstef.MetricTypeHistogram, otelstef.MetricTypeExpHistogram:
			b.out = pbappend.VarintField(b.out, 2, uint64(m.AggregationTemporality()))
		}
	}
	if b.out, err = appendPoint(b.out, m, r.Attributes(), r.Point(), &b.attrs, lim); err != nil {
		return fmt.Errorf("cannot decode data point: %w", err)
	}
	if len(b.out) > lim {
		return fmt.Errorf("cannot decode data point: %w", errRecordTooLarge)
	}
	b.points++
	return nil
}

// appendNumberFields appends a NumberDataPoint's timestamps and value.
func appendNumberFields(b []byte, p *otelstef.Point, v *otelstef.PointValue) []byte {
	b = pbappend.Fixed64Field(b, 2, p.StartTimestamp())
	b = pbappend.Fixed64Field(b, 3, p.Timestamp())
	switch v.Type() {
	case otelstef.PointValueTypeFloat64:
		b = pbappend.DoubleField(b, 4, v.Float64())
	case otelstef.PointValueTypeInt64:
		b = pbappend.Fixed64Field(b, 6, uint64(v.Int64()))
	}
	return b
}

// attrCache keeps the encoding of a record's point attributes for the next
// record, which the STEF writer marks as not modifying them when they are
// the same (a third of the OpenTelemetry demo's points: the series of
// consecutive metrics of a resource): copied, not encoded again. Only the
// number data points' (the fast path's, field 7) are kept.
type attrCache struct {
	buf []byte // the KeyValues, with their tags
	// pointSize is the size of the last number data point written
	// (appendPoint's guess for the next).
	pointSize int
	// ok: buf is the last record's attributes (it was written whole);
	// reuse: they are the current record's (it did not modify them).
	ok, reuse bool
}

// append appends attrs as field 7, from the cache when they are the last
// record's, and keeps them for the next.
func (c *attrCache) append(b []byte, attrs *otelstef.Attributes, lim int) ([]byte, error) {
	if c.reuse {
		c.ok = true
		return append(b, c.buf...), nil
	}
	start := len(b)
	b, err := appendAttributes(b, 7, attrs, lim)
	if err != nil || len(b)-start > maxCachedAttrs {
		return b, err
	}
	c.buf = append(c.buf[:0], b[start:]...)
	c.ok = true
	return b, nil
}

// maxCachedAttrs bounds the attributes attrCache keeps, which a stream
// holds for its life: a point's attributes take a few hundred bytes, and
// a record's are bounded only by its frame (MaxChunkBytes).
const maxCachedAttrs = 4 << 10

// appendResource appends res as field 1 (resource) of a Resource*.
func appendResource(b []byte, res *otelstef.Resource, lim int) (_ []byte, err error) {
	at := 0
	b, at = pbappend.OpenLen(b, 1)
	if b, err = appendAttributes(b, 1, res.Attributes(), lim); err != nil {
		return b, fmt.Errorf("cannot decode resource: %w", err)
	}
	if n := res.DroppedAttributesCount(); n > 0 {
		b = pbappend.VarintField(b, 2, n)
	}
	return pbappend.CloseLen(b, at), nil
}

// appendScope appends s as field 1 (scope) of a Scope*.
func appendScope(b []byte, s *otelstef.Scope, lim int) (_ []byte, err error) {
	at := 0
	b, at = pbappend.OpenLen(b, 1)
	b = pbappend.StringNonEmpty(b, 1, s.Name())
	b = pbappend.StringNonEmpty(b, 2, s.Version())
	if b, err = appendAttributes(b, 3, s.Attributes(), lim); err != nil {
		return b, fmt.Errorf("cannot decode scope: %w", err)
	}
	if n := s.DroppedAttributesCount(); n > 0 {
		b = pbappend.VarintField(b, 4, n)
	}
	return pbappend.CloseLen(b, at), nil
}

// dataField is the Metric field of a metric type's data.
func dataField(t otelstef.MetricType) (int, bool) {
	switch t {
	case otelstef.MetricTypeGauge:
		return 5, true
	case otelstef.MetricTypeSum:
		return 7, true
	case otelstef.MetricTypeHistogram:
		return 9, true
	case otelstef.MetricTypeExpHistogram:
		return 10, true
	case otelstef.MetricTypeSummary:
		return 11, true
	}
	return 0, false
}

// appendPoint appends the data point of a record as field 1 (data_points)
// of the open Gauge, Sum, Histogram, ExponentialHistogram or Summary.
func appendPoint(b []byte, m *otelstef.Metric, attrs *otelstef.Attributes, p *otelstef.Point, cache *attrCache, lim int) (_ []byte, err error) {
	v := p.Value()
	if fastPaths && (m.Type() == otelstef.MetricTypeGauge || m.Type() == otelstef.MetricTypeSum) && p.Exemplars().Len() == 0 {
		// A NumberDataPoint without exemplars, the common one: its
		// length is given room for the last such point's (a series'
		// points are of a size), so that it is closed without moving
		// it, and its attributes are written once, or copied from the
		// last point's (attrCache). Their sizes were computed in a
		// pass of their own before (a tenth of the decoding).
		switch v.Type() {
		case otelstef.PointValueTypeFloat64, otelstef.PointValueTypeInt64, otelstef.PointValueTypeNone:
		default:
			return b, fmt.Errorf("value type %d in a number metric", v.Type())
		}
		if cache.reuse {
			// Its attributes are the last point's: its size is
			// known before it is written.
			size := 9 + 9 + len(cache.buf) // the two timestamps, the attributes
			if v.Type() != otelstef.PointValueTypeNone {
				size += 9
			}
			if len(b)+size+1+binary.MaxVarintLen64 > lim {
				return b, errRecordTooLarge
			}
			b = pbappend.Tag(b, 1, 2)
			b = pbappend.Varint(b, uint64(size))
			b = appendNumberFields(b, p, v)
			cache.ok, cache.pointSize = true, size
			return append(b, cache.buf...), nil
		}
		var l pbappend.Len
		b, l = pbappend.OpenLenFor(b, 1, cache.pointSize)
		b = appendNumberFields(b, p, v)
		if b, err = cache.append(b, attrs, lim); err != nil {
			return b, err
		}
		cache.pointSize = l.Content(b)
		return pbappend.CloseLenFor(b, l), nil
	}
	// The numbers of a histogram's bounds, which come with its metric
	// (a dictionary entry any number of points refer to), and of its
	// buckets and quantiles, 8 or 9 bytes each.
	n := m.HistogramBounds().Len()
	switch v.Type() {
	case otelstef.PointValueTypeHistogram:
		n += v.Histogram().BucketCounts().Len()
	case otelstef.PointValueTypeSummary:
		n += 2 * v.Summary().QuantileValues().Len()
	}
	if len(b)+9*n > lim {
		return b, errRecordTooLarge
	}
	at := 0
	b, at = pbappend.OpenLen(b, 1)
	switch m.Type() {
	case otelstef.MetricTypeGauge, otelstef.MetricTypeSum:
		// NumberDataPoint
		b = pbappend.Fixed64Field(b, 2, p.StartTimestamp())
		b = pbappend.Fixed64Field(b, 3, p.Timestamp())
		switch v.Type() {
		case otelstef.PointValueTypeFloat64:
			b = pbappend.DoubleField(b, 4, v.Float64())
		case otelstef.PointValueTypeInt64:
			b = pbappend.Fixed64Field(b, 6, uint64(v.Int64()))
		case otelstef.PointValueTypeNone:
		default:
			return b, fmt.Errorf("value type %d in a number metric", v.Type())
		}
		if b, err = appendExemplars(b, 5, p.Exemplars(), lim); err != nil {
			return b, err
		}
		if b, err = appendAttributes(b, 7, attrs, lim); err != nil {
			return b, err
		}
	case otelstef.MetricTypeHistogram:
		if v.Type() != otelstef.PointValueTypeHistogram {
			return b, fmt.Errorf("value type %d in a histogram", v.Type())
		}
		h := v.Histogram()
		// As the pipeline's validation (otlpdecode.CheckMetrics),
		// metrics.proto: bucket_counts has one element more than
		// explicit_bounds, or none.
		if n, bounds := h.BucketCounts().Len(), m.HistogramBounds().Len(); n != 0 && n != bounds+1 {
			return b, fmt.Errorf("histogram of %d bucket counts for %d bounds, want none or %d", n, bounds, bounds+1)
		}
		b = pbappend.Fixed64Field(b, 2, p.StartTimestamp())
		b = pbappend.Fixed64Field(b, 3, p.Timestamp())
		b = pbappend.Fixed64Field(b, 4, uint64(h.Count()))
		if h.HasSum() {
			b = pbappend.DoubleField(b, 5, h.Sum())
		}
		if n := h.BucketCounts().Len(); n > 0 {
			b = pbappend.Tag(b, 6, 2)
			b = pbappend.Varint(b, uint64(8*n))
			for i := range n {
				b = pbappend.Fixed64(b, h.BucketCounts().At(i))
			}
		}
		if bounds := m.HistogramBounds(); bounds.Len() > 0 {
			b = pbappend.Tag(b, 7, 2)
			b = pbappend.Varint(b, uint64(8*bounds.Len()))
			for i := range bounds.Len() {
				b = pbappend.Fixed64(b, math.Float64bits(bounds.At(i)))
			}
		}
		if b, err = appendExemplars(b, 8, p.Exemplars(), lim); err != nil {
			return b, err
		}
		if b, err = appendAttributes(b, 9, attrs, lim); err != nil {
			return b, err
		}
		if h.HasMin() {
			b = pbappend.DoubleField(b, 11, h.Min())
		}
		if h.HasMax() {
			b = pbappend.DoubleField(b, 12, h.Max())
		}
	case otelstef.MetricTypeExpHistogram:
		if v.Type() != otelstef.PointValueTypeExpHistogram {
			return b, fmt.Errorf("value type %d in an exponential histogram", v.Type())
		}
		h := v.ExpHistogram()
		if b, err = appendAttributes(b, 1, attrs, lim); err != nil {
			return b, err
		}
		b = pbappend.Fixed64Field(b, 2, p.StartTimestamp())
		b = pbappend.Fixed64Field(b, 3, p.Timestamp())
		b = pbappend.Fixed64Field(b, 4, h.Count())
		if h.HasSum() {
			b = pbappend.DoubleField(b, 5, h.Sum())
		}
		b = pbappend.VarintField(b, 6, pbappend.Zigzag(h.Scale()))
		b = pbappend.Fixed64Field(b, 7, h.ZeroCount())
		b = appendBuckets(b, 8, h.PositiveBuckets())
		b = appendBuckets(b, 9, h.NegativeBuckets())
		if b, err = appendExemplars(b, 11, p.Exemplars(), lim); err != nil {
			return b, err
		}
		if h.HasMin() {
			b = pbappend.DoubleField(b, 12, h.Min())
		}
		if h.HasMax() {
			b = pbappend.DoubleField(b, 13, h.Max())
		}
		if z := h.ZeroThreshold(); z != 0 {
			b = pbappend.DoubleField(b, 14, z)
		}
	case otelstef.MetricTypeSummary:
		if v.Type() != otelstef.PointValueTypeSummary {
			return b, fmt.Errorf("value type %d in a summary", v.Type())
		}
		s := v.Summary()
		b = pbappend.Fixed64Field(b, 2, p.StartTimestamp())
		b = pbappend.Fixed64Field(b, 3, p.Timestamp())
		b = pbappend.Fixed64Field(b, 4, s.Count())
		b = pbappend.DoubleField(b, 5, s.Sum())
		q := s.QuantileValues()
		for i := range q.Len() {
			var qa int
			b, qa = pbappend.OpenLen(b, 6)
			b = pbappend.DoubleField(b, 1, q.At(i).Quantile())
			b = pbappend.DoubleField(b, 2, q.At(i).Value())
			b = pbappend.CloseLen(b, qa)
		}
		if b, err = appendAttributes(b, 7, attrs, lim); err != nil {
			return b, err
		}
	}
	return pbappend.CloseLen(b, at), nil
}

func appendBuckets(b []byte, field int, bk *otelstef.ExpHistogramBuckets) []byte {
	at := 0
	b, at = pbappend.OpenLen(b, field)
	b = pbappend.VarintField(b, 1, pbappend.Zigzag(bk.Offset()))
	if n := bk.BucketCounts().Len(); n > 0 {
		var p int
		b, p = pbappend.OpenLen(b, 2)
		for i := range n {
			b = pbappend.Varint(b, bk.BucketCounts().At(i))
		}
		b = pbappend.CloseLen(b, p)
	}
	return pbappend.CloseLen(b, at)
}

func appendExemplars(b []byte, field int, ex *otelstef.ExemplarArray, lim int) (_ []byte, err error) {
	for i := range ex.Len() {
		if len(b) > lim {
			return b, errRecordTooLarge
		}
		e := ex.At(i)
		// As the pipeline's validation (otlpdecode.CheckMetrics): an
		// exemplar's ids are empty or of their length.
		if n := len(e.TraceID()); n != 0 && n != 16 {
			return b, fmt.Errorf("exemplar %d: trace_id is %d bytes, want empty or 16", i, n)
		}
		if n := len(e.SpanID()); n != 0 && n != 8 {
			return b, fmt.Errorf("exemplar %d: span_id is %d bytes, want empty or 8", i, n)
		}
		at := 0
		b, at = pbappend.OpenLen(b, field)
		b = pbappend.Fixed64Field(b, 2, e.Timestamp())
		switch e.Value().Type() {
		case otelstef.ExemplarValueTypeFloat64:
			b = pbappend.DoubleField(b, 3, e.Value().Float64())
		case otelstef.ExemplarValueTypeInt64:
			b = pbappend.Fixed64Field(b, 6, uint64(e.Value().Int64()))
		}
		if id := e.SpanID(); len(id) > 0 {
			b = pbappend.StringField(b, 4, string(id))
		}
		if id := e.TraceID(); len(id) > 0 {
			b = pbappend.StringField(b, 5, string(id))
		}
		if b, err = appendAttributes(b, 7, e.FilteredAttributes(), lim); err != nil {
			return b, err
		}
		b = pbappend.CloseLen(b, at)
	}
	return b, nil
}

// appendAttributes appends each attribute as a KeyValue in field.
func appendAttributes(b []byte, field int, a *otelstef.Attributes, lim int) (_ []byte, err error) {
	for i := range a.Len() {
		if len(b)+len(a.Key(i)) > lim {
			return b, errRecordTooLarge
		}
		if v := a.Value(i); fastPaths && v.Type() == otelstef.AnyValueTypeString {
			// A string value, the most common: its KeyValue
			// written in one go, sizes and all.
			key, str := a.Key(i), v.String()
			vs := 1 + pbappend.UvarintLen(uint64(len(str))) + len(str)
			kv := keyValueSize(len(key), vs)
			if len(b)+kv > lim {
				return b, errRecordTooLarge
			}
			b = pbappend.Tag(b, field, 2)
			b = pbappend.Varint(b, uint64(kv))
			b = pbappend.StringField(b, 1, key)
			b = pbappend.Tag(b, 2, 2)
			b = pbappend.Varint(b, uint64(vs))
			b = pbappend.StringField(b, 1, str)
			continue
		}
		if vs, ok := scalarValueSize(a.Value(i)); ok && fastPaths {
			key := a.Key(i)
			kv := keyValueSize(len(key), vs)
			if len(b)+kv > lim {
				return b, errRecordTooLarge
			}
			b = pbappend.Tag(b, field, 2)
			b = pbappend.Varint(b, uint64(kv))
			b = pbappend.StringField(b, 1, key)
			b = pbappend.Tag(b, 2, 2)
			b = pbappend.Varint(b, uint64(vs))
			b = appendScalarValue(b, a.Value(i))
			continue
		}
		at := 0
		b, at = pbappend.OpenLen(b, field)
		b = pbappend.StringField(b, 1, a.Key(i))
		if b, err = appendAnyValueField(b, 2, a.Value(i), 0, lim); err != nil {
			return b, err
		}
		b = pbappend.CloseLen(b, at)
	}
	return b, nil
}

func appendAnyValueField(b []byte, field int, v *otelstef.AnyValue, depth, lim int) (_ []byte, err error) {
	if depth >= maxAnyValueDepth {
		return b, errTooDeep
	}
	if len(b) > lim || len(b)+len(v.String())+len(v.Bytes()) > lim {
		return b, errRecordTooLarge
	}
	at := 0
	b, at = pbappend.OpenLen(b, field)
	switch v.Type() {
	case otelstef.AnyValueTypeString:
		b = pbappend.StringField(b, 1, v.String())
	case otelstef.AnyValueTypeBool:
		x := uint64(0)
		if v.Bool() {
			x = 1
		}
		b = pbappend.VarintField(b, 2, x)
	case otelstef.AnyValueTypeInt64:
		b = pbappend.VarintField(b, 3, uint64(v.Int64()))
	case otelstef.AnyValueTypeFloat64:
		b = pbappend.DoubleField(b, 4, v.Float64())
	case otelstef.AnyValueTypeArray:
		arr := v.Array()
		var aa int
		b, aa = pbappend.OpenLen(b, 5)
		for i := range arr.Len() {
			if b, err = appendAnyValueField(b, 1, arr.At(i), depth+1, lim); err != nil {
				return b, err
			}
		}
		b = pbappend.CloseLen(b, aa)
	case otelstef.AnyValueTypeKVList:
		kv := v.KVList()
		var ka int
		b, ka = pbappend.OpenLen(b, 6)
		for i := range kv.Len() {
			if len(b)+len(kv.Key(i)) > lim {
				return b, errRecordTooLarge
			}
			var e int
			b, e = pbappend.OpenLen(b, 1)
			b = pbappend.StringField(b, 1, kv.Key(i))
			if b, err = appendAnyValueField(b, 2, kv.Value(i), depth+1, lim); err != nil {
				return b, err
			}
			b = pbappend.CloseLen(b, e)
		}
		b = pbappend.CloseLen(b, ka)
	case otelstef.AnyValueTypeBytes:
		b = pbappend.StringField(b, 7, string(v.Bytes()))
	}
	return pbappend.CloseLen(b, at), nil
}
