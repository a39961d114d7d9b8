package otlpjson

// This file holds the single schema table that drives both Marshal and Unmarshal
// (the types and the lookup code are in schema.go).
//
// Field numbers, names and kinds are copied from the generated OTLP v1.11.1 Go
// types (go.opentelemetry.io/proto/otlp@v1.11.1, */v1/*.pb.go; the profiles
// messages from its v1development modules at v0.4.0, which are generated from
// opentelemetry-proto v1.11.0) and from
// google/rpc/status.proto, google/rpc/error_details.proto and
// google/protobuf/{any,duration}.proto for the error-body messages.
//
// interop's TestOTLPJSONSchema walks the descriptors of the generated types
// (and google.rpc.Status) and fails on any message or field this table lacks
// or has with another number, kind, cardinality or declaration order.

const (
	mNone msgID = iota

	// opentelemetry/proto/common/v1/common.proto
	mAnyValue
	mArrayValue
	mKeyValueList
	mKeyValue
	mInstrumentationScope
	mEntityRef

	// opentelemetry/proto/resource/v1/resource.proto
	mResource

	// opentelemetry/proto/trace/v1/trace.proto
	mTracesData
	mResourceSpans
	mScopeSpans
	mSpan
	mSpanEvent
	mSpanLink
	mSpanStatus

	// opentelemetry/proto/metrics/v1/metrics.proto
	mMetricsData
	mResourceMetrics
	mScopeMetrics
	mMetric
	mGauge
	mSum
	mHistogram
	mExponentialHistogram
	mSummary
	mNumberDataPoint
	mHistogramDataPoint
	mExponentialHistogramDataPoint
	mBuckets
	mSummaryDataPoint
	mValueAtQuantile
	mExemplar

	// opentelemetry/proto/logs/v1/logs.proto
	mLogsData
	mResourceLogs
	mScopeLogs
	mLogRecord

	// opentelemetry/proto/profiles/v1development/profiles.proto
	mProfilesData
	mProfilesDictionary
	mResourceProfiles
	mScopeProfiles
	mProfile
	mProfileLink
	mValueType
	mSample
	mMapping
	mStack
	mLocation
	mLine
	mFunction
	mKeyValueAndUnit

	// opentelemetry/proto/collector/{trace,metrics,logs}/v1/*_service.proto
	mExportTraceServiceResponse
	mExportTracePartialSuccess
	mExportMetricsServiceResponse
	mExportMetricsPartialSuccess
	mExportLogsServiceResponse
	mExportLogsPartialSuccess
	mExportProfilesServiceResponse
	mExportProfilesPartialSuccess

	// google/rpc/status.proto, google/protobuf/any.proto
	mRPCStatus
	mAny

	numMessages
)

// The protobuf packages of the OTLP messages (message.pkg).
const (
	pkgCommon           = "opentelemetry.proto.common.v1"
	pkgResource         = "opentelemetry.proto.resource.v1"
	pkgTrace            = "opentelemetry.proto.trace.v1"
	pkgMetrics          = "opentelemetry.proto.metrics.v1"
	pkgLogs             = "opentelemetry.proto.logs.v1"
	pkgCollectorTrace   = "opentelemetry.proto.collector.trace.v1"
	pkgCollectorMetrics = "opentelemetry.proto.collector.metrics.v1"
	pkgCollectorLogs    = "opentelemetry.proto.collector.logs.v1"
	// The profiles signal is Alpha in OTLP v1.11; its package keeps the
	// development name.
	pkgProfiles          = "opentelemetry.proto.profiles.v1development"
	pkgCollectorProfiles = "opentelemetry.proto.collector.profiles.v1development"
)

var (
	// enum Span.SpanKind (trace.proto)
	enumSpanKind = &enumType{names: []string{
		"SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL", "SPAN_KIND_SERVER",
		"SPAN_KIND_CLIENT", "SPAN_KIND_PRODUCER", "SPAN_KIND_CONSUMER",
	}}
	// enum Status.StatusCode (trace.proto)
	enumStatusCode = &enumType{names: []string{
		"STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR",
	}}
	// enum AggregationTemporality (metrics.proto)
	enumAggregationTemporality = &enumType{names: []string{
		"AGGREGATION_TEMPORALITY_UNSPECIFIED", "AGGREGATION_TEMPORALITY_DELTA", "AGGREGATION_TEMPORALITY_CUMULATIVE",
	}}
	// enum SeverityNumber (logs.proto)
	enumSeverityNumber = &enumType{names: []string{
		"SEVERITY_NUMBER_UNSPECIFIED",
		"SEVERITY_NUMBER_TRACE", "SEVERITY_NUMBER_TRACE2", "SEVERITY_NUMBER_TRACE3", "SEVERITY_NUMBER_TRACE4",
		"SEVERITY_NUMBER_DEBUG", "SEVERITY_NUMBER_DEBUG2", "SEVERITY_NUMBER_DEBUG3", "SEVERITY_NUMBER_DEBUG4",
		"SEVERITY_NUMBER_INFO", "SEVERITY_NUMBER_INFO2", "SEVERITY_NUMBER_INFO3", "SEVERITY_NUMBER_INFO4",
		"SEVERITY_NUMBER_WARN", "SEVERITY_NUMBER_WARN2", "SEVERITY_NUMBER_WARN3", "SEVERITY_NUMBER_WARN4",
		"SEVERITY_NUMBER_ERROR", "SEVERITY_NUMBER_ERROR2", "SEVERITY_NUMBER_ERROR3", "SEVERITY_NUMBER_ERROR4",
		"SEVERITY_NUMBER_FATAL", "SEVERITY_NUMBER_FATAL2", "SEVERITY_NUMBER_FATAL3", "SEVERITY_NUMBER_FATAL4",
	}}
)

const (
	rep = fRepeated
	opt = fOptional
	one = fOneof
)

