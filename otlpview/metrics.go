package otlpview

import (
	"math"

	"github.com/otlp-lite/otlp-lite/otlppb"
)

// MetricType says which member of Metric's data oneof is set.
type MetricType uint8

// The metric data kinds. MetricTypeEmpty is a Metric without data, which
// metrics.proto allows (the data field is not required).
const (
	MetricTypeEmpty MetricType = iota
	MetricTypeGauge
	MetricTypeSum
	MetricTypeHistogram
	MetricTypeExponentialHistogram
	MetricTypeSummary
)

var metricTypeNames = [...]string{"Empty", "Gauge", "Sum", "Histogram", "ExponentialHistogram", "Summary"}

// String returns the type's name, e.g. "Histogram".
func (t MetricType) String() string {
	if int(t) < len(metricTypeNames) {
		return metricTypeNames[t]
	}
	return "MetricType(?)"
}

// metricTypeOf returns the type of a field of Metric's data oneof (see
// Metric), MetricTypeEmpty for other fields.
func metricTypeOf(field uint32) MetricType {
	switch field {
	case otlppb.MetricGauge:
		return MetricTypeGauge
	case otlppb.MetricSum:
		return MetricTypeSum
	case otlppb.MetricHistogram:
		return MetricTypeHistogram
	case otlppb.MetricExponentialHistogram:
		return MetricTypeExponentialHistogram
	case otlppb.MetricSummary:
		return MetricTypeSummary
	}
	return MetricTypeEmpty
}

// metricFieldNames are the names of Metric's data fields, for error
// positions.
var metricFieldNames = [...]string{
	MetricTypeGauge:                "gauge",
	MetricTypeSum:                  "sum",
	MetricTypeHistogram:            "histogram",
	MetricTypeExponentialHistogram: "exponential_histogram",
	MetricTypeSummary:              "summary",
}

// AggregationTemporality is metrics.proto's AggregationTemporality.
type AggregationTemporality int32

// The aggregation temporalities.
const (
	AggregationTemporalityUnspecified AggregationTemporality = 0
	AggregationTemporalityDelta       AggregationTemporality = 1
	AggregationTemporalityCumulative  AggregationTemporality = 2
)

// NumberType says which member of the value oneof of a NumberDataPoint or
// an Exemplar is set.
type NumberType uint8

// The number value kinds.
const (
	NumberTypeEmpty NumberType = iota
	NumberTypeDouble
	NumberTypeInt
)

// Metric is a view of a Metric and of its data's scalar fields.
//
//	message Metric {
//	  reserved 4, 6, 8;
//	  string name = 1;
//	  string description = 2;
//	  string unit = 3;
//	  oneof data {
//	    Gauge gauge = 5;
//	    Sum sum = 7;
//	    Histogram histogram = 9;
//	    ExponentialHistogram exponential_histogram = 10;
//	    Summary summary = 11;
//	  }
//	  repeated opentelemetry.proto.common.v1.KeyValue metadata = 12;
//	}
//
// The data points are reached through the iterator method matching Type;
// the other three return empty iterators.
type Metric struct {
	Name        string
	Description string
	Unit        string
	Metadata    KeyValues
	Type        MetricType
	// AggregationTemporality is set for Sum, Histogram and
	// ExponentialHistogram.
	AggregationTemporality AggregationTemporality
	// IsMonotonic is set for Sum.
	IsMonotonic bool

	data []byte // the Gauge, Sum, ... message
	bufs *pointBufs
}

// pointBufs are the buffers packed repeated scalars of data points are
// unpacked into; they belong to the MetricsDecoder and are reused.
type pointBufs struct {
	counts    []uint64
	bounds    []float64
	negCounts []uint64
	dataBuf   []byte
}

