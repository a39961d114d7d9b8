//go:build otelarrow

package arrowreceiver

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/otlp-lite/otlp-lite/internal/pbappend"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	arrowpb "github.com/open-telemetry/otel-arrow/go/api/experimental/arrow/v1"
)

// metricsEncoder writes a batch's Arrow records as an OTLP
// ExportMetricsServiceRequest, reading the columns as otel-arrow's
// conversion (pkg/otel/metrics/otlp) reads them:
//
//   - the metrics record's resources and scopes as scopeWalker walks them;
//     a metric's id (a delta) keys its data points in the record of its
//     type (gauges and sums: number data points);
//   - a data point's parent id is a delta from the previous point's; its
//     own id (nullable, a delta over the points that have one) keys its
//     attributes and exemplars;
//   - an exemplar's parent id is a delta when it repeats the previous
//     exemplar's value (ExemplarParentIdDecoder), its attributes found by
//     a running id.
//
// As otel-arrow's conversion moves a parent's data points (and a point's
// exemplars) to the first metric (point) of that id, a later one of the
// same id gets none: taken marks them.
type metricsEncoder struct {
	resAttrs, scopeAttrs attrTable

	num, sum, hist, ehist             dpTable
	numAttrs, sumAttrs                attrTable
	histAttrs, ehistAttrs             attrTable
	numEx, histEx, ehistEx            exTable
	numExAttrs, histExAttrs, ehExAttr attrTable
}

// Metric types (pmetric.MetricType's numbers, as otel-arrow writes them).
const (
	mGauge        = 1
	mSum          = 2
	mHistogram    = 3
	mExpHistogram = 4
	mSummary      = 5
)

// OTLP field numbers (opentelemetry.proto.metrics.v1).
const (
	fMetricName        = 1
	fMetricDescription = 2
	fMetricUnit        = 3
	fMetricGauge       = 5
	fMetricSum         = 7
	fMetricHistogram   = 9
	fMetricExpHist     = 10
	fMetricSummary     = 11

	fDataPoints  = 1 // Gauge, Sum, Histogram, ExponentialHistogram, Summary
	fTemporality = 2 // Sum, Histogram, ExponentialHistogram
	fMonotonic   = 3 // Sum

	fDPStart = 2 // every data point
	fDPTime  = 3

	fNumDouble    = 4 // NumberDataPoint
	fNumExemplars = 5
	fNumInt       = 6
	fNumAttrs     = 7
	fNumFlags     = 8

	fHistCount     = 4 // HistogramDataPoint
	fHistSum       = 5
	fHistBuckets   = 6
	fHistBounds    = 7
	fHistExemplars = 8
	fHistAttrs     = 9
	fHistFlags     = 10
	fHistMin       = 11
	fHistMax       = 12

	fEHAttrs     = 1 // ExponentialHistogramDataPoint
	fEHCount     = 4
	fEHSum       = 5
	fEHScale     = 6
	fEHZeroCount = 7
	fEHPositive  = 8
	fEHNegative  = 9
	fEHFlags     = 10
	fEHExemplars = 11
	fEHMin       = 12
	fEHMax       = 13
	fEHZeroThr   = 14

	fEHBOffset = 1 // ExponentialHistogramDataPoint.Buckets
	fEHBCounts = 2

	fSumCount     = 4 // SummaryDataPoint
	fSumSum       = 5
	fSumQuantiles = 6
	fSumAttrs     = 7
	fSumFlags     = 8

	fQuantile      = 1 // ValueAtQuantile
	fQuantileValue = 2

	fExTime    = 2 // Exemplar
	fExDouble  = 3
	fExSpanID  = 4
	fExTraceID = 5
	fExInt     = 6
	fExAttrs   = 7
)

var (
	errExemplarSpanID  = errors.New("an exemplar's span id is not 8 bytes")
	errExemplarTraceID = errors.New("an exemplar's trace id is not 16 bytes")
	errBucketCounts    = errors.New("histogram bucket counts that are not uint64")
	errExplicitBounds  = errors.New("histogram explicit bounds that are not float64")
	errBucketsOffset   = errors.New("exponential histogram bucket offsets that are not int32")
)

