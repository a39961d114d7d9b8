package otlpdecode

import (
	"encoding/binary"

	"github.com/otlp-lite/otlp-lite/otlppb"
	"github.com/otlp-lite/otlp-lite/otlpview"
)

// CheckMetrics walks an ExportMetricsServiceRequest (same wire format as
// MetricsData) and validates every data point of the five kinds (gauge,
// sum, histogram, exponential histogram, summary).
//
// A data point is rejected when one of its exemplars has a trace_id neither
// empty nor 16 bytes or a span_id neither empty nor 8 bytes, and a histogram
// data point also when bucket_counts is neither empty nor one element longer
// than explicit_bounds (metrics.proto, HistogramDataPoint.bucket_counts: "The
// number of elements in bucket_counts array must be by one greater than the
// number of elements in explicit_bounds array. The exception to this rule is
// when the length of bucket_counts is 0."). With
// opts.ValidateUTF8 it is also rejected when any string of the point
// (attribute keys and values, exemplar filtered attributes), of its metric
// (name, description, unit, metadata), resource or scope is not UTF-8.
//
// As in protobuf, only the last of several data fields of a metric counts
// (they form a oneof); repeated occurrences of the same one are merged.
//
// Errors and allocations are as for CheckTraces.
func CheckMetrics(src []byte, opts *Options) (Result, error) {
	c := newChecker(opts)
	return c.check(src, &metricNames, signalMetrics)
}

// metric data oneof field numbers and their names in positions.
const (
	metricGauge                = otlppb.MetricGauge
	metricSum                  = otlppb.MetricSum
	metricHistogram            = otlppb.MetricHistogram
	metricExponentialHistogram = otlppb.MetricExponentialHistogram
	metricSummary              = otlppb.MetricSummary
)

func metricKindName(field uint32) string {
	switch field {
	case metricGauge:
		return "gauge"
	case metricSum:
		return "sum"
	case metricHistogram:
		return "histogram"
	case metricExponentialHistogram:
		return "exponential_histogram"
	case metricSummary:
		return "summary"
	}
	return ""
}

// checkMetricItem checks a Metric and tallies its data points.
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
func checkMetricItem(c *checker, src []byte, t *itemTally) error {
	var r reason
	nMeta := 0
	var kind uint32
	var m *otlpview.Metric // the view of a visited metric
	if c.visit != nil {
		m = c.visitMetric(src)
	}
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return err
		}
		switch fc.FieldNum {
		case otlppb.MetricName:
			c.stringField(&fc, "name", &r)
		case otlppb.MetricDescription:
			c.stringField(&fc, "description", &r)
		case otlppb.MetricUnit:
			c.stringField(&fc, "unit", &r)
		case metricGauge, metricSum, metricHistogram, metricExponentialHistogram, metricSummary:
			data, ok := fc.MessageData()
			if !ok {
				continue
			}
			if fc.FieldNum != kind {
				// A different oneof member replaces the previous one.
				kind = fc.FieldNum
				*t = itemTally{kind: metricKindName(kind)}
			}
			if err := c.metricData(data, kind, t, m); err != nil {
				return at(err, t.kind, -1)
			}
		case otlppb.MetricMetadata:
			if err := c.attribute(&fc, "metadata", &nMeta, &r); err != nil {
				return err
			}
		}
	}
	if r.bad() && t.items > 0 {
		t.rejected = t.items
		t.first = r.in("metric", -1)
		t.point = 0
	}
	return nil
}

// metricData checks the data points of a Gauge, Sum, Histogram,
// ExponentialHistogram or Summary; they all keep them in field 1, and their
// other fields are scalars that cannot be invalid.
//
//	message Gauge { repeated NumberDataPoint data_points = 1; }
//	message Sum {
//	  repeated NumberDataPoint data_points = 1;
//	  AggregationTemporality aggregation_temporality = 2;
//	  bool is_monotonic = 3;
//	}
//	message Histogram {
//	  repeated HistogramDataPoint data_points = 1;
//	  AggregationTemporality aggregation_temporality = 2;
//	}
//	message ExponentialHistogram {
//	  repeated ExponentialHistogramDataPoint data_points = 1;
//	  AggregationTemporality aggregation_temporality = 2;
//	}
//	message Summary { repeated SummaryDataPoint data_points = 1; }
//
// m is the view of the metric when its points are visited (see
// visitMetric), nil otherwise.
func (c *checker) metricData(src []byte, kind uint32, t *itemTally, m *otlpview.Metric) error {
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return err
		}
		if fc.FieldNum != otlppb.GaugeDataPoints { // data_points, in all five kinds
			continue
		}
		data, ok := fc.MessageData()
		if !ok {
			continue
		}
		n := 0
		if c.visit != nil {
			n = c.visit.item()
			if m != nil {
				// Visited: its own walk (dataPointView), the tally
				// below repeated, so that the plain one stays as it was.
				r, err := c.visitPoint(m, kind, data, n)
				if err != nil {
					return at(err, "data_points", t.items)
				}
				if r.bad() {
					if t.rejected == 0 {
						t.first, t.point = r, t.items
					}
					t.rejected++
				}
				t.items++
				continue
			}
		}
		r, err := c.dataPoint(data, kind)
		if err != nil {
			return at(err, "data_points", t.items)
		}
		if r.bad() {
			if t.rejected == 0 {
				t.first, t.point = r, t.items
			}
			t.rejected++
		}
		t.items++
	}
	return nil
}