// decode sets m from a Metric message; m.bufs, which the MetricsDecoder
// sets, is kept. If a callback cleared it (by overwriting *m), the metric
// gets buffers of its own rather than a nil dereference.
func (m *Metric) decode(src []byte) error {
	bufs := m.bufs
	if bufs == nil {
		bufs = new(pointBufs)
	}
	*m = Metric{Metadata: KeyValues{src: src, field: otlppb.MetricMetadata}, bufs: bufs}
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return err
		}
		switch fc.FieldNum {
		case otlppb.MetricName:
			if v, ok := fc.String(); ok {
				m.Name = v
			}
		case otlppb.MetricDescription:
			if v, ok := fc.String(); ok {
				m.Description = v
			}
		case otlppb.MetricUnit:
			if v, ok := fc.String(); ok {
				m.Unit = v
			}
		case otlppb.MetricGauge, otlppb.MetricSum, otlppb.MetricHistogram, otlppb.MetricExponentialHistogram, otlppb.MetricSummary: // the data oneof
			data, ok := fc.MessageData()
			if !ok {
				continue
			}
			t := metricTypeOf(fc.FieldNum)
			if t != m.Type {
				// A new oneof member replaces the previous one.
				m.Type, m.data = t, data
				continue
			}
			// The same member again: protobuf merges, which for the
			// encoded form is concatenation.
			if len(m.data) == 0 || &m.data[0] != unsafeFirst(bufs.dataBuf) {
				bufs.dataBuf = append(bufs.dataBuf[:0], m.data...)
			}
			bufs.dataBuf = append(bufs.dataBuf, data...)
			m.data = bufs.dataBuf
		}
	}
	if m.Type == MetricTypeEmpty {
		return nil
	}
	// message Sum {
	//   repeated NumberDataPoint data_points = 1;
	//   AggregationTemporality aggregation_temporality = 2;
	//   bool is_monotonic = 3;
	// }
	// Histogram and ExponentialHistogram have aggregation_temporality = 2.
	src = m.data
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return at(err, metricFieldNames[m.Type], -1)
		}
		switch fc.FieldNum {
		case otlppb.SumAggregationTemporality: // = Histogram's, ExponentialHistogram's
			if m.Type == MetricTypeSum || m.Type == MetricTypeHistogram || m.Type == MetricTypeExponentialHistogram {
				if n, ok := readInt32(&fc); ok {
					m.AggregationTemporality = AggregationTemporality(n)
				}
			}
		case otlppb.SumIsMonotonic:
			if m.Type == MetricTypeSum {
				if b, ok := readBool(&fc); ok {
					m.IsMonotonic = b
				}
			}
		}
	}
	return nil
}

func unsafeFirst(b []byte) *byte {
	if len(b) == 0 {
		return nil
	}
	return &b[0]
}

func (m *Metric) points(t MetricType) rawIter {
	if m.Type != t && !(t == MetricTypeGauge && m.Type == MetricTypeSum) {
		return rawIter{}
	}
	return rawIter{src: m.data, field: otlppb.GaugeDataPoints} // data_points of all five
}

// NumberDataPoints iterates over the data points of a Gauge or a Sum.
func (m *Metric) NumberDataPoints() NumberDataPointIter {
	return NumberDataPointIter{rawIter: m.points(MetricTypeGauge)}
}

// HistogramDataPoints iterates over the data points of a Histogram.
func (m *Metric) HistogramDataPoints() HistogramDataPointIter {
	return HistogramDataPointIter{rawIter: m.points(MetricTypeHistogram), bufs: m.bufs}
}

// ExponentialHistogramDataPoints iterates over the data points of an
// ExponentialHistogram.
func (m *Metric) ExponentialHistogramDataPoints() ExponentialHistogramDataPointIter {
	return ExponentialHistogramDataPointIter{rawIter: m.points(MetricTypeExponentialHistogram), bufs: m.bufs}
}

// SummaryDataPoints iterates over the data points of a Summary.
func (m *Metric) SummaryDataPoints() SummaryDataPointIter {
	return SummaryDataPointIter{rawIter: m.points(MetricTypeSummary)}
}