// exTable is an exemplars record, indexed by its parent (a data point's
// id).
type exTable struct {
	groups
	present         bool
	attr            []int64 // each exemplar's attribute parent id, -1: none
	time            timestampCol
	spanID, traceID fsbCol
	i64             i64Col
	f64             f64Col
	attrs           *attrTable
}

func (t *exTable) reset() { t.present, t.n = false, 0 }

func (t *exTable) load(rec arrow.Record, attrs *attrTable) error {
	if t.present {
		return errMultiple{}
	}
	t.present, t.attrs = true, attrs
	r := resolver{f: recordFields(rec)}
	id := r.u32("id")
	parent := r.u32("parent_id")
	t.time = r.timestamp("time_unix_nano")
	t.spanID = r.fsb("span_id")
	t.traceID = r.fsb("trace_id")
	t.i64 = r.i64("int_value")
	t.f64 = r.f64("double_value")
	if r.err != nil {
		return r.err
	}
	n := int(rec.NumRows())
	t.parent = grow(t.parent, n)
	t.attr = grow(t.attr, n)
	const (
		none = iota
		isInt
		isDouble
	)
	prevType, prevParent := none, uint32(0)
	var prevInt int64
	var prevDouble float64
	maxP := uint64(0)
	for i := range n {
		if len(t.spanID.at(i)) != 8 {
			return errExemplarSpanID
		}
		if len(t.traceID.at(i)) != 16 {
			return errExemplarTraceID
		}
		p := parent.at(i)
		switch {
		case t.i64.has(i):
			v := t.i64.at(i)
			if prevType == isInt && prevInt == v {
				p += prevParent
			} else {
				prevType, prevInt = isInt, v
			}
		case t.f64.has(i):
			v := t.f64.at(i)
			if prevType == isDouble && prevDouble == v {
				p += prevParent
			} else {
				prevType, prevDouble = isDouble, v
			}
		default:
			p += prevParent
		}
		prevParent = p
		t.parent[i] = p
		maxP = max(maxP, uint64(p))
		t.attr[i] = -1
		if id.valid(i) {
			attrs.lastID += id.at(i)
			t.attr[i] = int64(attrs.lastID)
		}
	}
	t.index(n, maxP)
	t.taken = grow(t.taken, t.slots())
	clear(t.taken)
	return nil
}

// appendExemplars writes the exemplars of data point id, if no earlier
// point took them.
func (t *exTable) appendExemplars(b []byte, num int, id uint32, limit int) ([]byte, error) {
	if !t.present {
		return b, nil
	}
	s := t.slot(id)
	if s < 0 || t.taken[s] {
		return b, nil
	}
	t.taken[s] = true
	var err error
	for _, r := range t.rows(id) {
		i := int(r)
		var at int
		b, at = pbappend.OpenLen(b, num)
		b = pbappend.Fixed64NonZero(b, fExTime, uint64(t.time.at(i)))
		// The int value first, then the double, which wins (pdata's
		// SetIntValue, then SetDoubleValue).
		if t.f64.has(i) {
			b = pbappend.Fixed64Field(b, fExDouble, math.Float64bits(t.f64.at(i)))
		} else if t.i64.has(i) {
			b = pbappend.Fixed64Field(b, fExInt, uint64(t.i64.at(i)))
		}
		b = appendIDField(b, fExSpanID, t.spanID.at(i), 8)
		b = appendIDField(b, fExTraceID, t.traceID.at(i), 16)
		if p := t.attr[i]; p >= 0 {
			if b, err = t.attrs.appendAttrs(b, fExAttrs, t.attrs.rows(uint32(p)), limit); err != nil {
				return b, err
			}
		}
		b = pbappend.CloseLen(b, at)
	}
	return b, nil
}