// dataPoint checks a data point of kind (the Metric field of its
// container: otlppb.MetricGauge...); the four data point messages are
// walked as one, by the role otlppb.PointRoleOf gives each field.
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
//	  message Buckets {
//	    sint32 offset = 1;
//	    repeated uint64 bucket_counts = 2;
//	  }
//	  uint32 flags = 10;
//	  repeated Exemplar exemplars = 11;
//	  optional double min = 12;
//	  optional double max = 13;
//	  double zero_threshold = 14;
//	}
//	message SummaryDataPoint {
//	  reserved 1;
//	  repeated opentelemetry.proto.common.v1.KeyValue attributes = 7;
//	  fixed64 start_time_unix_nano = 2;
//	  fixed64 time_unix_nano = 3;
//	  fixed64 count = 4;
//	  double sum = 5;
//	  message ValueAtQuantile {
//	    double quantile = 1;
//	    double value = 2;
//	  }
//	  repeated ValueAtQuantile quantile_values = 6;
//	  uint32 flags = 8;
//	}
func (c *checker) dataPoint(src []byte, kind otlppb.PointKind) (reason, error) {
	var r reason
	nAttrs, nEx, nQ := 0, 0, 0
	// Element counts of a histogram's bucket_counts and explicit_bounds,
	// which arrive packed (possibly in several runs) or one fixed64/double
	// per field: a histogram's fixed64 fields are not skipped unread.
	nCounts, nBounds := 0, 0
	histogram := kind == otlppb.MetricHistogram
	roles := otlppb.PointRolesOf(kind)
	var fc otlppb.Field
	for len(src) > 0 {
		var ok bool
		if !histogram {
			if src, ok = otlppb.SkipScalar(src); ok {
				continue // a scalar field: none is inspected here
			}
		}
		if src, ok = fc.ReadShort(src); !ok {
			var err error
			if src, err = fc.Read(src); err != nil {
				return r, err
			}
		}
		switch roles.Of(fc.FieldNum) {
		case otlppb.PointAttributes:
			if err := c.attribute(&fc, "attributes", &nAttrs, &r); err != nil {
				return r, err
			}
		case otlppb.PointExemplars:
			if err := c.exemplarField(&fc, &nEx, &r); err != nil {
				return r, err
			}
		case otlppb.PointBucketCounts:
			n, err := countFixed64(&fc)
			if err != nil {
				return r, err
			}
			nCounts += n
		case otlppb.PointExplicitBounds:
			n, err := countFixed64(&fc)
			if err != nil {
				return r, err
			}
			nBounds += n
		case otlppb.PointPositive, otlppb.PointNegative:
			data, ok := fc.MessageData()
			if !ok {
				continue
			}
			if err := checkBuckets(data); err != nil {
				if fc.FieldNum == otlppb.ExponentialHistogramDataPointPositive {
					return r, at(err, "positive", -1)
				}
				return r, at(err, "negative", -1)
			}
		case otlppb.PointQuantileValues:
			data, ok := fc.MessageData()
			if !ok {
				continue
			}
			if err := checkFields(data); err != nil {
				return r, at(err, "quantile_values", nQ)
			}
			nQ++
		}
	}
	// The bucket layout comes first, like ids elsewhere: a point whose
	// buckets do not match its bounds cannot be interpreted at all.
	if !ValidBuckets(nCounts, nBounds) {
		return bucketsReason(nCounts, nBounds), nil
	}
	return r, nil
}