// NumberDataPoint is a view of a NumberDataPoint.
//
//	message NumberDataPoint {
//	  reserved 1;
//	  repeated opentelemetry.proto.common.v1.KeyValue attributes = 7;
//	  fixed64 start_time_unix_nano = 2;
//	  fixed64 time_unix_nano = 3;
//	  oneof value {
//	    double as_double = 4;
//	    sfixed64 as_int = 6;
//	  }
//	  repeated Exemplar exemplars = 5;
//	  uint32 flags = 8;
//	}
type NumberDataPoint struct {
	Attributes        KeyValues
	StartTimeUnixNano uint64
	TimeUnixNano      uint64
	ValueType         NumberType
	AsDouble          float64
	AsInt             int64
	Exemplars         Exemplars
	Flags             uint32
}

func (p *NumberDataPoint) decode(src []byte) error {
	var v pointValues
	err := v.decode(src, otlppb.MetricGauge)
	p.set(src, &v)
	return err
}

// set makes p the view of the point src, from its values v.
func (p *NumberDataPoint) set(src []byte, v *pointValues) {
	// Field by field, in place: see LogRecord.reset.
	p.Attributes = KeyValues{src: src, field: otlppb.NumberDataPointAttributes}
	p.StartTimeUnixNano = v.startTime
	p.TimeUnixNano = v.time
	p.ValueType = v.valueType
	p.AsDouble = v.asDouble
	p.AsInt = v.asInt
	p.Exemplars = Exemplars{src: src, field: otlppb.NumberDataPointExemplars}
	p.Flags = v.flags
}

// NumberDataPointIter iterates over the data points of a Gauge or Sum.
type NumberDataPointIter struct {
	rawIter
	p NumberDataPoint
}

// Next decodes the next data point.
func (it *NumberDataPointIter) Next() bool {
	data, ok := it.next()
	return ok && it.decoded(it.p.decode(data), "data_points")
}

// Point returns the current data point, valid until Next.
func (it *NumberDataPointIter) Point() *NumberDataPoint { return &it.p }

// HistogramDataPoint is a view of a HistogramDataPoint. BucketCounts and
// ExplicitBounds are unpacked into buffers of the MetricsDecoder: they are
// valid until the iterator moves.
//
//	message HistogramDataPoint {
//	  reserved 1;
//	  repeated opentelemetry.proto.common.v1.KeyValue attributes = 9;
//	  fixed64 start_time_unix_nano = 2;
//	  fixed64 time_unix_nano = 3;
//	  fixed64 count = 4;
//	  optional double sum = 5;
//	  repeated fixed64 bucket_counts = 6;
//	  repeated double explicit_bounds = 7;
//	  repeated Exemplar exemplars = 8;
//	  uint32 flags = 10;
//	  optional double min = 11;
//	  optional double max = 12;
//	}
type HistogramDataPoint struct {
	Attributes        KeyValues
	StartTimeUnixNano uint64
	TimeUnixNano      uint64
	Count             uint64
	Sum               float64
	HasSum            bool
	BucketCounts      []uint64
	ExplicitBounds    []float64
	Exemplars         Exemplars
	Flags             uint32
	Min               float64
	HasMin            bool
	Max               float64
	HasMax            bool
}

func (p *HistogramDataPoint) decode(src []byte, bufs *pointBufs) error {
	var v pointValues
	v.start(otlppb.MetricHistogram, bufs)
	err := v.decode(src, otlppb.MetricHistogram)
	v.keep(otlppb.MetricHistogram, bufs)
	p.set(src, &v)
	return err
}

// set makes p the view of the point src, from its values v.
func (p *HistogramDataPoint) set(src []byte, v *pointValues) {
	// Field by field, in place: see LogRecord.reset.
	p.Attributes = KeyValues{src: src, field: otlppb.HistogramDataPointAttributes}
	p.StartTimeUnixNano = v.startTime
	p.TimeUnixNano = v.time
	p.Count = v.count
	p.Sum = v.sum
	p.HasSum = v.hasSum
	p.BucketCounts = v.counts
	p.ExplicitBounds = v.bounds
	p.Exemplars = Exemplars{src: src, field: otlppb.HistogramDataPointExemplars}
	p.Flags = v.flags
	p.Min = v.min
	p.HasMin = v.hasMin
	p.Max = v.max
	p.HasMax = v.hasMax
}

// HistogramDataPointIter iterates over the data points of a Histogram.
type HistogramDataPointIter struct {
	rawIter
	bufs *pointBufs
	p    HistogramDataPoint
}