// dpTable is a data points record of one kind, indexed by its parent (a
// metric's id).
type dpTable struct {
	groups
	present bool
	kind    int
	attrKey []int64 // each point's id (its attributes' and exemplars'), -1: none
	exTake  []bool  // each point takes its exemplars (the first of its id)
	attrs   *attrTable
	ex      *exTable

	start, time       timestampCol
	flags             u32Col
	i64               i64Col // number
	f64               f64Col
	count             u64Col // histograms, summaries
	sum, min, max     f64Col
	buckets, bounds   listCol // histogram
	scale             i32Col  // exponential histogram
	zeroCount         u64Col
	zeroThr           f64Col
	pos, neg          structCol
	posOff, negOff    arrow.Array
	posCnt, negCnt    listCol
	quantiles         listCol // summary
	qStruct           *array.Struct
	qQuantile, qValue f64Col
}

func (t *dpTable) reset() { t.present, t.n = false, 0 }

func (t *dpTable) load(rec arrow.Record, kind int, attrs *attrTable, ex *exTable) error {
	if t.present {
		return errMultiple{}
	}
	t.present, t.kind, t.attrs, t.ex = true, kind, attrs, ex
	r := resolver{f: recordFields(rec)}
	id := r.u32("id")
	parent := r.u16("parent_id")
	t.start = r.timestamp("start_time_unix_nano")
	t.time = r.timestamp("time_unix_nano")
	t.flags = r.u32("flags")
	switch kind {
	case mGauge:
		t.i64 = r.i64("int_value")
		t.f64 = r.f64("double_value")
	case mHistogram:
		t.count = r.u64("count")
		t.sum = r.f64("sum")
		t.buckets = r.list("bucket_counts")
		t.bounds = r.list("explicit_bounds")
		t.min = r.f64("min")
		t.max = r.f64("max")
	case mExpHistogram:
		t.count = r.u64("count")
		t.sum = r.f64("sum")
		t.scale = r.i32("scale")
		t.zeroCount = r.u64("zero_count")
		t.min = r.f64("min")
		t.max = r.f64("max")
		t.zeroThr = r.f64("zero_threshold")
		t.pos = r.strct("positive")
		t.neg = r.strct("negative")
	case mSummary:
		t.count = r.u64("count")
		t.sum = r.f64("sum")
		t.quantiles = r.list("quantile")
	}
	if r.err != nil {
		return r.err
	}
	if kind == mExpHistogram {
		var err error
		if t.posOff, t.posCnt, err = bucketCols(t.pos); err != nil {
			return err
		}
		if t.negOff, t.negCnt, err = bucketCols(t.neg); err != nil {
			return err
		}
	}
	t.qStruct = nil
	if kind == mSummary && t.quantiles.a != nil {
		st, ok := t.quantiles.a.ListValues().(*array.Struct)
		if !ok {
			return errColumn{"quantile", t.quantiles.a.DataType()}
		}
		t.qStruct = st
		qr := resolver{f: structFields(st)}
		t.qQuantile = qr.f64("quantile")
		t.qValue = qr.f64("value")
		if qr.err != nil {
			return qr.err
		}
	}
	n := int(rec.NumRows())
	t.parent = grow(t.parent, n)
	t.attrKey = grow(t.attrKey, n)
	t.exTake = grow(t.exTake, n)
	var p uint16
	var lastID uint32
	maxP := uint64(0)
	for i := range n {
		p += parent.at(i)
		t.parent[i] = uint32(p)
		maxP = max(maxP, uint64(p))
		t.attrKey[i], t.exTake[i] = -1, false
		if id.valid(i) {
			lastID += id.at(i)
			t.attrKey[i] = int64(lastID)
		}
	}
	t.index(n, maxP)
	t.taken = grow(t.taken, t.slots())
	clear(t.taken)
	// A point's exemplars go to the first point of its id, in the
	// record's order (the order otel-arrow's conversion moves them in).
	if ex != nil && ex.present {
		for i := range n {
			if k := t.attrKey[i]; k >= 0 {
				if s := ex.slot(uint32(k)); s >= 0 && !ex.taken[s] {
					ex.taken[s] = true
					t.exTake[i] = true
				}
			}
		}
		clear(ex.taken)
	}
	return nil
}