// dataPointView is dataPoint for a point a visitor gets: the same checks,
// in the same order, and the walk hands every field it reads to pr
// (otlpview.ItemViews.DataPointOf), which fills the point's view, so that
// visiting a point costs no walk of its own. It is dataPoint's twin
// rather than dataPoint with a view argument, as logRecordView is
// logRecord's: attributes, exemplars and quantile values are the view's
// lazy iterators, not read into it.
func (c *checker) dataPointView(src []byte, kind otlppb.PointKind, pr *otlpview.PointReader) (reason, error) {
	var r reason
	nAttrs, nEx, nQ := 0, 0, 0
	nCounts, nBounds := 0, 0
	roles := otlppb.PointRolesOf(kind)
	var fc otlppb.Field
	for len(src) > 0 {
		if len(src) >= 9 && src[0]&0x87 == otlppb.WireI64 && src[0] >= 8 {
			// The view's commonest fields (times, value, count, sum),
			// inline; a histogram's unpacked bucket_counts and
			// explicit_bounds go below, which counts them.
			if role := roles.Of(uint32(src[0] >> 3)); role != otlppb.PointBucketCounts && role != otlppb.PointExplicitBounds {
				pr.ReadFixed64(role, binary.LittleEndian.Uint64(src[1:9]))
				src = src[9:]
				continue
			}
		}
		var ok bool
		if src, ok = fc.ReadShort(src); !ok {
			var err error
			if src, err = fc.Read(src); err != nil {
				return r, err
			}
		}
		switch role := roles.Of(fc.FieldNum); role {
		default: // the other scalars
			pr.ReadField(role, &fc)
		case otlppb.PointAttributes:
			if err := c.attribute(&fc, "attributes", &nAttrs, &r); err != nil {
				return r, err
			}
		case otlppb.PointExemplars:
			if err := c.exemplarField(&fc, &nEx, &r); err != nil {
				return r, err
			}
		case otlppb.PointBucketCounts:
			pr.ReadField(role, &fc)
			n, err := countFixed64(&fc)
			if err != nil {
				return r, err
			}
			nCounts += n
		case otlppb.PointExplicitBounds:
			pr.ReadField(role, &fc)
			n, err := countFixed64(&fc)
			if err != nil {
				return r, err
			}
			nBounds += n
		case otlppb.PointPositive, otlppb.PointNegative:
			pr.ReadField(role, &fc)
			data, ok := fc.MessageData()
			if !ok {
				continue
			}
			if err := checkBuckets(data); err != nil {
				if fc.FieldNum == otlppb.ExponentialHistogramDataPointPositive {
					return r, at(err, "positive", -1)
				}
				return r, at(err, "negative", -1)
			}
		case otlppb.PointQuantileValues:
			data, ok := fc.MessageData()
			if !ok {
				continue
			}
			if err := checkFields(data); err != nil {
				return r, at(err, "quantile_values", nQ)
			}
			nQ++
		}
	}
	if !ValidBuckets(nCounts, nBounds) {
		return bucketsReason(nCounts, nBounds), nil
	}
	return r, nil
}

// countFixed64 returns how many elements of a repeated fixed64 or double
// field fc holds: one for an unpacked element (wire type I64), len/8 for a
// packed run (wire type LEN), whose length must be a multiple of 8, and 0
// for any other wire type, which makes the field unknown.
func countFixed64(fc *otlppb.Field) (int, error) {
	if _, ok := fc.Fixed64(); ok {
		return 1, nil
	}
	data, _ := fc.MessageData()
	n, ok := PackedFixed64Count(len(data))
	if !ok {
		return 0, fc.CheckPackedFixed(8) // its error
	}
	return n, nil
}

// checkBuckets checks the structure of ExponentialHistogramDataPoint.Buckets
// (definition above).
func checkBuckets(src []byte) error {
	var fc otlppb.Field
	for len(src) > 0 {
		var ok bool
		if src, ok = fc.ReadShort(src); !ok {
			var err error
			if src, err = fc.Read(src); err != nil {
				return err
			}
		}
		if fc.FieldNum == otlppb.ExponentialHistogramDataPointBucketsBucketCounts {
			if err := fc.CheckPackedVarints(); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkFields checks that src is a well-formed message, for messages made
// of scalars only.
func checkFields(src []byte) error {
	var fc otlppb.Field
	for len(src) > 0 {
		var ok bool
		if src, ok = otlppb.SkipScalar(src); ok {
			continue // a scalar field: none is inspected here
		}
		if src, ok = fc.ReadShort(src); !ok {
			var err error
			if src, err = fc.Read(src); err != nil {
				return err
			}
		}
	}
	return nil
}

// exemplarField checks element *idx of a repeated Exemplar field and folds
// its verdict into r.
func (c *checker) exemplarField(fc *otlppb.Field, idx *int, r *reason) error {
	data, ok := fc.MessageData()
	if !ok {
		return nil
	}
	i := *idx
	*idx = i + 1
	er, err := c.exemplar(data)
	if err != nil {
		return at(err, "exemplars", i)
	}
	r.note(&er, "exemplars", i)
	return nil
}

// exemplar checks an Exemplar.
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
func (c *checker) exemplar(src []byte) (reason, error) {
	var r reason
	traceID, spanID := 0, 0
	var badID reason // an occurrence of an id pdata refuses (ValidIDLen)
	nAttrs := 0
	var fc otlppb.Field
	for len(src) > 0 {
		var ok bool
		if src, ok = otlppb.SkipScalar(src); ok {
			continue // a scalar field: none is inspected here
		}
		if src, ok = fc.ReadShort(src); !ok {
			var err error
			if src, err = fc.Read(src); err != nil {
				return r, err
			}
		}
		switch fc.FieldNum {
		case otlppb.ExemplarFilteredAttributes:
			if err := c.attribute(&fc, "filtered_attributes", &nAttrs, &r); err != nil {
				return r, err
			}
		case otlppb.ExemplarSpanID:
			if b, ok := fc.Bytes(); ok {
				spanID = len(b)
				noteIDLen(&badID, "span_id", len(b), 8)
			}
		case otlppb.ExemplarTraceID:
			if b, ok := fc.Bytes(); ok {
				traceID = len(b)
				noteIDLen(&badID, "trace_id", len(b), 16)
			}
		}
	}
	if !ValidExemplarIDLens(traceID, spanID) {
		return idLensReason(traceID, spanID), nil
	}
	if badID.bad() {
		return badID, nil
	}
	return r, nil
}