// Next decodes the next data point.
func (it *HistogramDataPointIter) Next() bool {
	data, ok := it.next()
	return ok && it.decoded(it.p.decode(data, it.bufs), "data_points")
}

// Point returns the current data point, valid until Next.
func (it *HistogramDataPointIter) Point() *HistogramDataPoint { return &it.p }

// ExponentialHistogramDataPoint is a view of an
// ExponentialHistogramDataPoint. The bucket counts are unpacked into
// buffers of the MetricsDecoder: they are valid until the iterator moves.
//
//	message ExponentialHistogramDataPoint {
//	  repeated opentelemetry.proto.common.v1.KeyValue attributes = 1;
//	  fixed64 start_time_unix_nano = 2;
//	  fixed64 time_unix_nano = 3;
//	  fixed64 count = 4;
//	  optional double sum = 5;
//	  sint32 scale = 6;
//	  fixed64 zero_count = 7;
//	  Buckets positive = 8;
//	  Buckets negative = 9;
//	  uint32 flags = 10;
//	  repeated Exemplar exemplars = 11;
//	  optional double min = 12;
//	  optional double max = 13;
//	  double zero_threshold = 14;
//	}
type ExponentialHistogramDataPoint struct {
	Attributes        KeyValues
	StartTimeUnixNano uint64
	TimeUnixNano      uint64
	Count             uint64
	Sum               float64
	HasSum            bool
	Scale             int32
	ZeroCount         uint64
	Positive          Buckets
	Negative          Buckets
	Flags             uint32
	Exemplars         Exemplars
	Min               float64
	HasMin            bool
	Max               float64
	HasMax            bool
	ZeroThreshold     float64
}

// Buckets is a view of ExponentialHistogramDataPoint.Buckets.
//
//	message Buckets {
//	  sint32 offset = 1;
//	  repeated uint64 bucket_counts = 2;
//	}
type Buckets struct {
	Offset       int32
	BucketCounts []uint64
}

// merge decodes a Buckets occurrence into b, appending to its counts:
// that is protobuf's merge of a repeated singular message.
func (b *Buckets) merge(src []byte) error {
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return err
		}
		switch fc.FieldNum {
		case otlppb.ExponentialHistogramDataPointBucketsOffset:
			if n, ok := readSint32(&fc); ok {
				b.Offset = n
			}
		case otlppb.ExponentialHistogramDataPointBucketsBucketCounts:
			if b.BucketCounts, err = appendVarints(b.BucketCounts, &fc); err != nil {
				return at(err, "bucket_counts", -1)
			}
		}
	}
	return nil
}

func (p *ExponentialHistogramDataPoint) decode(src []byte, bufs *pointBufs) error {
	var v pointValues
	v.start(otlppb.MetricExponentialHistogram, bufs)
	err := v.decode(src, otlppb.MetricExponentialHistogram)
	v.keep(otlppb.MetricExponentialHistogram, bufs)
	p.set(src, &v)
	return err
}

// set makes p the view of the point src, from its values v.
func (p *ExponentialHistogramDataPoint) set(src []byte, v *pointValues) {
	// Field by field, in place: see LogRecord.reset.
	p.Attributes = KeyValues{src: src, field: otlppb.ExponentialHistogramDataPointAttributes}
	p.StartTimeUnixNano = v.startTime
	p.TimeUnixNano = v.time
	p.Count = v.count
	p.Sum = v.sum
	p.HasSum = v.hasSum
	p.Scale = v.scale
	p.ZeroCount = v.zeroCount
	p.Positive = v.positive
	p.Negative = v.negative
	p.Flags = v.flags
	p.Exemplars = Exemplars{src: src, field: otlppb.ExponentialHistogramDataPointExemplars}
	p.Min = v.min
	p.HasMin = v.hasMin
	p.Max = v.max
	p.HasMax = v.hasMax
	p.ZeroThreshold = v.zeroThreshold
}