// bucketCols resolves an exponential histogram's buckets struct.
func bucketCols(s structCol) (off arrow.Array, counts listCol, err error) {
	if s.a == nil {
		return nil, listCol{}, nil
	}
	r := resolver{f: structFields(s.a)}
	off = r.col("offset")
	if off != nil {
		if _, ok := off.(*array.Int32); !ok {
			return nil, listCol{}, errBucketsOffset
		}
	}
	counts = r.list("bucket_counts")
	return off, counts, r.err
}

// encode appends the batch's OTLP to dst, at most maxOTLP bytes of it, and
// returns the data points written. No metrics record: nothing.
func (e *metricsEncoder) encode(recs []arrow.Record, types []arrowpb.ArrowPayloadType, dst []byte, maxOTLP int) ([]byte, int, error) {
	for _, t := range []*attrTable{&e.resAttrs, &e.scopeAttrs, &e.numAttrs, &e.sumAttrs, &e.histAttrs, &e.ehistAttrs, &e.numExAttrs, &e.histExAttrs, &e.ehExAttr} {
		t.reset()
	}
	for _, t := range []*dpTable{&e.num, &e.sum, &e.hist, &e.ehist} {
		t.reset()
	}
	for _, t := range []*exTable{&e.numEx, &e.histEx, &e.ehistEx} {
		t.reset()
	}
	var metrics arrow.Record
	var num, sum, hist, ehist, numEx, histEx, ehistEx arrow.Record
	once := func(dst *arrow.Record, rec arrow.Record, typ arrowpb.ArrowPayloadType) error {
		if *dst != nil {
			return errMultiple{typ}
		}
		*dst = rec
		return nil
	}
	// Attributes first: the exemplars' and points' ids refer to them.
	for i, rec := range recs {
		var err error
		switch typ := types[i]; typ {
		case arrowpb.ArrowPayloadType_RESOURCE_ATTRS:
			err = e.resAttrs.load(rec, 0xffff)
		case arrowpb.ArrowPayloadType_SCOPE_ATTRS:
			err = e.scopeAttrs.load(rec, 0xffff)
		case arrowpb.ArrowPayloadType_NUMBER_DP_ATTRS:
			err = e.numAttrs.load(rec, 0xffffffff)
		case arrowpb.ArrowPayloadType_SUMMARY_DP_ATTRS:
			err = e.sumAttrs.load(rec, 0xffffffff)
		case arrowpb.ArrowPayloadType_HISTOGRAM_DP_ATTRS:
			err = e.histAttrs.load(rec, 0xffffffff)
		case arrowpb.ArrowPayloadType_EXP_HISTOGRAM_DP_ATTRS:
			err = e.ehistAttrs.load(rec, 0xffffffff)
		case arrowpb.ArrowPayloadType_NUMBER_DP_EXEMPLAR_ATTRS:
			err = e.numExAttrs.load(rec, 0xffffffff)
		case arrowpb.ArrowPayloadType_HISTOGRAM_DP_EXEMPLAR_ATTRS:
			err = e.histExAttrs.load(rec, 0xffffffff)
		case arrowpb.ArrowPayloadType_EXP_HISTOGRAM_DP_EXEMPLAR_ATTRS:
			err = e.ehExAttr.load(rec, 0xffffffff)
		case arrowpb.ArrowPayloadType_UNIVARIATE_METRICS:
			err = once(&metrics, rec, typ)
		case arrowpb.ArrowPayloadType_NUMBER_DATA_POINTS:
			err = once(&num, rec, typ)
		case arrowpb.ArrowPayloadType_SUMMARY_DATA_POINTS:
			err = once(&sum, rec, typ)
		case arrowpb.ArrowPayloadType_HISTOGRAM_DATA_POINTS:
			err = once(&hist, rec, typ)
		case arrowpb.ArrowPayloadType_EXP_HISTOGRAM_DATA_POINTS:
			err = once(&ehist, rec, typ)
		case arrowpb.ArrowPayloadType_NUMBER_DP_EXEMPLARS:
			err = once(&numEx, rec, typ)
		case arrowpb.ArrowPayloadType_HISTOGRAM_DP_EXEMPLARS:
			err = once(&histEx, rec, typ)
		case arrowpb.ArrowPayloadType_EXP_HISTOGRAM_DP_EXEMPLARS:
			err = once(&ehistEx, rec, typ)
		default:
			err = fmt.Errorf("a %v record in a metrics batch", typ)
		}
		if err != nil {
			return dst, 0, err
		}
	}
	for _, x := range []struct {
		rec   arrow.Record
		t     *exTable
		attrs *attrTable
	}{{numEx, &e.numEx, &e.numExAttrs}, {histEx, &e.histEx, &e.histExAttrs}, {ehistEx, &e.ehistEx, &e.ehExAttr}} {
		if x.rec != nil {
			if err := x.t.load(x.rec, x.attrs); err != nil {
				return dst, 0, err
			}
		}
	}
	for _, x := range []struct {
		rec   arrow.Record
		t     *dpTable
		kind  int
		attrs *attrTable
		ex    *exTable
	}{
		{num, &e.num, mGauge, &e.numAttrs, &e.numEx},
		{sum, &e.sum, mSummary, &e.sumAttrs, nil},
		{hist, &e.hist, mHistogram, &e.histAttrs, &e.histEx},
		{ehist, &e.ehist, mExpHistogram, &e.ehistAttrs, &e.ehistEx},
	} {
		if x.rec != nil {
			if err := x.t.load(x.rec, x.kind, x.attrs, x.ex); err != nil {
				return dst, 0, err
			}
		}
	}
	if metrics == nil {
		return dst, 0, nil
	}
	return e.encodeMetrics(metrics, dst, len(dst)+maxOTLP)
}

