package otlpview

import (
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
	case 5:
		return MetricTypeGauge
	case 7:
		return MetricTypeSum
	case 9:
		return MetricTypeHistogram
	case 10:
		return MetricTypeExponentialHistogram
	case 11:
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
	*m = Metric{Metadata: KeyValues{src: src, field: 12}, bufs: bufs}
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return err
		}
		switch fc.FieldNum {
		case 1:
			if v, ok := fc.String(); ok {
				m.Name = v
			}
		case 2:
			if v, ok := fc.String(); ok {
				m.Description = v
			}
		case 3:
			if v, ok := fc.String(); ok {
				m.Unit = v
			}
		case 5, 7, 9, 10, 11: // the data oneof
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
		case 2:
			if m.Type == MetricTypeSum || m.Type == MetricTypeHistogram || m.Type == MetricTypeExponentialHistogram {
				if n, ok := readInt32(&fc); ok {
					m.AggregationTemporality = AggregationTemporality(n)
				}
			}
		case 3:
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
	return rawIter{src: m.data, field: 1}
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
	*p = NumberDataPoint{
		Attributes: KeyValues{src: src, field: 7},
		Exemplars:  Exemplars{src: src, field: 5},
	}
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return err
		}
		switch fc.FieldNum {
		case 2:
			if n, ok := fc.Fixed64(); ok {
				p.StartTimeUnixNano = n
			}
		case 3:
			if n, ok := fc.Fixed64(); ok {
				p.TimeUnixNano = n
			}
		case 4:
			if v, ok := fc.Double(); ok {
				p.ValueType, p.AsDouble, p.AsInt = NumberTypeDouble, v, 0
			}
		case 6:
			if v, ok := fc.Sfixed64(); ok {
				p.ValueType, p.AsDouble, p.AsInt = NumberTypeInt, 0, v
			}
		case 8:
			if n, ok := readUint32(&fc); ok {
				p.Flags = n
			}
		}
	}
	return nil
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
	*p = HistogramDataPoint{
		Attributes: KeyValues{src: src, field: 9},
		Exemplars:  Exemplars{src: src, field: 8},
	}
	counts, bounds := bufs.counts[:0], bufs.bounds[:0]
	defer func() { bufs.counts, bufs.bounds = counts, bounds }()
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return err
		}
		switch fc.FieldNum {
		case 2:
			if n, ok := fc.Fixed64(); ok {
				p.StartTimeUnixNano = n
			}
		case 3:
			if n, ok := fc.Fixed64(); ok {
				p.TimeUnixNano = n
			}
		case 4:
			if n, ok := fc.Fixed64(); ok {
				p.Count = n
			}
		case 5:
			if v, ok := fc.Double(); ok {
				p.Sum, p.HasSum = v, true
			}
		case 6:
			if counts, err = appendFixed64s(counts, &fc); err != nil {
				return at(err, "bucket_counts", -1)
			}
		case 7:
			if bounds, err = appendDoubles(bounds, &fc); err != nil {
				return at(err, "explicit_bounds", -1)
			}
		case 10:
			if n, ok := readUint32(&fc); ok {
				p.Flags = n
			}
		case 11:
			if v, ok := fc.Double(); ok {
				p.Min, p.HasMin = v, true
			}
		case 12:
			if v, ok := fc.Double(); ok {
				p.Max, p.HasMax = v, true
			}
		}
	}
	p.BucketCounts, p.ExplicitBounds = counts, bounds
	return nil
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
		case 1:
			if n, ok := readSint32(&fc); ok {
				b.Offset = n
			}
		case 2:
			if b.BucketCounts, err = appendVarints(b.BucketCounts, &fc); err != nil {
				return at(err, "bucket_counts", -1)
			}
		}
	}
	return nil
}

func (p *ExponentialHistogramDataPoint) decode(src []byte, bufs *pointBufs) error {
	*p = ExponentialHistogramDataPoint{
		Attributes: KeyValues{src: src, field: 1},
		Exemplars:  Exemplars{src: src, field: 11},
		Positive:   Buckets{BucketCounts: bufs.counts[:0]},
		Negative:   Buckets{BucketCounts: bufs.negCounts[:0]},
	}
	defer func() { bufs.counts, bufs.negCounts = p.Positive.BucketCounts, p.Negative.BucketCounts }()
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return err
		}
		switch fc.FieldNum {
		case 2:
			if n, ok := fc.Fixed64(); ok {
				p.StartTimeUnixNano = n
			}
		case 3:
			if n, ok := fc.Fixed64(); ok {
				p.TimeUnixNano = n
			}
		case 4:
			if n, ok := fc.Fixed64(); ok {
				p.Count = n
			}
		case 5:
			if v, ok := fc.Double(); ok {
				p.Sum, p.HasSum = v, true
			}
		case 6:
			if n, ok := readSint32(&fc); ok {
				p.Scale = n
			}
		case 7:
			if n, ok := fc.Fixed64(); ok {
				p.ZeroCount = n
			}
		case 8:
			if data, ok := fc.MessageData(); ok {
				if err := p.Positive.merge(data); err != nil {
					return at(err, "positive", -1)
				}
			}
		case 9:
			if data, ok := fc.MessageData(); ok {
				if err := p.Negative.merge(data); err != nil {
					return at(err, "negative", -1)
				}
			}
		case 10:
			if n, ok := readUint32(&fc); ok {
				p.Flags = n
			}
		case 12:
			if v, ok := fc.Double(); ok {
				p.Min, p.HasMin = v, true
			}
		case 13:
			if v, ok := fc.Double(); ok {
				p.Max, p.HasMax = v, true
			}
		case 14:
			if v, ok := fc.Double(); ok {
				p.ZeroThreshold = v
			}
		}
	}
	return nil
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
	*p = SummaryDataPoint{
		Attributes:     KeyValues{src: src, field: 7},
		QuantileValues: QuantileValues{src: src},
	}
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return err
		}
		switch fc.FieldNum {
		case 2:
			if n, ok := fc.Fixed64(); ok {
				p.StartTimeUnixNano = n
			}
		case 3:
			if n, ok := fc.Fixed64(); ok {
				p.TimeUnixNano = n
			}
		case 4:
			if n, ok := fc.Fixed64(); ok {
				p.Count = n
			}
		case 5:
			if v, ok := fc.Double(); ok {
				p.Sum = v
			}
		case 8:
			if n, ok := readUint32(&fc); ok {
				p.Flags = n
			}
		}
	}
	return nil
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
		case 1:
			if v, ok := fc.Double(); ok {
				q.Quantile = v
			}
		case 2:
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
	return QuantileIter{rawIter: rawIter{src: qs.src, field: 6}}
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
	*e = Exemplar{FilteredAttributes: KeyValues{src: src, field: 7}}
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return err
		}
		switch fc.FieldNum {
		case 2:
			if n, ok := fc.Fixed64(); ok {
				e.TimeUnixNano = n
			}
		case 3:
			if v, ok := fc.Double(); ok {
				e.ValueType, e.AsDouble, e.AsInt = NumberTypeDouble, v, 0
			}
		case 4:
			if b, ok := fc.Bytes(); ok {
				e.SpanID = b
			}
		case 5:
			if b, ok := fc.Bytes(); ok {
				e.TraceID = b
			}
		case 6:
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