// ExponentialHistogramDataPointIter iterates over the data points of an
// ExponentialHistogram.
type ExponentialHistogramDataPointIter struct {
	rawIter
	bufs *pointBufs
	p    ExponentialHistogramDataPoint
}

// Next decodes the next data point.
func (it *ExponentialHistogramDataPointIter) Next() bool {
	data, ok := it.next()
	return ok && it.decoded(it.p.decode(data, it.bufs), "data_points")
}

// Point returns the current data point, valid until Next.
func (it *ExponentialHistogramDataPointIter) Point() *ExponentialHistogramDataPoint { return &it.p }

// SummaryDataPoint is a view of a SummaryDataPoint.
//
//	message SummaryDataPoint {
//	  reserved 1;
//	  repeated opentelemetry.proto.common.v1.KeyValue attributes = 7;
//	  fixed64 start_time_unix_nano = 2;
//	  fixed64 time_unix_nano = 3;
//	  fixed64 count = 4;
//	  double sum = 5;
//	  repeated ValueAtQuantile quantile_values = 6;
//	  uint32 flags = 8;
//	}
type SummaryDataPoint struct {
	Attributes        KeyValues
	StartTimeUnixNano uint64
	TimeUnixNano      uint64
	Count             uint64
	Sum               float64
	QuantileValues    QuantileValues
	Flags             uint32
}

func (p *SummaryDataPoint) decode(src []byte) error {
	var v pointValues
	err := v.decode(src, otlppb.MetricSummary)
	p.set(src, &v)
	return err
}

// set makes p the view of the point src, from its values v.
func (p *SummaryDataPoint) set(src []byte, v *pointValues) {
	// Field by field, in place: see LogRecord.reset.
	p.Attributes = KeyValues{src: src, field: otlppb.SummaryDataPointAttributes}
	p.StartTimeUnixNano = v.startTime
	p.TimeUnixNano = v.time
	p.Count = v.count
	p.Sum = v.sum
	p.QuantileValues = QuantileValues{src: src}
	p.Flags = v.flags
}

// pointValues is what the walk of a data point reads, for any of the four
// kinds; each kind's view takes its own fields from it.
type pointValues struct {
	startTime, time, count, zeroCount uint64
	sum, min, max, zeroThreshold      float64
	asDouble                          float64
	asInt                             int64
	hasSum, hasMin, hasMax            bool
	valueType                         NumberType
	flags                             uint32
	scale                             int32
	counts                            []uint64  // HistogramDataPoint.bucket_counts
	bounds                            []float64 // HistogramDataPoint.explicit_bounds
	positive, negative                Buckets
}

// decode reads a data point of kind (the Metric field of its container,
// otlppb.MetricGauge...) into v: the four data point messages are walked
// as one, by the role otlppb.PointRoleOf gives each field (their
// declarations are pasted above their views). Attributes, exemplars and
// quantile values are left to the views' lazy iterators. The last
// occurrence of a scalar wins; repeated scalars and Buckets are appended
// to, as protobuf merges them.
func (v *pointValues) decode(src []byte, kind otlppb.PointKind) error {
	roles := otlppb.PointRolesOf(kind)
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return err
		}
		if err := v.field(roles.Of(fc.FieldNum), &fc); err != nil {
			return err
		}
	}
	return nil
}

// start readies v for a point of kind, its repeated scalars unpacked into
// bufs.
func (v *pointValues) start(kind otlppb.PointKind, bufs *pointBufs) {
	switch kind {
	case otlppb.MetricHistogram:
		v.counts, v.bounds = bufs.counts[:0], bufs.bounds[:0]
	case otlppb.MetricExponentialHistogram:
		v.positive.BucketCounts, v.negative.BucketCounts = bufs.counts[:0], bufs.negCounts[:0]
	}
}

// keep gives bufs back what v grew them into, for the next point.
func (v *pointValues) keep(kind otlppb.PointKind, bufs *pointBufs) {
	switch kind {
	case otlppb.MetricHistogram:
		bufs.counts, bufs.bounds = v.counts, v.bounds
	case otlppb.MetricExponentialHistogram:
		bufs.counts, bufs.negCounts = v.positive.BucketCounts, v.negative.BucketCounts
	}
}