func (e *metricsEncoder) encodeMetrics(rec arrow.Record, b []byte, limit int) ([]byte, int, error) {
	r := resolver{f: recordFields(rec)}
	id := r.u16("id")
	typ := r.u8("metric_type")
	name := r.str("name")
	desc := r.str("description")
	unit := r.str("unit")
	temporality := r.i32("aggregation_temporality")
	monotonic := r.bool("is_monotonic")
	if r.err != nil {
		return b, 0, r.err
	}
	w, err := newScopeWalker(rec, &e.resAttrs, &e.scopeAttrs, limit)
	if err != nil {
		return b, 0, err
	}
	n := int(rec.NumRows())
	var metricID uint16
	points := 0
	for row := range n {
		if b, err = w.begin(b, row); err != nil {
			return b, 0, err
		}
		metricID += id.at(row)
		var at int
		b, at = pbappend.OpenLen(b, fScopeItems)
		b = pbappend.StringNonEmpty(b, fMetricName, name.at(row))
		b = pbappend.StringNonEmpty(b, fMetricDescription, desc.at(row))
		b = pbappend.StringNonEmpty(b, fMetricUnit, unit.at(row))
		var t *dpTable
		field := 0
		switch typ.at(row) {
		case mGauge:
			t, field = &e.num, fMetricGauge
		case mSum:
			t, field = &e.num, fMetricSum
		case mHistogram:
			t, field = &e.hist, fMetricHistogram
		case mExpHistogram:
			t, field = &e.ehist, fMetricExpHist
		case mSummary:
			t, field = &e.sum, fMetricSummary
		}
		if field != 0 {
			var dat int
			b, dat = pbappend.OpenLen(b, field)
			var k int
			if b, k, err = e.appendPoints(b, t, uint32(metricID), limit); err != nil {
				return b, 0, err
			}
			points += k
			switch field {
			case fMetricSum:
				b = pbappend.VarintNonZero(b, fTemporality, uint64(int64(temporality.at(row))))
				if monotonic.at(row) {
					b = pbappend.VarintField(b, fMonotonic, 1)
				}
			case fMetricHistogram, fMetricExpHist:
				b = pbappend.VarintNonZero(b, fTemporality, uint64(int64(temporality.at(row))))
			}
			b = pbappend.CloseLen(b, dat)
		}
		b = pbappend.CloseLen(b, at)
		if len(b) > limit {
			return b, 0, errTooLarge{len(b), limit}
		}
	}
	return w.end(b), points, nil
}

