package otlppb

// The four data point messages of metrics.proto (NumberDataPoint, of Gauge
// and Sum; HistogramDataPoint; ExponentialHistogramDataPoint;
// SummaryDataPoint) share most of their fields under different numbers
// (attributes is 7, 9, 1 and 7; flags 8, 10, 10 and 8). PointRoles maps
// each kind's field numbers to what the field is, so that the walks of
// data points (otlpdecode's check, otlpview's decoders) are one walk each,
// switching on the role rather than on four sets of numbers.

// PointKind is a kind of data point, named by the field of Metric's data
// oneof that holds its container: MetricGauge and MetricSum (both of
// NumberDataPoint), MetricHistogram, MetricExponentialHistogram,
// MetricSummary.
type PointKind = uint32

// PointRole is what a field of a data point is.
type PointRole uint8

// The roles of data point fields; PointUnknown is a field number the kind
// does not declare.
const (
	PointUnknown           PointRole = iota
	PointAttributes                  // repeated KeyValue
	PointStartTimeUnixNano           // fixed64
	PointTimeUnixNano                // fixed64
	PointCount                       // fixed64
	PointSum                         // double
	PointAsDouble                    // double, NumberDataPoint's value oneof
	PointAsInt                       // sfixed64, NumberDataPoint's value oneof
	PointExemplars                   // repeated Exemplar
	PointFlags                       // uint32
	PointMin                         // double
	PointMax                         // double
	PointBucketCounts                // repeated fixed64 (HistogramDataPoint)
	PointExplicitBounds              // repeated double (HistogramDataPoint)
	PointScale                       // sint32 (ExponentialHistogramDataPoint)
	PointZeroCount                   // fixed64
	PointPositive                    // Buckets
	PointNegative                    // Buckets
	PointZeroThreshold               // double
	PointQuantileValues              // repeated ValueAtQuantile (SummaryDataPoint)
)

// pointFieldLimit is one more than the largest field number of a data
// point message (ExponentialHistogramDataPoint.zero_threshold, 14).
const pointFieldLimit = 15

// PointRoleOf returns the role of field num of a data point of kind k
// (PointUnknown for an unknown field or kind).
func PointRoleOf(k PointKind, num uint32) PointRole {
	return PointRolesOf(k).Of(num)
}

// PointRoles are the roles of the fields of one kind of data point, by
// field number.
type PointRoles [pointFieldLimit]PointRole

// PointRolesOf returns the roles of the fields of kind k, for a walk that
// looks up every field of a data point (an unknown kind has none).
func PointRolesOf(k PointKind) *PointRoles {
	if k >= uint32(len(pointRoles)) {
		return &noPointRoles
	}
	return &pointRoles[k]
}

// Of returns the role of field num. It inlines to a bounds check and a
// load.
func (r *PointRoles) Of(num uint32) PointRole {
	if num >= pointFieldLimit {
		return PointUnknown
	}
	return r[num]
}

var noPointRoles PointRoles

var numberPointRoles = PointRoles{
	NumberDataPointAttributes:        PointAttributes,
	NumberDataPointStartTimeUnixNano: PointStartTimeUnixNano,
	NumberDataPointTimeUnixNano:      PointTimeUnixNano,
	NumberDataPointAsDouble:          PointAsDouble,
	NumberDataPointAsInt:             PointAsInt,
	NumberDataPointExemplars:         PointExemplars,
	NumberDataPointFlags:             PointFlags,
}

// pointRoles is indexed by PointKind (the Metric field number of the
// kind's container), then by field number.
var pointRoles = [MetricSummary + 1]PointRoles{
	MetricGauge: numberPointRoles,
	MetricSum:   numberPointRoles,
	MetricHistogram: {
		HistogramDataPointAttributes:        PointAttributes,
		HistogramDataPointStartTimeUnixNano: PointStartTimeUnixNano,
		HistogramDataPointTimeUnixNano:      PointTimeUnixNano,
		HistogramDataPointCount:             PointCount,
		HistogramDataPointSum:               PointSum,
		HistogramDataPointBucketCounts:      PointBucketCounts,
		HistogramDataPointExplicitBounds:    PointExplicitBounds,
		HistogramDataPointExemplars:         PointExemplars,
		HistogramDataPointFlags:             PointFlags,
		HistogramDataPointMin:               PointMin,
		HistogramDataPointMax:               PointMax,
	},
	MetricExponentialHistogram: {
		ExponentialHistogramDataPointAttributes:        PointAttributes,
		ExponentialHistogramDataPointStartTimeUnixNano: PointStartTimeUnixNano,
		ExponentialHistogramDataPointTimeUnixNano:      PointTimeUnixNano,
		ExponentialHistogramDataPointCount:             PointCount,
		ExponentialHistogramDataPointSum:               PointSum,
		ExponentialHistogramDataPointScale:             PointScale,
		ExponentialHistogramDataPointZeroCount:         PointZeroCount,
		ExponentialHistogramDataPointPositive:          PointPositive,
		ExponentialHistogramDataPointNegative:          PointNegative,
		ExponentialHistogramDataPointFlags:             PointFlags,
		ExponentialHistogramDataPointExemplars:         PointExemplars,
		ExponentialHistogramDataPointMin:               PointMin,
		ExponentialHistogramDataPointMax:               PointMax,
		ExponentialHistogramDataPointZeroThreshold:     PointZeroThreshold,
	},
	MetricSummary: {
		SummaryDataPointAttributes:        PointAttributes,
		SummaryDataPointStartTimeUnixNano: PointStartTimeUnixNano,
		SummaryDataPointTimeUnixNano:      PointTimeUnixNano,
		SummaryDataPointCount:             PointCount,
		SummaryDataPointSum:               PointSum,
		SummaryDataPointQuantileValues:    PointQuantileValues,
		SummaryDataPointFlags:             PointFlags,
	},
}