// field reads the field fc of a data point, whose role in the point's
// kind is role, into v.
func (v *pointValues) field(role otlppb.PointRole, fc *otlppb.Field) (err error) {
	if n, ok := fc.Fixed64(); ok {
		v.fixed64(role, n)
		return nil
	}
	switch role {
	case otlppb.PointFlags:
		if n, ok := readUint32(fc); ok {
			v.flags = n
		}
	case otlppb.PointBucketCounts:
		if v.counts, err = appendFixed64s(v.counts, fc); err != nil {
			return at(err, "bucket_counts", -1)
		}
	case otlppb.PointExplicitBounds:
		if v.bounds, err = appendDoubles(v.bounds, fc); err != nil {
			return at(err, "explicit_bounds", -1)
		}
	case otlppb.PointScale:
		if n, ok := readSint32(fc); ok {
			v.scale = n
		}
	case otlppb.PointPositive:
		if data, ok := fc.MessageData(); ok {
			if err := v.positive.merge(data); err != nil {
				return at(err, "positive", -1)
			}
		}
	case otlppb.PointNegative:
		if data, ok := fc.MessageData(); ok {
			if err := v.negative.merge(data); err != nil {
				return at(err, "negative", -1)
			}
		}
	}
	return nil
}

// fixed64 reads the value x of a field of wire type I64, whose role in
// the point's kind is role, into v; the roles of another wire type
// ignore it (an unknown field, as in protobuf).
func (v *pointValues) fixed64(role otlppb.PointRole, x uint64) {
	switch role {
	case otlppb.PointStartTimeUnixNano:
		v.startTime = x
	case otlppb.PointTimeUnixNano:
		v.time = x
	case otlppb.PointCount:
		v.count = x
	case otlppb.PointSum:
		v.sum, v.hasSum = math.Float64frombits(x), true
	case otlppb.PointAsDouble:
		v.valueType, v.asDouble, v.asInt = NumberTypeDouble, math.Float64frombits(x), 0
	case otlppb.PointAsInt:
		v.valueType, v.asDouble, v.asInt = NumberTypeInt, 0, int64(x)
	case otlppb.PointMin:
		v.min, v.hasMin = math.Float64frombits(x), true
	case otlppb.PointMax:
		v.max, v.hasMax = math.Float64frombits(x), true
	case otlppb.PointZeroCount:
		v.zeroCount = x
	case otlppb.PointZeroThreshold:
		v.zeroThreshold = math.Float64frombits(x)
	case otlppb.PointBucketCounts: // one element, unpacked
		v.counts = append(v.counts, x)
	case otlppb.PointExplicitBounds:
		v.bounds = append(v.bounds, math.Float64frombits(x))
	}
}

// SummaryDataPointIter iterates over the data points of a Summary.
type SummaryDataPointIter struct {
	rawIter
	p SummaryDataPoint
}

// Next decodes the next data point.
func (it *SummaryDataPointIter) Next() bool {
	data, ok := it.next()
	return ok && it.decoded(it.p.decode(data), "data_points")
}

// Point returns the current data point, valid until Next.
func (it *SummaryDataPointIter) Point() *SummaryDataPoint { return &it.p }

// ValueAtQuantile is SummaryDataPoint.ValueAtQuantile.
//
//	message ValueAtQuantile {
//	  double quantile = 1;
//	  double value = 2;
//	}
type ValueAtQuantile struct {
	Quantile float64
	Value    float64
}

func (q *ValueAtQuantile) decode(src []byte) error {
	*q = ValueAtQuantile{}
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return err
		}
		switch fc.FieldNum {
		case otlppb.SummaryDataPointValueAtQuantileQuantile:
			if v, ok := fc.Double(); ok {
				q.Quantile = v
			}
		case otlppb.SummaryDataPointValueAtQuantileValue:
			if v, ok := fc.Double(); ok {
				q.Value = v
			}
		}
	}
	return nil
}

// QuantileValues is the quantile_values field of a SummaryDataPoint,
// decoded lazily.
type QuantileValues struct {
	src []byte
}