// appendPoints writes the data points of metric id, if no earlier metric
// took them, and returns how many.
func (e *metricsEncoder) appendPoints(b []byte, t *dpTable, id uint32, limit int) ([]byte, int, error) {
	if !t.present {
		return b, 0, nil
	}
	s := t.slot(id)
	if s < 0 || t.taken[s] {
		return b, 0, nil
	}
	t.taken[s] = true
	rows := t.rows(id)
	var err error
	for _, r := range rows {
		if b, err = t.appendPoint(b, int(r), limit); err != nil {
			return b, 0, err
		}
		if len(b) > limit {
			return b, 0, errTooLarge{len(b), limit}
		}
	}
	return b, len(rows), nil
}

// appendPoint writes row i as a data point of its kind (field 1 of the
// metric's data message).
func (t *dpTable) appendPoint(b []byte, i int, limit int) ([]byte, error) {
	b, at := pbappend.OpenLen(b, fDataPoints)
	b = pbappend.Fixed64NonZero(b, fDPStart, uint64(t.start.at(i)))
	b = pbappend.Fixed64NonZero(b, fDPTime, uint64(t.time.at(i)))
	key := t.attrKey[i]
	var attrField, exField int
	switch t.kind {
	case mGauge:
		if t.i64.has(i) {
			b = pbappend.Fixed64Field(b, fNumInt, uint64(t.i64.at(i)))
		} else if t.f64.has(i) {
			b = pbappend.Fixed64Field(b, fNumDouble, math.Float64bits(t.f64.at(i)))
		}
		b = pbappend.VarintNonZero(b, fNumFlags, uint64(t.flags.at(i)))
		attrField, exField = fNumAttrs, fNumExemplars
	case mHistogram:
		b = pbappend.Fixed64NonZero(b, fHistCount, t.count.at(i))
		if t.sum.has(i) {
			b = pbappend.Fixed64Field(b, fHistSum, math.Float64bits(t.sum.at(i)))
		}
		if s, e := t.buckets.span(i); e > s {
			v, ok := t.buckets.a.ListValues().(*array.Uint64)
			if !ok {
				return b, errBucketCounts
			}
			b = pbappend.Varint(pbappend.Tag(b, fHistBuckets, 2), uint64(8*(e-s)))
			for _, x := range v.Uint64Values()[s:e] {
				b = binary.LittleEndian.AppendUint64(b, x)
			}
		} else if t.buckets.a != nil && !t.buckets.a.IsNull(i) {
			if _, ok := t.buckets.a.ListValues().(*array.Uint64); !ok {
				return b, errBucketCounts
			}
		}
		if s, e := t.bounds.span(i); e > s {
			v, ok := t.bounds.a.ListValues().(*array.Float64)
			if !ok {
				return b, errExplicitBounds
			}
			b = pbappend.Varint(pbappend.Tag(b, fHistBounds, 2), uint64(8*(e-s)))
			for _, x := range v.Float64Values()[s:e] {
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
			}
		} else if t.bounds.a != nil && !t.bounds.a.IsNull(i) {
			if _, ok := t.bounds.a.ListValues().(*array.Float64); !ok {
				return b, errExplicitBounds
			}
		}
		b = pbappend.VarintNonZero(b, fHistFlags, uint64(t.flags.at(i)))
		if t.min.has(i) {
			b = pbappend.Fixed64Field(b, fHistMin, math.Float64bits(t.min.at(i)))
		}
		if t.max.has(i) {
			b = pbappend.Fixed64Field(b, fHistMax, math.Float64bits(t.max.at(i)))
		}
		attrField, exField = fHistAttrs, fHistExemplars
	case mExpHistogram:
		b = pbappend.Fixed64NonZero(b, fEHCount, t.count.at(i))
		if t.sum.has(i) {
			b = pbappend.Fixed64Field(b, fEHSum, math.Float64bits(t.sum.at(i)))
		}
		b = pbappend.VarintNonZero(b, fEHScale, zigzag32(t.scale.at(i)))
		b = pbappend.Fixed64NonZero(b, fEHZeroCount, t.zeroCount.at(i))
		if t.pos.present(i) {
			b = appendBuckets(b, fEHPositive, t.posOff, t.posCnt, i)
		}
		if t.neg.present(i) {
			b = appendBuckets(b, fEHNegative, t.negOff, t.negCnt, i)
		}
		b = pbappend.VarintNonZero(b, fEHFlags, uint64(t.flags.at(i)))
		if t.min.has(i) {
			b = pbappend.Fixed64Field(b, fEHMin, math.Float64bits(t.min.at(i)))
		}
		if t.max.has(i) {
			b = pbappend.Fixed64Field(b, fEHMax, math.Float64bits(t.max.at(i)))
		}
		if t.zeroThr.has(i) {
			b = pbappend.Fixed64NonZero(b, fEHZeroThr, math.Float64bits(t.zeroThr.at(i)))
		}
		attrField, exField = fEHAttrs, fEHExemplars
	case mSummary:
		b = pbappend.Fixed64NonZero(b, fSumCount, t.count.at(i))
		b = pbappend.Fixed64NonZero(b, fSumSum, math.Float64bits(t.sum.at(i)))
		if s, e := t.quantiles.span(i); e > s && t.qStruct != nil {
			for q := s; q < e; q++ {
				var qa int
				b, qa = pbappend.OpenLen(b, fSumQuantiles)
				if t.qStruct.IsValid(q) {
					b = pbappend.Fixed64NonZero(b, fQuantile, math.Float64bits(t.qQuantile.at(q)))
					b = pbappend.Fixed64NonZero(b, fQuantileValue, math.Float64bits(t.qValue.at(q)))
				}
				b = pbappend.CloseLen(b, qa)
			}
		}
		b = pbappend.VarintNonZero(b, fSumFlags, uint64(t.flags.at(i)))
		attrField = fSumAttrs
	}
	var err error
	if key >= 0 {
		if exField != 0 && t.exTake[i] {
			if b, err = t.ex.appendExemplars(b, exField, uint32(key), limit); err != nil {
				return b, err
			}
		}
		if b, err = t.attrs.appendAttrs(b, attrField, t.attrs.rows(uint32(key)), limit); err != nil {
			return b, err
		}
	}
	return pbappend.CloseLen(b, at), nil
}

// appendBuckets writes an exponential histogram's buckets (offset, then
// the counts, packed varints); the values are read as otel-arrow reads
// them (nulls within are their raw values; counts of another type are
// ignored).
func appendBuckets(b []byte, num int, off arrow.Array, counts listCol, i int) []byte {
	b, at := pbappend.OpenLen(b, num)
	if o, ok := off.(*array.Int32); ok {
		b = pbappend.VarintNonZero(b, fEHBOffset, zigzag32(o.Value(i)))
	}
	if counts.a != nil {
		s, e := counts.a.ValueOffsets(i)
		if v, ok := counts.a.ListValues().(*array.Uint64); ok && e > s {
			vals := v.Uint64Values()[s:e]
			size := 0
			for _, x := range vals {
				size += pbappend.UvarintLen(x)
			}
			b = pbappend.Varint(pbappend.Tag(b, fEHBCounts, 2), uint64(size))
			for _, x := range vals {
				b = pbappend.Varint(b, x)
			}
		}
	}
	return pbappend.CloseLen(b, at)
}

func zigzag32(v int32) uint64 { return uint64(uint32(v<<1) ^ uint32(v>>31)) }