// schema is the OTLP v1.11 data model. Each entry quotes its .proto definition.
var schema = [numMessages]message{
	// message AnyValue {
	//   oneof value {
	//     string string_value = 1;
	//     bool bool_value = 2;
	//     int64 int_value = 3;
	//     double double_value = 4;
	//     ArrayValue array_value = 5;
	//     KeyValueList kvlist_value = 6;
	//     bytes bytes_value = 7;
	//     int32 string_value_strindex = 8;
	//   }
	// }
	mAnyValue: {pkg: pkgCommon, name: "AnyValue", fields: []field{
		{num: 1, name: "stringValue", alias: "string_value", kind: kString, flags: one},
		{num: 2, name: "boolValue", alias: "bool_value", kind: kBool, flags: one},
		{num: 3, name: "intValue", alias: "int_value", kind: kInt64, flags: one},
		{num: 4, name: "doubleValue", alias: "double_value", kind: kDouble, flags: one},
		{num: 5, name: "arrayValue", alias: "array_value", kind: kMessage, flags: one, msg: mArrayValue},
		{num: 6, name: "kvlistValue", alias: "kvlist_value", kind: kMessage, flags: one, msg: mKeyValueList},
		{num: 7, name: "bytesValue", alias: "bytes_value", kind: kBytes, flags: one},
		{num: 8, name: "stringValueStrindex", alias: "string_value_strindex", kind: kInt32, flags: one},
	}},
	// message ArrayValue {
	//   repeated AnyValue values = 1;
	// }
	mArrayValue: {pkg: pkgCommon, name: "ArrayValue", fields: []field{
		{num: 1, name: "values", alias: "values", kind: kMessage, flags: rep, msg: mAnyValue},
	}},
	// message KeyValueList {
	//   repeated KeyValue values = 1;
	// }
	mKeyValueList: {pkg: pkgCommon, name: "KeyValueList", fields: []field{
		{num: 1, name: "values", alias: "values", kind: kMessage, flags: rep, msg: mKeyValue},
	}},
	// message KeyValue {
	//   string key = 1;
	//   AnyValue value = 2;
	//   int32 key_strindex = 3;
	// }
	mKeyValue: {pkg: pkgCommon, name: "KeyValue", fields: []field{
		{num: 1, name: "key", alias: "key", kind: kString},
		{num: 2, name: "value", alias: "value", kind: kMessage, msg: mAnyValue},
		{num: 3, name: "keyStrindex", alias: "key_strindex", kind: kInt32},
	}},
	// message InstrumentationScope {
	//   string name = 1;
	//   string version = 2;
	//   repeated KeyValue attributes = 3;
	//   uint32 dropped_attributes_count = 4;
	// }
	mInstrumentationScope: {pkg: pkgCommon, name: "InstrumentationScope", fields: []field{
		{num: 1, name: "name", alias: "name", kind: kString},
		{num: 2, name: "version", alias: "version", kind: kString},
		{num: 3, name: "attributes", alias: "attributes", kind: kMessage, flags: rep, msg: mKeyValue},
		{num: 4, name: "droppedAttributesCount", alias: "dropped_attributes_count", kind: kUint32},
	}},
	// message EntityRef {
	//   string schema_url = 1;
	//   string type = 2;
	//   repeated string id_keys = 3;
	//   repeated string description_keys = 4;
	// }
	mEntityRef: {pkg: pkgCommon, name: "EntityRef", fields: []field{
		{num: 1, name: "schemaUrl", alias: "schema_url", kind: kString},
		{num: 2, name: "type", alias: "type", kind: kString},
		{num: 3, name: "idKeys", alias: "id_keys", kind: kString, flags: rep},
		{num: 4, name: "descriptionKeys", alias: "description_keys", kind: kString, flags: rep},
	}},

	// message Resource {
	//   repeated opentelemetry.proto.common.v1.KeyValue attributes = 1;
	//   uint32 dropped_attributes_count = 2;
	//   repeated opentelemetry.proto.common.v1.EntityRef entity_refs = 3;
	// }
	mResource: {pkg: pkgResource, name: "Resource", fields: []field{
		{num: 1, name: "attributes", alias: "attributes", kind: kMessage, flags: rep, msg: mKeyValue},
		{num: 2, name: "droppedAttributesCount", alias: "dropped_attributes_count", kind: kUint32},
		{num: 3, name: "entityRefs", alias: "entity_refs", kind: kMessage, flags: rep, msg: mEntityRef},
	}},

	// message TracesData {
	//   repeated ResourceSpans resource_spans = 1;
	// }
	// ExportTraceServiceRequest has the same fields.
	mTracesData: {pkg: pkgTrace, name: "TracesData", fields: []field{
		{num: 1, name: "resourceSpans", alias: "resource_spans", kind: kMessage, flags: rep, msg: mResourceSpans},
	}},
	// message ResourceSpans {
	//   reserved 1000;
	//   opentelemetry.proto.resource.v1.Resource resource = 1;
	//   repeated ScopeSpans scope_spans = 2;
	//   string schema_url = 3;
	// }
	mResourceSpans: {pkg: pkgTrace, name: "ResourceSpans", fields: []field{
		{num: 1, name: "resource", alias: "resource", kind: kMessage, msg: mResource},
		{num: 2, name: "scopeSpans", alias: "scope_spans", kind: kMessage, flags: rep, msg: mScopeSpans},
		{num: 3, name: "schemaUrl", alias: "schema_url", kind: kString},
	}},
	// message ScopeSpans {
	//   opentelemetry.proto.common.v1.InstrumentationScope scope = 1;
	//   repeated Span spans = 2;
	//   string schema_url = 3;
	// }
	mScopeSpans: {pkg: pkgTrace, name: "ScopeSpans", fields: []field{
		{num: 1, name: "scope", alias: "scope", kind: kMessage, msg: mInstrumentationScope},
		{num: 2, name: "spans", alias: "spans", kind: kMessage, flags: rep, msg: mSpan},
		{num: 3, name: "schemaUrl", alias: "schema_url", kind: kString},
	}},
	// message Span {
	//   bytes trace_id = 1;
	//   bytes span_id = 2;
	//   string trace_state = 3;
	//   bytes parent_span_id = 4;
	//   fixed32 flags = 16;
	//   string name = 5;
	//   SpanKind kind = 6;
	//   fixed64 start_time_unix_nano = 7;
	//   fixed64 end_time_unix_nano = 8;
	//   repeated opentelemetry.proto.common.v1.KeyValue attributes = 9;
	//   uint32 dropped_attributes_count = 10;
	//   repeated Event events = 11;
	//   uint32 dropped_events_count = 12;
	//   repeated Link links = 13;
	//   uint32 dropped_links_count = 14;
	//   Status status = 15;
	// }
	mSpan: {pkg: pkgTrace, name: "Span", order: []uint32{1, 2, 3, 4, 16, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, fields: []field{
		{num: 1, name: "traceId", alias: "trace_id", kind: kHexID},
		{num: 2, name: "spanId", alias: "span_id", kind: kHexID},
		{num: 3, name: "traceState", alias: "trace_state", kind: kString},
		{num: 4, name: "parentSpanId", alias: "parent_span_id", kind: kHexID},
		{num: 5, name: "name", alias: "name", kind: kString},
		{num: 6, name: "kind", alias: "kind", kind: kEnum, enum: enumSpanKind},
		{num: 7, name: "startTimeUnixNano", alias: "start_time_unix_nano", kind: kFixed64},
		{num: 8, name: "endTimeUnixNano", alias: "end_time_unix_nano", kind: kFixed64},
		{num: 9, name: "attributes", alias: "attributes", kind: kMessage, flags: rep, msg: mKeyValue},
		{num: 10, name: "droppedAttributesCount", alias: "dropped_attributes_count", kind: kUint32},
		{num: 11, name: "events", alias: "events", kind: kMessage, flags: rep, msg: mSpanEvent},
		{num: 12, name: "droppedEventsCount", alias: "dropped_events_count", kind: kUint32},
		{num: 13, name: "links", alias: "links", kind: kMessage, flags: rep, msg: mSpanLink},
		{num: 14, name: "droppedLinksCount", alias: "dropped_links_count", kind: kUint32},
		{num: 15, name: "status", alias: "status", kind: kMessage, msg: mSpanStatus},
		{num: 16, name: "flags", alias: "flags", kind: kFixed32},
	}},
	// message Span.Event {
	//   fixed64 time_unix_nano = 1;
	//   string name = 2;
	//   repeated opentelemetry.proto.common.v1.KeyValue attributes = 3;
	//   uint32 dropped_attributes_count = 4;
	// }
	mSpanEvent: {pkg: pkgTrace, name: "Span.Event", fields: []field{
		{num: 1, name: "timeUnixNano", alias: "time_unix_nano", kind: kFixed64},
		{num: 2, name: "name", alias: "name", kind: kString},
		{num: 3, name: "attributes", alias: "attributes", kind: kMessage, flags: rep, msg: mKeyValue},
		{num: 4, name: "droppedAttributesCount", alias: "dropped_attributes_count", kind: kUint32},
	}},
	// message Span.Link {
	//   bytes trace_id = 1;
	//   bytes span_id = 2;
	//   string trace_state = 3;
	//   repeated opentelemetry.proto.common.v1.KeyValue attributes = 4;
	//   uint32 dropped_attributes_count = 5;
	//   fixed32 flags = 6;
	// }
	mSpanLink: {pkg: pkgTrace, name: "Span.Link", fields: []field{
		{num: 1, name: "traceId", alias: "trace_id", kind: kHexID},
		{num: 2, name: "spanId", alias: "span_id", kind: kHexID},
		{num: 3, name: "traceState", alias: "trace_state", kind: kString},
		{num: 4, name: "attributes", alias: "attributes", kind: kMessage, flags: rep, msg: mKeyValue},
		{num: 5, name: "droppedAttributesCount", alias: "dropped_attributes_count", kind: kUint32},
		{num: 6, name: "flags", alias: "flags", kind: kFixed32},
	}},
	// message Status {
	//   reserved 1;
	//   string message = 2;
	//   StatusCode code = 3;
	// }
	mSpanStatus: {pkg: pkgTrace, name: "Status", fields: []field{
		{num: 2, name: "message", alias: "message", kind: kString},
		{num: 3, name: "code", alias: "code", kind: kEnum, enum: enumStatusCode},
	}},

	// message MetricsData {
	//   repeated ResourceMetrics resource_metrics = 1;
	// }
	// ExportMetricsServiceRequest has the same fields.
	mMetricsData: {pkg: pkgMetrics, name: "MetricsData", fields: []field{
		{num: 1, name: "resourceMetrics", alias: "resource_metrics", kind: kMessage, flags: rep, msg: mResourceMetrics},
	}},
	// message ResourceMetrics {
	//   reserved 1000;
	//   opentelemetry.proto.resource.v1.Resource resource = 1;
	//   repeated ScopeMetrics scope_metrics = 2;
	//   string schema_url = 3;
	// }
	mResourceMetrics: {pkg: pkgMetrics, name: "ResourceMetrics", fields: []field{
		{num: 1, name: "resource", alias: "resource", kind: kMessage, msg: mResource},
		{num: 2, name: "scopeMetrics", alias: "scope_metrics", kind: kMessage, flags: rep, msg: mScopeMetrics},
		{num: 3, name: "schemaUrl", alias: "schema_url", kind: kString},
	}},
	// message ScopeMetrics {
	//   opentelemetry.proto.common.v1.InstrumentationScope scope = 1;
	//   repeated Metric metrics = 2;
	//   string schema_url = 3;
	// }
	mScopeMetrics: {pkg: pkgMetrics, name: "ScopeMetrics", fields: []field{
		{num: 1, name: "scope", alias: "scope", kind: kMessage, msg: mInstrumentationScope},
		{num: 2, name: "metrics", alias: "metrics", kind: kMessage, flags: rep, msg: mMetric},
		{num: 3, name: "schemaUrl", alias: "schema_url", kind: kString},
	}},
	// message Metric {
	//   reserved 4, 6, 8;
	//   string name = 1;
	//   string description = 2;
	//   string unit = 3;
	//   oneof data {
	//     Gauge gauge = 5;
	//     Sum sum = 7;
	//     Histogram histogram = 9;
	//     ExponentialHistogram exponential_histogram = 10;
	//     Summary summary = 11;
	//   }
	//   repeated opentelemetry.proto.common.v1.KeyValue metadata = 12;
	// }
	mMetric: {pkg: pkgMetrics, name: "Metric", fields: []field{
		{num: 1, name: "name", alias: "name", kind: kString},
		{num: 2, name: "description", alias: "description", kind: kString},
		{num: 3, name: "unit", alias: "unit", kind: kString},
		{num: 5, name: "gauge", alias: "gauge", kind: kMessage, flags: one, msg: mGauge},
		{num: 7, name: "sum", alias: "sum", kind: kMessage, flags: one, msg: mSum},
		{num: 9, name: "histogram", alias: "histogram", kind: kMessage, flags: one, msg: mHistogram},
		{num: 10, name: "exponentialHistogram", alias: "exponential_histogram", kind: kMessage, flags: one, msg: mExponentialHistogram},
		{num: 11, name: "summary", alias: "summary", kind: kMessage, flags: one, msg: mSummary},
		{num: 12, name: "metadata", alias: "metadata", kind: kMessage, flags: rep, msg: mKeyValue},
	}},
	// message Gauge {
	//   repeated NumberDataPoint data_points = 1;
	// }
	mGauge: {pkg: pkgMetrics, name: "Gauge", fields: []field{
		{num: 1, name: "dataPoints", alias: "data_points", kind: kMessage, flags: rep, msg: mNumberDataPoint},
	}},
	// message Sum {
	//   repeated NumberDataPoint data_points = 1;
	//   AggregationTemporality aggregation_temporality = 2;
	//   bool is_monotonic = 3;
	// }
	mSum: {pkg: pkgMetrics, name: "Sum", fields: []field{
		{num: 1, name: "dataPoints", alias: "data_points", kind: kMessage, flags: rep, msg: mNumberDataPoint},
		{num: 2, name: "aggregationTemporality", alias: "aggregation_temporality", kind: kEnum, enum: enumAggregationTemporality},
		{num: 3, name: "isMonotonic", alias: "is_monotonic", kind: kBool},
	}},
	// message Histogram {
	//   repeated HistogramDataPoint data_points = 1;
	//   AggregationTemporality aggregation_temporality = 2;
	// }
	mHistogram: {pkg: pkgMetrics, name: "Histogram", fields: []field{
		{num: 1, name: "dataPoints", alias: "data_points", kind: kMessage, flags: rep, msg: mHistogramDataPoint},
		{num: 2, name: "aggregationTemporality", alias: "aggregation_temporality", kind: kEnum, enum: enumAggregationTemporality},
	}},
	// message ExponentialHistogram {
	//   repeated ExponentialHistogramDataPoint data_points = 1;
	//   AggregationTemporality aggregation_temporality = 2;
	// }
	mExponentialHistogram: {pkg: pkgMetrics, name: "ExponentialHistogram", fields: []field{
		{num: 1, name: "dataPoints", alias: "data_points", kind: kMessage, flags: rep, msg: mExponentialHistogramDataPoint},
		{num: 2, name: "aggregationTemporality", alias: "aggregation_temporality", kind: kEnum, enum: enumAggregationTemporality},
	}},
	// message Summary {
	//   repeated SummaryDataPoint data_points = 1;
	// }
	mSummary: {pkg: pkgMetrics, name: "Summary", fields: []field{
		{num: 1, name: "dataPoints", alias: "data_points", kind: kMessage, flags: rep, msg: mSummaryDataPoint},
	}},
	// message NumberDataPoint {
	//   reserved 1;
	//   repeated opentelemetry.proto.common.v1.KeyValue attributes = 7;
	//   fixed64 start_time_unix_nano = 2;
	//   fixed64 time_unix_nano = 3;
	//   oneof value {
	//     double as_double = 4;
	//     sfixed64 as_int = 6;
	//   }
	//   repeated Exemplar exemplars = 5;
	//   uint32 flags = 8;
	// }
	mNumberDataPoint: {pkg: pkgMetrics, name: "NumberDataPoint", order: []uint32{7, 2, 3, 4, 6, 5, 8}, fields: []field{
		{num: 2, name: "startTimeUnixNano", alias: "start_time_unix_nano", kind: kFixed64},
		{num: 3, name: "timeUnixNano", alias: "time_unix_nano", kind: kFixed64},
		{num: 4, name: "asDouble", alias: "as_double", kind: kDouble, flags: one},
		{num: 5, name: "exemplars", alias: "exemplars", kind: kMessage, flags: rep, msg: mExemplar},
		{num: 6, name: "asInt", alias: "as_int", kind: kSfixed64, flags: one},
		{num: 7, name: "attributes", alias: "attributes", kind: kMessage, flags: rep, msg: mKeyValue},
		{num: 8, name: "flags", alias: "flags", kind: kUint32},
	}},
	// message HistogramDataPoint {
	//   reserved 1;
	//   repeated opentelemetry.proto.common.v1.KeyValue attributes = 9;
	//   fixed64 start_time_unix_nano = 2;
	//   fixed64 time_unix_nano = 3;
	//   fixed64 count = 4;
	//   optional double sum = 5;
	//   repeated fixed64 bucket_counts = 6;
	//   repeated double explicit_bounds = 7;
	//   repeated Exemplar exemplars = 8;
	//   uint32 flags = 10;
	//   optional double min = 11;
	//   optional double max = 12;
	// }
	mHistogramDataPoint: {pkg: pkgMetrics, name: "HistogramDataPoint", order: []uint32{9, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12}, fields: []field{
		{num: 2, name: "startTimeUnixNano", alias: "start_time_unix_nano", kind: kFixed64},
		{num: 3, name: "timeUnixNano", alias: "time_unix_nano", kind: kFixed64},
		{num: 4, name: "count", alias: "count", kind: kFixed64},
		{num: 5, name: "sum", alias: "sum", kind: kDouble, flags: opt},
		{num: 6, name: "bucketCounts", alias: "bucket_counts", kind: kFixed64, flags: rep},
		{num: 7, name: "explicitBounds", alias: "explicit_bounds", kind: kDouble, flags: rep},
		{num: 8, name: "exemplars", alias: "exemplars", kind: kMessage, flags: rep, msg: mExemplar},
		{num: 9, name: "attributes", alias: "attributes", kind: kMessage, flags: rep, msg: mKeyValue},
		{num: 10, name: "flags", alias: "flags", kind: kUint32},
		{num: 11, name: "min", alias: "min", kind: kDouble, flags: opt},
		{num: 12, name: "max", alias: "max", kind: kDouble, flags: opt},
	}},
	// message ExponentialHistogramDataPoint {
	//   repeated opentelemetry.proto.common.v1.KeyValue attributes = 1;
	//   fixed64 start_time_unix_nano = 2;
	//   fixed64 time_unix_nano = 3;
	//   fixed64 count = 4;
	//   optional double sum = 5;
	//   sint32 scale = 6;
	//   fixed64 zero_count = 7;
	//   Buckets positive = 8;
	//   Buckets negative = 9;
	//   uint32 flags = 10;
	//   repeated Exemplar exemplars = 11;
	//   optional double min = 12;
	//   optional double max = 13;
	//   double zero_threshold = 14;
	// }
	mExponentialHistogramDataPoint: {pkg: pkgMetrics, name: "ExponentialHistogramDataPoint", fields: []field{
		{num: 1, name: "attributes", alias: "attributes", kind: kMessage, flags: rep, msg: mKeyValue},
		{num: 2, name: "startTimeUnixNano", alias: "start_time_unix_nano", kind: kFixed64},
		{num: 3, name: "timeUnixNano", alias: "time_unix_nano", kind: kFixed64},
		{num: 4, name: "count", alias: "count", kind: kFixed64},
		{num: 5, name: "sum", alias: "sum", kind: kDouble, flags: opt},
		{num: 6, name: "scale", alias: "scale", kind: kSint32},
		{num: 7, name: "zeroCount", alias: "zero_count", kind: kFixed64},
		{num: 8, name: "positive", alias: "positive", kind: kMessage, msg: mBuckets},
		{num: 9, name: "negative", alias: "negative", kind: kMessage, msg: mBuckets},
		{num: 10, name: "flags", alias: "flags", kind: kUint32},
		{num: 11, name: "exemplars", alias: "exemplars", kind: kMessage, flags: rep, msg: mExemplar},
		{num: 12, name: "min", alias: "min", kind: kDouble, flags: opt},
		{num: 13, name: "max", alias: "max", kind: kDouble, flags: opt},
		{num: 14, name: "zeroThreshold", alias: "zero_threshold", kind: kDouble},
	}},
	// message ExponentialHistogramDataPoint.Buckets {
	//   sint32 offset = 1;
	//   repeated uint64 bucket_counts = 2;
	// }
	mBuckets: {pkg: pkgMetrics, name: "ExponentialHistogramDataPoint.Buckets", fields: []field{
		{num: 1, name: "offset", alias: "offset", kind: kSint32},
		{num: 2, name: "bucketCounts", alias: "bucket_counts", kind: kUint64, flags: rep},
	}},
	// message SummaryDataPoint {
	//   reserved 1;
	//   repeated opentelemetry.proto.common.v1.KeyValue attributes = 7;
	//   fixed64 start_time_unix_nano = 2;
	//   fixed64 time_unix_nano = 3;
	//   fixed64 count = 4;
	//   double sum = 5;
	//   repeated ValueAtQuantile quantile_values = 6;
	//   uint32 flags = 8;
	// }
	mSummaryDataPoint: {pkg: pkgMetrics, name: "SummaryDataPoint", order: []uint32{7, 2, 3, 4, 5, 6, 8}, fields: []field{
		{num: 2, name: "startTimeUnixNano", alias: "start_time_unix_nano", kind: kFixed64},
		{num: 3, name: "timeUnixNano", alias: "time_unix_nano", kind: kFixed64},
		{num: 4, name: "count", alias: "count", kind: kFixed64},
		{num: 5, name: "sum", alias: "sum", kind: kDouble},
		{num: 6, name: "quantileValues", alias: "quantile_values", kind: kMessage, flags: rep, msg: mValueAtQuantile},
		{num: 7, name: "attributes", alias: "attributes", kind: kMessage, flags: rep, msg: mKeyValue},
		{num: 8, name: "flags", alias: "flags", kind: kUint32},
	}},
	// message SummaryDataPoint.ValueAtQuantile {
	//   double quantile = 1;
	//   double value = 2;
	// }
	mValueAtQuantile: {pkg: pkgMetrics, name: "SummaryDataPoint.ValueAtQuantile", fields: []field{
		{num: 1, name: "quantile", alias: "quantile", kind: kDouble},
		{num: 2, name: "value", alias: "value", kind: kDouble},
	}},
	// message Exemplar {
	//   reserved 1;
	//   repeated opentelemetry.proto.common.v1.KeyValue filtered_attributes = 7;
	//   fixed64 time_unix_nano = 2;
	//   oneof value {
	//     double as_double = 3;
	//     sfixed64 as_int = 6;
	//   }
	//   bytes span_id = 4;
	//   bytes trace_id = 5;
	// }
	mExemplar: {pkg: pkgMetrics, name: "Exemplar", order: []uint32{7, 2, 3, 6, 4, 5}, fields: []field{
		{num: 2, name: "timeUnixNano", alias: "time_unix_nano", kind: kFixed64},
		{num: 3, name: "asDouble", alias: "as_double", kind: kDouble, flags: one},
		{num: 4, name: "spanId", alias: "span_id", kind: kHexID},
		{num: 5, name: "traceId", alias: "trace_id", kind: kHexID},
		{num: 6, name: "asInt", alias: "as_int", kind: kSfixed64, flags: one},
		{num: 7, name: "filteredAttributes", alias: "filtered_attributes", kind: kMessage, flags: rep, msg: mKeyValue},
	}},

	// message LogsData {
	//   repeated ResourceLogs resource_logs = 1;
	// }
	// ExportLogsServiceRequest has the same fields.
	mLogsData: {pkg: pkgLogs, name: "LogsData", fields: []field{
		{num: 1, name: "resourceLogs", alias: "resource_logs", kind: kMessage, flags: rep, msg: mResourceLogs},
	}},
	// message ResourceLogs {
	//   reserved 1000;
	//   opentelemetry.proto.resource.v1.Resource resource = 1;
	//   repeated ScopeLogs scope_logs = 2;
	//   string schema_url = 3;
	// }
	mResourceLogs: {pkg: pkgLogs, name: "ResourceLogs", fields: []field{
		{num: 1, name: "resource", alias: "resource", kind: kMessage, msg: mResource},
		{num: 2, name: "scopeLogs", alias: "scope_logs", kind: kMessage, flags: rep, msg: mScopeLogs},
		{num: 3, name: "schemaUrl", alias: "schema_url", kind: kString},
	}},
	// message ScopeLogs {
	//   opentelemetry.proto.common.v1.InstrumentationScope scope = 1;
	//   repeated LogRecord log_records = 2;
	//   string schema_url = 3;
	// }
	mScopeLogs: {pkg: pkgLogs, name: "ScopeLogs", fields: []field{
		{num: 1, name: "scope", alias: "scope", kind: kMessage, msg: mInstrumentationScope},
		{num: 2, name: "logRecords", alias: "log_records", kind: kMessage, flags: rep, msg: mLogRecord},
		{num: 3, name: "schemaUrl", alias: "schema_url", kind: kString},
	}},
	// message LogRecord {
	//   reserved 4;
	//   fixed64 time_unix_nano = 1;
	//   fixed64 observed_time_unix_nano = 11;
	//   SeverityNumber severity_number = 2;
	//   string severity_text = 3;
	//   opentelemetry.proto.common.v1.AnyValue body = 5;
	//   repeated opentelemetry.proto.common.v1.KeyValue attributes = 6;
	//   uint32 dropped_attributes_count = 7;
	//   fixed32 flags = 8;
	//   bytes trace_id = 9;
	//   bytes span_id = 10;
	//   string event_name = 12;
	// }
	mLogRecord: {pkg: pkgLogs, name: "LogRecord", order: []uint32{1, 11, 2, 3, 5, 6, 7, 8, 9, 10, 12}, fields: []field{
		{num: 1, name: "timeUnixNano", alias: "time_unix_nano", kind: kFixed64},
		{num: 2, name: "severityNumber", alias: "severity_number", kind: kEnum, enum: enumSeverityNumber},
		{num: 3, name: "severityText", alias: "severity_text", kind: kString},
		{num: 5, name: "body", alias: "body", kind: kMessage, msg: mAnyValue},
		{num: 6, name: "attributes", alias: "attributes", kind: kMessage, flags: rep, msg: mKeyValue},
		{num: 7, name: "droppedAttributesCount", alias: "dropped_attributes_count", kind: kUint32},
		{num: 8, name: "flags", alias: "flags", kind: kFixed32},
		{num: 9, name: "traceId", alias: "trace_id", kind: kHexID},
		{num: 10, name: "spanId", alias: "span_id", kind: kHexID},
		{num: 11, name: "observedTimeUnixNano", alias: "observed_time_unix_nano", kind: kFixed64},
		{num: 12, name: "eventName", alias: "event_name", kind: kString},
	}},

	// message ProfilesData {
	//   repeated ResourceProfiles resource_profiles = 1;
	//   ProfilesDictionary dictionary = 2;
	// }
	// ExportProfilesServiceRequest has the same fields.
	mProfilesData: {pkg: pkgProfiles, name: "ProfilesData", fields: []field{
		{num: 1, name: "resourceProfiles", alias: "resource_profiles", kind: kMessage, flags: rep, msg: mResourceProfiles},
		{num: 2, name: "dictionary", alias: "dictionary", kind: kMessage, msg: mProfilesDictionary},
	}},
	// message ProfilesDictionary {
	//   repeated Mapping mapping_table = 1;
	//   repeated Location location_table = 2;
	//   repeated Function function_table = 3;
	//   repeated Link link_table = 4;
	//   repeated string string_table = 5;
	//   repeated KeyValueAndUnit attribute_table = 6;
	//   repeated Stack stack_table = 7;
	// }
	mProfilesDictionary: {pkg: pkgProfiles, name: "ProfilesDictionary", fields: []field{
		{num: 1, name: "mappingTable", alias: "mapping_table", kind: kMessage, flags: rep, msg: mMapping},
		{num: 2, name: "locationTable", alias: "location_table", kind: kMessage, flags: rep, msg: mLocation},
		{num: 3, name: "functionTable", alias: "function_table", kind: kMessage, flags: rep, msg: mFunction},
		{num: 4, name: "linkTable", alias: "link_table", kind: kMessage, flags: rep, msg: mProfileLink},
		{num: 5, name: "stringTable", alias: "string_table", kind: kString, flags: rep},
		{num: 6, name: "attributeTable", alias: "attribute_table", kind: kMessage, flags: rep, msg: mKeyValueAndUnit},
		{num: 7, name: "stackTable", alias: "stack_table", kind: kMessage, flags: rep, msg: mStack},
	}},
	// message ResourceProfiles {
	//   reserved 1000;
	//   opentelemetry.proto.resource.v1.Resource resource = 1;
	//   repeated ScopeProfiles scope_profiles = 2;
	//   string schema_url = 3;
	// }
	mResourceProfiles: {pkg: pkgProfiles, name: "ResourceProfiles", fields: []field{
		{num: 1, name: "resource", alias: "resource", kind: kMessage, msg: mResource},
		{num: 2, name: "scopeProfiles", alias: "scope_profiles", kind: kMessage, flags: rep, msg: mScopeProfiles},
		{num: 3, name: "schemaUrl", alias: "schema_url", kind: kString},
	}},
	// message ScopeProfiles {
	//   opentelemetry.proto.common.v1.InstrumentationScope scope = 1;
	//   repeated Profile profiles = 2;
	//   string schema_url = 3;
	// }
	mScopeProfiles: {pkg: pkgProfiles, name: "ScopeProfiles", fields: []field{
		{num: 1, name: "scope", alias: "scope", kind: kMessage, msg: mInstrumentationScope},
		{num: 2, name: "profiles", alias: "profiles", kind: kMessage, flags: rep, msg: mProfile},
		{num: 3, name: "schemaUrl", alias: "schema_url", kind: kString},
	}},
	// message Profile {
	//   ValueType sample_type = 1;
	//   repeated Sample samples = 2;
	//   fixed64 time_unix_nano = 3;
	//   uint64 duration_nano = 4;
	//   ValueType period_type = 5;
	//   int64 period = 6;
	//   bytes profile_id = 7;
	//   uint32 dropped_attributes_count = 8;
	//   string original_payload_format = 9;
	//   bytes original_payload = 10;
	//   repeated int32 attribute_indices = 11;
	// }
	mProfile: {pkg: pkgProfiles, name: "Profile", fields: []field{
		{num: 1, name: "sampleType", alias: "sample_type", kind: kMessage, msg: mValueType},
		{num: 2, name: "samples", alias: "samples", kind: kMessage, flags: rep, msg: mSample},
		{num: 3, name: "timeUnixNano", alias: "time_unix_nano", kind: kFixed64},
		{num: 4, name: "durationNano", alias: "duration_nano", kind: kUint64},
		{num: 5, name: "periodType", alias: "period_type", kind: kMessage, msg: mValueType},
		{num: 6, name: "period", alias: "period", kind: kInt64},
		{num: 7, name: "profileId", alias: "profile_id", kind: kProfileID},
		{num: 8, name: "droppedAttributesCount", alias: "dropped_attributes_count", kind: kUint32},
		{num: 9, name: "originalPayloadFormat", alias: "original_payload_format", kind: kString},
		{num: 10, name: "originalPayload", alias: "original_payload", kind: kBytes},
		{num: 11, name: "attributeIndices", alias: "attribute_indices", kind: kInt32, flags: rep},
	}},
	// message Link {
	//   bytes trace_id = 1;
	//   bytes span_id = 2;
	// }
	mProfileLink: {pkg: pkgProfiles, name: "Link", fields: []field{
		{num: 1, name: "traceId", alias: "trace_id", kind: kHexID},
		{num: 2, name: "spanId", alias: "span_id", kind: kHexID},
	}},
	// message ValueType {
	//   int32 type_strindex = 1;
	//   int32 unit_strindex = 2;
	// }
	mValueType: {pkg: pkgProfiles, name: "ValueType", fields: []field{
		{num: 1, name: "typeStrindex", alias: "type_strindex", kind: kInt32},
		{num: 2, name: "unitStrindex", alias: "unit_strindex", kind: kInt32},
	}},
	// message Sample {
	//   int32 stack_index = 1;
	//   repeated int32 attribute_indices = 2;
	//   int32 link_index = 3;
	//   repeated int64 values = 4;
	//   repeated fixed64 timestamps_unix_nano = 5;
	// }
	mSample: {pkg: pkgProfiles, name: "Sample", fields: []field{
		{num: 1, name: "stackIndex", alias: "stack_index", kind: kInt32},
		{num: 2, name: "attributeIndices", alias: "attribute_indices", kind: kInt32, flags: rep},
		{num: 3, name: "linkIndex", alias: "link_index", kind: kInt32},
		{num: 4, name: "values", alias: "values", kind: kInt64, flags: rep},
		{num: 5, name: "timestampsUnixNano", alias: "timestamps_unix_nano", kind: kFixed64, flags: rep},
	}},
	// message Mapping {
	//   uint64 memory_start = 1;
	//   uint64 memory_limit = 2;
	//   uint64 file_offset = 3;
	//   int32 filename_strindex = 4;
	//   repeated int32 attribute_indices = 5;
	// }
	mMapping: {pkg: pkgProfiles, name: "Mapping", fields: []field{
		{num: 1, name: "memoryStart", alias: "memory_start", kind: kUint64},
		{num: 2, name: "memoryLimit", alias: "memory_limit", kind: kUint64},
		{num: 3, name: "fileOffset", alias: "file_offset", kind: kUint64},
		{num: 4, name: "filenameStrindex", alias: "filename_strindex", kind: kInt32},
		{num: 5, name: "attributeIndices", alias: "attribute_indices", kind: kInt32, flags: rep},
	}},
	// message Stack {
	//   repeated int32 location_indices = 1;
	// }
	mStack: {pkg: pkgProfiles, name: "Stack", fields: []field{
		{num: 1, name: "locationIndices", alias: "location_indices", kind: kInt32, flags: rep},
	}},
	// message Location {
	//   int32 mapping_index = 1;
	//   uint64 address = 2;
	//   repeated Line lines = 3;
	//   repeated int32 attribute_indices = 4;
	// }
	mLocation: {pkg: pkgProfiles, name: "Location", fields: []field{
		{num: 1, name: "mappingIndex", alias: "mapping_index", kind: kInt32},
		{num: 2, name: "address", alias: "address", kind: kUint64},
		{num: 3, name: "lines", alias: "lines", kind: kMessage, flags: rep, msg: mLine},
		{num: 4, name: "attributeIndices", alias: "attribute_indices", kind: kInt32, flags: rep},
	}},
	// message Line {
	//   int32 function_index = 1;
	//   int64 line = 2;
	//   int64 column = 3;
	// }
	mLine: {pkg: pkgProfiles, name: "Line", fields: []field{
		{num: 1, name: "functionIndex", alias: "function_index", kind: kInt32},
		{num: 2, name: "line", alias: "line", kind: kInt64},
		{num: 3, name: "column", alias: "column", kind: kInt64},
	}},
	// message Function {
	//   int32 name_strindex = 1;
	//   int32 system_name_strindex = 2;
	//   int32 filename_strindex = 3;
	//   int64 start_line = 4;
	// }
	mFunction: {pkg: pkgProfiles, name: "Function", fields: []field{
		{num: 1, name: "nameStrindex", alias: "name_strindex", kind: kInt32},
		{num: 2, name: "systemNameStrindex", alias: "system_name_strindex", kind: kInt32},
		{num: 3, name: "filenameStrindex", alias: "filename_strindex", kind: kInt32},
		{num: 4, name: "startLine", alias: "start_line", kind: kInt64},
	}},
	// message KeyValueAndUnit {
	//   int32 key_strindex = 1;
	//   opentelemetry.proto.common.v1.AnyValue value = 2;
	//   int32 unit_strindex = 3;
	// }
	mKeyValueAndUnit: {pkg: pkgProfiles, name: "KeyValueAndUnit", fields: []field{
		{num: 1, name: "keyStrindex", alias: "key_strindex", kind: kInt32},
		{num: 2, name: "value", alias: "value", kind: kMessage, msg: mAnyValue},
		{num: 3, name: "unitStrindex", alias: "unit_strindex", kind: kInt32},
	}},

	// message ExportTraceServiceResponse {
	//   ExportTracePartialSuccess partial_success = 1;
	// }
	mExportTraceServiceResponse: {pkg: pkgCollectorTrace, name: "ExportTraceServiceResponse", fields: []field{
		{num: 1, name: "partialSuccess", alias: "partial_success", kind: kMessage, msg: mExportTracePartialSuccess},
	}},
	// message ExportTracePartialSuccess {
	//   int64 rejected_spans = 1;
	//   string error_message = 2;
	// }
	mExportTracePartialSuccess: {pkg: pkgCollectorTrace, name: "ExportTracePartialSuccess", fields: []field{
		{num: 1, name: "rejectedSpans", alias: "rejected_spans", kind: kInt64},
		{num: 2, name: "errorMessage", alias: "error_message", kind: kString},
	}},
	// message ExportMetricsServiceResponse {
	//   ExportMetricsPartialSuccess partial_success = 1;
	// }
	mExportMetricsServiceResponse: {pkg: pkgCollectorMetrics, name: "ExportMetricsServiceResponse", fields: []field{
		{num: 1, name: "partialSuccess", alias: "partial_success", kind: kMessage, msg: mExportMetricsPartialSuccess},
	}},
	// message ExportMetricsPartialSuccess {
	//   int64 rejected_data_points = 1;
	//   string error_message = 2;
	// }
	mExportMetricsPartialSuccess: {pkg: pkgCollectorMetrics, name: "ExportMetricsPartialSuccess", fields: []field{
		{num: 1, name: "rejectedDataPoints", alias: "rejected_data_points", kind: kInt64},
		{num: 2, name: "errorMessage", alias: "error_message", kind: kString},
	}},
	// message ExportLogsServiceResponse {
	//   ExportLogsPartialSuccess partial_success = 1;
	// }
	mExportLogsServiceResponse: {pkg: pkgCollectorLogs, name: "ExportLogsServiceResponse", fields: []field{
		{num: 1, name: "partialSuccess", alias: "partial_success", kind: kMessage, msg: mExportLogsPartialSuccess},
	}},
	// message ExportLogsPartialSuccess {
	//   int64 rejected_log_records = 1;
	//   string error_message = 2;
	// }
	mExportLogsPartialSuccess: {pkg: pkgCollectorLogs, name: "ExportLogsPartialSuccess", fields: []field{
		{num: 1, name: "rejectedLogRecords", alias: "rejected_log_records", kind: kInt64},
		{num: 2, name: "errorMessage", alias: "error_message", kind: kString},
	}},

	// message ExportProfilesServiceResponse {
	//   ExportProfilesPartialSuccess partial_success = 1;
	// }
	mExportProfilesServiceResponse: {pkg: pkgCollectorProfiles, name: "ExportProfilesServiceResponse", fields: []field{
		{num: 1, name: "partialSuccess", alias: "partial_success", kind: kMessage, msg: mExportProfilesPartialSuccess},
	}},
	// message ExportProfilesPartialSuccess {
	//   int64 rejected_profiles = 1;
	//   string error_message = 2;
	// }
	mExportProfilesPartialSuccess: {pkg: pkgCollectorProfiles, name: "ExportProfilesPartialSuccess", fields: []field{
		{num: 1, name: "rejectedProfiles", alias: "rejected_profiles", kind: kInt64},
		{num: 2, name: "errorMessage", alias: "error_message", kind: kString},
	}},

	// package google.rpc;
	// message Status {
	//   int32 code = 1;
	//   string message = 2;
	//   repeated google.protobuf.Any details = 3;
	// }
	mRPCStatus: {name: "google.rpc.Status", fields: []field{
		{num: 1, name: "code", alias: "code", kind: kInt32},
		{num: 2, name: "message", alias: "message", kind: kString},
		{num: 3, name: "details", alias: "details", kind: kMessage, flags: rep, msg: mAny},
	}},
	// package google.protobuf;
	// message Any {
	//   string type_url = 1;
	//   bytes value = 2;
	// }
	// Transcoded by the special-case code in wellknown.go.
	mAny: {name: "google.protobuf.Any", special: specialAny, fields: []field{
		{num: 1, name: "typeUrl", alias: "type_url", kind: kString},
		{num: 2, name: "value", alias: "value", kind: kBytes},
	}},
}