// Iter returns an iterator over the quantiles.
func (qs QuantileValues) Iter() QuantileIter {
	return QuantileIter{rawIter: rawIter{src: qs.src, field: otlppb.SummaryDataPointQuantileValues}}
}

// QuantileIter iterates over QuantileValues.
type QuantileIter struct {
	rawIter
	q ValueAtQuantile
}

// Next decodes the next quantile.
func (it *QuantileIter) Next() bool {
	data, ok := it.next()
	return ok && it.decoded(it.q.decode(data), "quantile_values")
}

// Quantile returns the current quantile.
func (it *QuantileIter) Quantile() ValueAtQuantile { return it.q }

// Exemplar is a view of an Exemplar.
//
//	message Exemplar {
//	  reserved 1;
//	  repeated opentelemetry.proto.common.v1.KeyValue filtered_attributes = 7;
//	  fixed64 time_unix_nano = 2;
//	  oneof value {
//	    double as_double = 3;
//	    sfixed64 as_int = 6;
//	  }
//	  bytes span_id = 4;
//	  bytes trace_id = 5;
//	}
type Exemplar struct {
	FilteredAttributes KeyValues
	TimeUnixNano       uint64
	ValueType          NumberType
	AsDouble           float64
	AsInt              int64
	SpanID             []byte
	TraceID            []byte
}

func (e *Exemplar) decode(src []byte) error {
	*e = Exemplar{FilteredAttributes: KeyValues{src: src, field: otlppb.ExemplarFilteredAttributes}}
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return err
		}
		switch fc.FieldNum {
		case otlppb.ExemplarTimeUnixNano:
			if n, ok := fc.Fixed64(); ok {
				e.TimeUnixNano = n
			}
		case otlppb.ExemplarAsDouble:
			if v, ok := fc.Double(); ok {
				e.ValueType, e.AsDouble, e.AsInt = NumberTypeDouble, v, 0
			}
		case otlppb.ExemplarSpanID:
			if b, ok := fc.Bytes(); ok {
				e.SpanID = b
			}
		case otlppb.ExemplarTraceID:
			if b, ok := fc.Bytes(); ok {
				e.TraceID = b
			}
		case otlppb.ExemplarAsInt:
			if v, ok := fc.Sfixed64(); ok {
				e.ValueType, e.AsDouble, e.AsInt = NumberTypeInt, 0, v
			}
		}
	}
	return nil
}

// Exemplars is a repeated Exemplar field, decoded lazily.
type Exemplars struct {
	src   []byte
	field uint32
}

// Iter returns an iterator over the exemplars.
func (es Exemplars) Iter() ExemplarIter {
	return ExemplarIter{rawIter: rawIter{src: es.src, field: es.field}}
}

// ExemplarIter iterates over Exemplars.
type ExemplarIter struct {
	rawIter
	e Exemplar
}

// Next decodes the next exemplar.
func (it *ExemplarIter) Next() bool {
	data, ok := it.next()
	return ok && it.decoded(it.e.decode(data), "exemplars")
}

// Exemplar returns the current exemplar, valid until Next.
func (it *ExemplarIter) Exemplar() *Exemplar { return &it.e }

// MetricsDecoder visits the metrics of ExportMetricsServiceRequest (or
// MetricsData) messages. The zero value is ready to use; it is not safe for
// concurrent use; reuse it so that its buffers stop growing and Decode
// stops allocating.
type MetricsDecoder struct {
	c      containers
	metric Metric
	bufs   pointBufs
}

// Decode calls fn for every metric of src, in wire order, with the
// metric's resource and scope; fn reaches the data points through the
// Metric's iterators. The contract is that of TracesDecoder.Decode; the
// unpacked bucket counts and bounds are valid until the data point
// iterator moves, and only one data point iterator of a MetricsDecoder may
// be in use at a time.
// It is kept out of line: see decodeRequest.
//
//go:noinline
func (d *MetricsDecoder) Decode(src []byte, fn func(res *Resource, scope *Scope, m *Metric) error) error {
	d.metric.bufs = &d.bufs
	return decodeRequest(&d.c, &d.metric, &metricLevels, src, fn)
}
