package otlpjson

// This file holds the single schema table that drives both Marshal and Unmarshal
// (the types and the lookup code are in schema.go).
//
// The field numbers of the OTLP messages are otlppb's, named once for every
// walk of the module (google.rpc.Status and google.protobuf.Any, which are
// not OTLP, keep theirs here). Numbers, names and kinds are those of the
// generated OTLP v1.11.1 Go
// types (go.opentelemetry.io/proto/otlp@v1.11.1, */v1/*.pb.go; the profiles
// messages from its v1development modules at v0.4.0, which are generated from
// opentelemetry-proto v1.11.0) and from
// google/rpc/status.proto, google/rpc/error_details.proto and
// google/protobuf/{any,duration}.proto for the error-body messages.
//
// interop's TestOTLPJSONSchema walks the descriptors of the generated types
// (and google.rpc.Status) and fails on any message or field this table lacks
// or has with another number, kind, cardinality or declaration order.

import "github.com/otlp-lite/otlp-lite/otlppb"

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
		{num: otlppb.AnyValueStringValue, name: "stringValue", alias: "string_value", kind: kString, flags: one},
		{num: otlppb.AnyValueBoolValue, name: "boolValue", alias: "bool_value", kind: kBool, flags: one},
		{num: otlppb.AnyValueIntValue, name: "intValue", alias: "int_value", kind: kInt64, flags: one},
		{num: otlppb.AnyValueDoubleValue, name: "doubleValue", alias: "double_value", kind: kDouble, flags: one},
		{num: otlppb.AnyValueArrayValue, name: "arrayValue", alias: "array_value", kind: kMessage, flags: one, msg: mArrayValue},
		{num: otlppb.AnyValueKvlistValue, name: "kvlistValue", alias: "kvlist_value", kind: kMessage, flags: one, msg: mKeyValueList},
		{num: otlppb.AnyValueBytesValue, name: "bytesValue", alias: "bytes_value", kind: kBytes, flags: one},
		{num: otlppb.AnyValueStringValueStrindex, name: "stringValueStrindex", alias: "string_value_strindex", kind: kInt32, flags: one},
	}},
	// message ArrayValue {
	//   repeated AnyValue values = 1;
	// }
	mArrayValue: {pkg: pkgCommon, name: "ArrayValue", fields: []field{
		{num: otlppb.ArrayValueValues, name: "values", alias: "values", kind: kMessage, flags: rep, msg: mAnyValue},
	}},
	// message KeyValueList {
	//   repeated KeyValue values = 1;
	// }
	mKeyValueList: {pkg: pkgCommon, name: "KeyValueList", fields: []field{
		{num: otlppb.KeyValueListValues, name: "values", alias: "values", kind: kMessage, flags: rep, msg: mKeyValue},
	}},
	// message KeyValue {
	//   string key = 1;
	//   AnyValue value = 2;
	//   int32 key_strindex = 3;
	// }
	mKeyValue: {pkg: pkgCommon, name: "KeyValue", fields: []field{
		{num: otlppb.KeyValueKey, name: "key", alias: "key", kind: kString},
		{num: otlppb.KeyValueValue, name: "value", alias: "value", kind: kMessage, msg: mAnyValue},
		{num: otlppb.KeyValueKeyStrindex, name: "keyStrindex", alias: "key_strindex", kind: kInt32},
	}},
	// message InstrumentationScope {
	//   string name = 1;
	//   string version = 2;
	//   repeated KeyValue attributes = 3;
	//   uint32 dropped_attributes_count = 4;
	// }
	mInstrumentationScope: {pkg: pkgCommon, name: "InstrumentationScope", fields: []field{
		{num: otlppb.InstrumentationScopeName, name: "name", alias: "name", kind: kString},
		{num: otlppb.InstrumentationScopeVersion, name: "version", alias: "version", kind: kString},
		{num: otlppb.InstrumentationScopeAttributes, name: "attributes", alias: "attributes", kind: kMessage, flags: rep, msg: mKeyValue},
		{num: otlppb.InstrumentationScopeDroppedAttributesCount, name: "droppedAttributesCount", alias: "dropped_attributes_count", kind: kUint32},
	}},
	// message EntityRef {
	//   string schema_url = 1;
	//   string type = 2;
	//   repeated string id_keys = 3;
	//   repeated string description_keys = 4;
	// }
	mEntityRef: {pkg: pkgCommon, name: "EntityRef", fields: []field{
		{num: otlppb.EntityRefSchemaURL, name: "schemaUrl", alias: "schema_url", kind: kString},
		{num: otlppb.EntityRefType, name: "type", alias: "type", kind: kString},
		{num: otlppb.EntityRefIDKeys, name: "idKeys", alias: "id_keys", kind: kString, flags: rep},
		{num: otlppb.EntityRefDescriptionKeys, name: "descriptionKeys", alias: "description_keys", kind: kString, flags: rep},
	}},

	// message Resource {
	//   repeated opentelemetry.proto.common.v1.KeyValue attributes = 1;
	//   uint32 dropped_attributes_count = 2;
	//   repeated opentelemetry.proto.common.v1.EntityRef entity_refs = 3;
	// }
	mResource: {pkg: pkgResource, name: "Resource", fields: []field{
		{num: otlppb.ResourceAttributes, name: "attributes", alias: "attributes", kind: kMessage, flags: rep, msg: mKeyValue},
		{num: otlppb.ResourceDroppedAttributesCount, name: "droppedAttributesCount", alias: "dropped_attributes_count", kind: kUint32},
		{num: otlppb.ResourceEntityRefs, name: "entityRefs", alias: "entity_refs", kind: kMessage, flags: rep, msg: mEntityRef},
	}},

	// message TracesData {
	//   repeated ResourceSpans resource_spans = 1;
	// }
	// ExportTraceServiceRequest has the same fields.
	mTracesData: {pkg: pkgTrace, name: "TracesData", fields: []field{
		{num: otlppb.TracesDataResourceSpans, name: "resourceSpans", alias: "resource_spans", kind: kMessage, flags: rep, msg: mResourceSpans},
	}},
	// message ResourceSpans {
	//   reserved 1000;
	//   opentelemetry.proto.resource.v1.Resource resource = 1;
	//   repeated ScopeSpans scope_spans = 2;
	//   string schema_url = 3;
	// }
	mResourceSpans: {pkg: pkgTrace, name: "ResourceSpans", fields: []field{
		{num: otlppb.ResourceSpansResource, name: "resource", alias: "resource", kind: kMessage, msg: mResource},
		{num: otlppb.ResourceSpansScopeSpans, name: "scopeSpans", alias: "scope_spans", kind: kMessage, flags: rep, msg: mScopeSpans},
		{num: otlppb.ResourceSpansSchemaURL, name: "schemaUrl", alias: "schema_url", kind: kString},
	}},
	// message ScopeSpans {
	//   opentelemetry.proto.common.v1.InstrumentationScope scope = 1;
	//   repeated Span spans = 2;
	//   string schema_url = 3;
	// }
	mScopeSpans: {pkg: pkgTrace, name: "ScopeSpans", fields: []field{
		{num: otlppb.ScopeSpansScope, name: "scope", alias: "scope", kind: kMessage, msg: mInstrumentationScope},
		{num: otlppb.ScopeSpansSpans, name: "spans", alias: "spans", kind: kMessage, flags: rep, msg: mSpan},
		{num: otlppb.ScopeSpansSchemaURL, name: "schemaUrl", alias: "schema_url", kind: kString},
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
	mSpan: {pkg: pkgTrace, name: "Span", order: []uint32{otlppb.SpanTraceID, otlppb.SpanSpanID, otlppb.SpanTraceState, otlppb.SpanParentSpanID, otlppb.SpanFlags, otlppb.SpanName, otlppb.SpanKind, otlppb.SpanStartTimeUnixNano, otlppb.SpanEndTimeUnixNano, otlppb.SpanAttributes, otlppb.SpanDroppedAttributesCount, otlppb.SpanEvents, otlppb.SpanDroppedEventsCount, otlppb.SpanLinks, otlppb.SpanDroppedLinksCount, otlppb.SpanStatus}, fields: []field{
		{num: otlppb.SpanTraceID, name: "traceId", alias: "trace_id", kind: kHexID},
		{num: otlppb.SpanSpanID, name: "spanId", alias: "span_id", kind: kHexID},
		{num: otlppb.SpanTraceState, name: "traceState", alias: "trace_state", kind: kString},
		{num: otlppb.SpanParentSpanID, name: "parentSpanId", alias: "parent_span_id", kind: kHexID},
		{num: otlppb.SpanName, name: "name", alias: "name", kind: kString},
		{num: otlppb.SpanKind, name: "kind", alias: "kind", kind: kEnum, enum: enumSpanKind},
		{num: otlppb.SpanStartTimeUnixNano, name: "startTimeUnixNano", alias: "start_time_unix_nano", kind: kFixed64},
		{num: otlppb.SpanEndTimeUnixNano, name: "endTimeUnixNano", alias: "end_time_unix_nano", kind: kFixed64},
		{num: otlppb.SpanAttributes, name: "attributes", alias: "attributes", kind: kMessage, flags: rep, msg: mKeyValue},
		{num: otlppb.SpanDroppedAttributesCount, name: "droppedAttributesCount", alias: "dropped_attributes_count", kind: kUint32},
		{num: otlppb.SpanEvents, name: "events", alias: "events", kind: kMessage, flags: rep, msg: mSpanEvent},
		{num: otlppb.SpanDroppedEventsCount, name: "droppedEventsCount", alias: "dropped_events_count", kind: kUint32},
		{num: otlppb.SpanLinks, name: "links", alias: "links", kind: kMessage, flags: rep, msg: mSpanLink},
		{num: otlppb.SpanDroppedLinksCount, name: "droppedLinksCount", alias: "dropped_links_count", kind: kUint32},
		{num: otlppb.SpanStatus, name: "status", alias: "status", kind: kMessage, msg: mSpanStatus},
		{num: otlppb.SpanFlags, name: "flags", alias: "flags", kind: kFixed32},
	}},
	// message Span.Event {
	//   fixed64 time_unix_nano = 1;
	//   string name = 2;
	//   repeated opentelemetry.proto.common.v1.KeyValue attributes = 3;
	//   uint32 dropped_attributes_count = 4;
	// }
	mSpanEvent: {pkg: pkgTrace, name: "Span.Event", fields: []field{
		{num: otlppb.SpanEventTimeUnixNano, name: "timeUnixNano", alias: "time_unix_nano", kind: kFixed64},
		{num: otlppb.SpanEventName, name: "name", alias: "name", kind: kString},
		{num: otlppb.SpanEventAttributes, name: "attributes", alias: "attributes", kind: kMessage, flags: rep, msg: mKeyValue},
		{num: otlppb.SpanEventDroppedAttributesCount, name: "droppedAttributesCount", alias: "dropped_attributes_count", kind: kUint32},
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
		{num: otlppb.SpanLinkTraceID, name: "traceId", alias: "trace_id", kind: kHexID},
		{num: otlppb.SpanLinkSpanID, name: "spanId", alias: "span_id", kind: kHexID},
		{num: otlppb.SpanLinkTraceState, name: "traceState", alias: "trace_state", kind: kString},
		{num: otlppb.SpanLinkAttributes, name: "attributes", alias: "attributes", kind: kMessage, flags: rep, msg: mKeyValue},
		{num: otlppb.SpanLinkDroppedAttributesCount, name: "droppedAttributesCount", alias: "dropped_attributes_count", kind: kUint32},
		{num: otlppb.SpanLinkFlags, name: "flags", alias: "flags", kind: kFixed32},
	}},
	// message Status {
	//   reserved 1;
	//   string message = 2;
	//   StatusCode code = 3;
	// }
	mSpanStatus: {pkg: pkgTrace, name: "Status", fields: []field{
		{num: otlppb.StatusMessage, name: "message", alias: "message", kind: kString},
		{num: otlppb.StatusCode, name: "code", alias: "code", kind: kEnum, enum: enumStatusCode},
	}},

	// message MetricsData {
	//   repeated ResourceMetrics resource_metrics = 1;
	// }
	// ExportMetricsServiceRequest has the same fields.
	mMetricsData: {pkg: pkgMetrics, name: "MetricsData", fields: []field{
		{num: otlppb.MetricsDataResourceMetrics, name: "resourceMetrics", alias: "resource_metrics", kind: kMessage, flags: rep, msg: mResourceMetrics},
	}},
	// message ResourceMetrics {
	//   reserved 1000;
	//   opentelemetry.proto.resource.v1.Resource resource = 1;
	//   repeated ScopeMetrics scope_metrics = 2;
	//   string schema_url = 3;
	// }
	mResourceMetrics: {pkg: pkgMetrics, name: "ResourceMetrics", fields: []field{
		{num: otlppb.ResourceMetricsResource, name: "resource", alias: "resource", kind: kMessage, msg: mResource},
		{num: otlppb.ResourceMetricsScopeMetrics, name: "scopeMetrics", alias: "scope_metrics", kind: kMessage, flags: rep, msg: mScopeMetrics},
		{num: otlppb.ResourceMetricsSchemaURL, name: "schemaUrl", alias: "schema_url", kind: kString},
	}},
	// message ScopeMetrics {
	//   opentelemetry.proto.common.v1.InstrumentationScope scope = 1;
	//   repeated Metric metrics = 2;
	//   string schema_url = 3;
	// }
	mScopeMetrics: {pkg: pkgMetrics, name: "ScopeMetrics", fields: []field{
		{num: otlppb.ScopeMetricsScope, name: "scope", alias: "scope", kind: kMessage, msg: mInstrumentationScope},
		{num: otlppb.ScopeMetricsMetrics, name: "metrics", alias: "metrics", kind: kMessage, flags: rep, msg: mMetric},
		{num: otlppb.ScopeMetricsSchemaURL, name: "schemaUrl", alias: "schema_url", kind: kString},
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
		{num: otlppb.MetricName, name: "name", alias: "name", kind: kString},
		{num: otlppb.MetricDescription, name: "description", alias: "description", kind: kString},
		{num: otlppb.MetricUnit, name: "unit", alias: "unit", kind: kString},
		{num: otlppb.MetricGauge, name: "gauge", alias: "gauge", kind: kMessage, flags: one, msg: mGauge},
		{num: otlppb.MetricSum, name: "sum", alias: "sum", kind: kMessage, flags: one, msg: mSum},
		{num: otlppb.MetricHistogram, name: "histogram", alias: "histogram", kind: kMessage, flags: one, msg: mHistogram},
		{num: otlppb.MetricExponentialHistogram, name: "exponentialHistogram", alias: "exponential_histogram", kind: kMessage, flags: one, msg: mExponentialHistogram},
		{num: otlppb.MetricSummary, name: "summary", alias: "summary", kind: kMessage, flags: one, msg: mSummary},
		{num: otlppb.MetricMetadata, name: "metadata", alias: "metadata", kind: kMessage, flags: rep, msg: mKeyValue},
	}},
	// message Gauge {
	//   repeated NumberDataPoint data_points = 1;
	// }
	mGauge: {pkg: pkgMetrics, name: "Gauge", fields: []field{
		{num: otlppb.GaugeDataPoints, name: "dataPoints", alias: "data_points", kind: kMessage, flags: rep, msg: mNumberDataPoint},
	}},
	// message Sum {
	//   repeated NumberDataPoint data_points = 1;
	//   AggregationTemporality aggregation_temporality = 2;
	//   bool is_monotonic = 3;
	// }
	mSum: {pkg: pkgMetrics, name: "Sum", fields: []field{
		{num: otlppb.SumDataPoints, name: "dataPoints", alias: "data_points", kind: kMessage, flags: rep, msg: mNumberDataPoint},
		{num: otlppb.SumAggregationTemporality, name: "aggregationTemporality", alias: "aggregation_temporality", kind: kEnum, enum: enumAggregationTemporality},
		{num: otlppb.SumIsMonotonic, name: "isMonotonic", alias: "is_monotonic", kind: kBool},
	}},
	// message Histogram {
	//   repeated HistogramDataPoint data_points = 1;
	//   AggregationTemporality aggregation_temporality = 2;
	// }
	mHistogram: {pkg: pkgMetrics, name: "Histogram", fields: []field{
		{num: otlppb.HistogramDataPoints, name: "dataPoints", alias: "data_points", kind: kMessage, flags: rep, msg: mHistogramDataPoint},
		{num: otlppb.HistogramAggregationTemporality, name: "aggregationTemporality", alias: "aggregation_temporality", kind: kEnum, enum: enumAggregationTemporality},
	}},
	// message ExponentialHistogram {
	//   repeated ExponentialHistogramDataPoint data_points = 1;
	//   AggregationTemporality aggregation_temporality = 2;
	// }
	mExponentialHistogram: {pkg: pkgMetrics, name: "ExponentialHistogram", fields: []field{
		{num: otlppb.ExponentialHistogramDataPoints, name: "dataPoints", alias: "data_points", kind: kMessage, flags: rep, msg: mExponentialHistogramDataPoint},
		{num: otlppb.ExponentialHistogramAggregationTemporality, name: "aggregationTemporality", alias: "aggregation_temporality", kind: kEnum, enum: enumAggregationTemporality},
	}},
	// message Summary {
	//   repeated SummaryDataPoint data_points = 1;
	// }
	mSummary: {pkg: pkgMetrics, name: "Summary", fields: []field{
		{num: otlppb.SummaryDataPoints, name: "dataPoints", alias: "data_points", kind: kMessage, flags: rep, msg: mSummaryDataPoint},
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
	mNumberDataPoint: {pkg: pkgMetrics, name: "NumberDataPoint", order: []uint32{otlppb.NumberDataPointAttributes, otlppb.NumberDataPointStartTimeUnixNano, otlppb.NumberDataPointTimeUnixNano, otlppb.NumberDataPointAsDouble, otlppb.NumberDataPointAsInt, otlppb.NumberDataPointExemplars, otlppb.NumberDataPointFlags}, fields: []field{
		{num: otlppb.NumberDataPointStartTimeUnixNano, name: "startTimeUnixNano", alias: "start_time_unix_nano", kind: kFixed64},
		{num: otlppb.NumberDataPointTimeUnixNano, name: "timeUnixNano", alias: "time_unix_nano", kind: kFixed64},
		{num: otlppb.NumberDataPointAsDouble, name: "asDouble", alias: "as_double", kind: kDouble, flags: one},
		{num: otlppb.NumberDataPointExemplars, name: "exemplars", alias: "exemplars", kind: kMessage, flags: rep, msg: mExemplar},
		{num: otlppb.NumberDataPointAsInt, name: "asInt", alias: "as_int", kind: kSfixed64, flags: one},
		{num: otlppb.NumberDataPointAttributes, name: "attributes", alias: "attributes", kind: kMessage, flags: rep, msg: mKeyValue},
		{num: otlppb.NumberDataPointFlags, name: "flags", alias: "flags", kind: kUint32},
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
	mHistogramDataPoint: {pkg: pkgMetrics, name: "HistogramDataPoint", order: []uint32{otlppb.HistogramDataPointAttributes, otlppb.HistogramDataPointStartTimeUnixNano, otlppb.HistogramDataPointTimeUnixNano, otlppb.HistogramDataPointCount, otlppb.HistogramDataPointSum, otlppb.HistogramDataPointBucketCounts, otlppb.HistogramDataPointExplicitBounds, otlppb.HistogramDataPointExemplars, otlppb.HistogramDataPointFlags, otlppb.HistogramDataPointMin, otlppb.HistogramDataPointMax}, fields: []field{
		{num: otlppb.HistogramDataPointStartTimeUnixNano, name: "startTimeUnixNano", alias: "start_time_unix_nano", kind: kFixed64},
		{num: otlppb.HistogramDataPointTimeUnixNano, name: "timeUnixNano", alias: "time_unix_nano", kind: kFixed64},
		{num: otlppb.HistogramDataPointCount, name: "count", alias: "count", kind: kFixed64},
		{num: otlppb.HistogramDataPointSum, name: "sum", alias: "sum", kind: kDouble, flags: opt},
		{num: otlppb.HistogramDataPointBucketCounts, name: "bucketCounts", alias: "bucket_counts", kind: kFixed64, flags: rep},
		{num: otlppb.HistogramDataPointExplicitBounds, name: "explicitBounds", alias: "explicit_bounds", kind: kDouble, flags: rep},
		{num: otlppb.HistogramDataPointExemplars, name: "exemplars", alias: "exemplars", kind: kMessage, flags: rep, msg: mExemplar},
		{num: otlppb.HistogramDataPointAttributes, name: "attributes", alias: "attributes", kind: kMessage, flags: rep, msg: mKeyValue},
		{num: otlppb.HistogramDataPointFlags, name: "flags", alias: "flags", kind: kUint32},
		{num: otlppb.HistogramDataPointMin, name: "min", alias: "min", kind: kDouble, flags: opt},
		{num: otlppb.HistogramDataPointMax, name: "max", alias: "max", kind: kDouble, flags: opt},
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
		{num: otlppb.ExponentialHistogramDataPointAttributes, name: "attributes", alias: "attributes", kind: kMessage, flags: rep, msg: mKeyValue},
		{num: otlppb.ExponentialHistogramDataPointStartTimeUnixNano, name: "startTimeUnixNano", alias: "start_time_unix_nano", kind: kFixed64},
		{num: otlppb.ExponentialHistogramDataPointTimeUnixNano, name: "timeUnixNano", alias: "time_unix_nano", kind: kFixed64},
		{num: otlppb.ExponentialHistogramDataPointCount, name: "count", alias: "count", kind: kFixed64},
		{num: otlppb.ExponentialHistogramDataPointSum, name: "sum", alias: "sum", kind: kDouble, flags: opt},
		{num: otlppb.ExponentialHistogramDataPointScale, name: "scale", alias: "scale", kind: kSint32},
		{num: otlppb.ExponentialHistogramDataPointZeroCount, name: "zeroCount", alias: "zero_count", kind: kFixed64},
		{num: otlppb.ExponentialHistogramDataPointPositive, name: "positive", alias: "positive", kind: kMessage, msg: mBuckets},
		{num: otlppb.ExponentialHistogramDataPointNegative, name: "negative", alias: "negative", kind: kMessage, msg: mBuckets},
		{num: otlppb.ExponentialHistogramDataPointFlags, name: "flags", alias: "flags", kind: kUint32},
		{num: otlppb.ExponentialHistogramDataPointExemplars, name: "exemplars", alias: "exemplars", kind: kMessage, flags: rep, msg: mExemplar},
		{num: otlppb.ExponentialHistogramDataPointMin, name: "min", alias: "min", kind: kDouble, flags: opt},
		{num: otlppb.ExponentialHistogramDataPointMax, name: "max", alias: "max", kind: kDouble, flags: opt},
		{num: otlppb.ExponentialHistogramDataPointZeroThreshold, name: "zeroThreshold", alias: "zero_threshold", kind: kDouble},
	}},
	// message ExponentialHistogramDataPoint.Buckets {
	//   sint32 offset = 1;
	//   repeated uint64 bucket_counts = 2;
	// }
	mBuckets: {pkg: pkgMetrics, name: "ExponentialHistogramDataPoint.Buckets", fields: []field{
		{num: otlppb.ExponentialHistogramDataPointBucketsOffset, name: "offset", alias: "offset", kind: kSint32},
		{num: otlppb.ExponentialHistogramDataPointBucketsBucketCounts, name: "bucketCounts", alias: "bucket_counts", kind: kUint64, flags: rep},
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
	mSummaryDataPoint: {pkg: pkgMetrics, name: "SummaryDataPoint", order: []uint32{otlppb.SummaryDataPointAttributes, otlppb.SummaryDataPointStartTimeUnixNano, otlppb.SummaryDataPointTimeUnixNano, otlppb.SummaryDataPointCount, otlppb.SummaryDataPointSum, otlppb.SummaryDataPointQuantileValues, otlppb.SummaryDataPointFlags}, fields: []field{
		{num: otlppb.SummaryDataPointStartTimeUnixNano, name: "startTimeUnixNano", alias: "start_time_unix_nano", kind: kFixed64},
		{num: otlppb.SummaryDataPointTimeUnixNano, name: "timeUnixNano", alias: "time_unix_nano", kind: kFixed64},
		{num: otlppb.SummaryDataPointCount, name: "count", alias: "count", kind: kFixed64},
		{num: otlppb.SummaryDataPointSum, name: "sum", alias: "sum", kind: kDouble},
		{num: otlppb.SummaryDataPointQuantileValues, name: "quantileValues", alias: "quantile_values", kind: kMessage, flags: rep, msg: mValueAtQuantile},
		{num: otlppb.SummaryDataPointAttributes, name: "attributes", alias: "attributes", kind: kMessage, flags: rep, msg: mKeyValue},
		{num: otlppb.SummaryDataPointFlags, name: "flags", alias: "flags", kind: kUint32},
	}},
	// message SummaryDataPoint.ValueAtQuantile {
	//   double quantile = 1;
	//   double value = 2;
	// }
	mValueAtQuantile: {pkg: pkgMetrics, name: "SummaryDataPoint.ValueAtQuantile", fields: []field{
		{num: otlppb.SummaryDataPointValueAtQuantileQuantile, name: "quantile", alias: "quantile", kind: kDouble},
		{num: otlppb.SummaryDataPointValueAtQuantileValue, name: "value", alias: "value", kind: kDouble},
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
	mExemplar: {pkg: pkgMetrics, name: "Exemplar", order: []uint32{otlppb.ExemplarFilteredAttributes, otlppb.ExemplarTimeUnixNano, otlppb.ExemplarAsDouble, otlppb.ExemplarAsInt, otlppb.ExemplarSpanID, otlppb.ExemplarTraceID}, fields: []field{
		{num: otlppb.ExemplarTimeUnixNano, name: "timeUnixNano", alias: "time_unix_nano", kind: kFixed64},
		{num: otlppb.ExemplarAsDouble, name: "asDouble", alias: "as_double", kind: kDouble, flags: one},
		{num: otlppb.ExemplarSpanID, name: "spanId", alias: "span_id", kind: kHexID},
		{num: otlppb.ExemplarTraceID, name: "traceId", alias: "trace_id", kind: kHexID},
		{num: otlppb.ExemplarAsInt, name: "asInt", alias: "as_int", kind: kSfixed64, flags: one},
		{num: otlppb.ExemplarFilteredAttributes, name: "filteredAttributes", alias: "filtered_attributes", kind: kMessage, flags: rep, msg: mKeyValue},
	}},

	// message LogsData {
	//   repeated ResourceLogs resource_logs = 1;
	// }
	// ExportLogsServiceRequest has the same fields.
	mLogsData: {pkg: pkgLogs, name: "LogsData", fields: []field{
		{num: otlppb.LogsDataResourceLogs, name: "resourceLogs", alias: "resource_logs", kind: kMessage, flags: rep, msg: mResourceLogs},
	}},
	// message ResourceLogs {
	//   reserved 1000;
	//   opentelemetry.proto.resource.v1.Resource resource = 1;
	//   repeated ScopeLogs scope_logs = 2;
	//   string schema_url = 3;
	// }
	mResourceLogs: {pkg: pkgLogs, name: "ResourceLogs", fields: []field{
		{num: otlppb.ResourceLogsResource, name: "resource", alias: "resource", kind: kMessage, msg: mResource},
		{num: otlppb.ResourceLogsScopeLogs, name: "scopeLogs", alias: "scope_logs", kind: kMessage, flags: rep, msg: mScopeLogs},
		{num: otlppb.ResourceLogsSchemaURL, name: "schemaUrl", alias: "schema_url", kind: kString},
	}},
	// message ScopeLogs {
	//   opentelemetry.proto.common.v1.InstrumentationScope scope = 1;
	//   repeated LogRecord log_records = 2;
	//   string schema_url = 3;
	// }
	mScopeLogs: {pkg: pkgLogs, name: "ScopeLogs", fields: []field{
		{num: otlppb.ScopeLogsScope, name: "scope", alias: "scope", kind: kMessage, msg: mInstrumentationScope},
		{num: otlppb.ScopeLogsLogRecords, name: "logRecords", alias: "log_records", kind: kMessage, flags: rep, msg: mLogRecord},
		{num: otlppb.ScopeLogsSchemaURL, name: "schemaUrl", alias: "schema_url", kind: kString},
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
	mLogRecord: {pkg: pkgLogs, name: "LogRecord", order: []uint32{otlppb.LogRecordTimeUnixNano, otlppb.LogRecordObservedTimeUnixNano, otlppb.LogRecordSeverityNumber, otlppb.LogRecordSeverityText, otlppb.LogRecordBody, otlppb.LogRecordAttributes, otlppb.LogRecordDroppedAttributesCount, otlppb.LogRecordFlags, otlppb.LogRecordTraceID, otlppb.LogRecordSpanID, otlppb.LogRecordEventName}, fields: []field{
		{num: otlppb.LogRecordTimeUnixNano, name: "timeUnixNano", alias: "time_unix_nano", kind: kFixed64},
		{num: otlppb.LogRecordSeverityNumber, name: "severityNumber", alias: "severity_number", kind: kEnum, enum: enumSeverityNumber},
		{num: otlppb.LogRecordSeverityText, name: "severityText", alias: "severity_text", kind: kString},
		{num: otlppb.LogRecordBody, name: "body", alias: "body", kind: kMessage, msg: mAnyValue},
		{num: otlppb.LogRecordAttributes, name: "attributes", alias: "attributes", kind: kMessage, flags: rep, msg: mKeyValue},
		{num: otlppb.LogRecordDroppedAttributesCount, name: "droppedAttributesCount", alias: "dropped_attributes_count", kind: kUint32},
		{num: otlppb.LogRecordFlags, name: "flags", alias: "flags", kind: kFixed32},
		{num: otlppb.LogRecordTraceID, name: "traceId", alias: "trace_id", kind: kHexID},
		{num: otlppb.LogRecordSpanID, name: "spanId", alias: "span_id", kind: kHexID},
		{num: otlppb.LogRecordObservedTimeUnixNano, name: "observedTimeUnixNano", alias: "observed_time_unix_nano", kind: kFixed64},
		{num: otlppb.LogRecordEventName, name: "eventName", alias: "event_name", kind: kString},
	}},

	// message ProfilesData {
	//   repeated ResourceProfiles resource_profiles = 1;
	//   ProfilesDictionary dictionary = 2;
	// }
	// ExportProfilesServiceRequest has the same fields.
	mProfilesData: {pkg: pkgProfiles, name: "ProfilesData", fields: []field{
		{num: otlppb.ProfilesDataResourceProfiles, name: "resourceProfiles", alias: "resource_profiles", kind: kMessage, flags: rep, msg: mResourceProfiles},
		{num: otlppb.ProfilesDataDictionary, name: "dictionary", alias: "dictionary", kind: kMessage, msg: mProfilesDictionary},
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
		{num: otlppb.ProfilesDictionaryMappingTable, name: "mappingTable", alias: "mapping_table", kind: kMessage, flags: rep, msg: mMapping},
		{num: otlppb.ProfilesDictionaryLocationTable, name: "locationTable", alias: "location_table", kind: kMessage, flags: rep, msg: mLocation},
		{num: otlppb.ProfilesDictionaryFunctionTable, name: "functionTable", alias: "function_table", kind: kMessage, flags: rep, msg: mFunction},
		{num: otlppb.ProfilesDictionaryLinkTable, name: "linkTable", alias: "link_table", kind: kMessage, flags: rep, msg: mProfileLink},
		{num: otlppb.ProfilesDictionaryStringTable, name: "stringTable", alias: "string_table", kind: kString, flags: rep},
		{num: otlppb.ProfilesDictionaryAttributeTable, name: "attributeTable", alias: "attribute_table", kind: kMessage, flags: rep, msg: mKeyValueAndUnit},
		{num: otlppb.ProfilesDictionaryStackTable, name: "stackTable", alias: "stack_table", kind: kMessage, flags: rep, msg: mStack},
	}},
	// message ResourceProfiles {
	//   reserved 1000;
	//   opentelemetry.proto.resource.v1.Resource resource = 1;
	//   repeated ScopeProfiles scope_profiles = 2;
	//   string schema_url = 3;
	// }
	mResourceProfiles: {pkg: pkgProfiles, name: "ResourceProfiles", fields: []field{
		{num: otlppb.ResourceProfilesResource, name: "resource", alias: "resource", kind: kMessage, msg: mResource},
		{num: otlppb.ResourceProfilesScopeProfiles, name: "scopeProfiles", alias: "scope_profiles", kind: kMessage, flags: rep, msg: mScopeProfiles},
		{num: otlppb.ResourceProfilesSchemaURL, name: "schemaUrl", alias: "schema_url", kind: kString},
	}},
	// message ScopeProfiles {
	//   opentelemetry.proto.common.v1.InstrumentationScope scope = 1;
	//   repeated Profile profiles = 2;
	//   string schema_url = 3;
	// }
	mScopeProfiles: {pkg: pkgProfiles, name: "ScopeProfiles", fields: []field{
		{num: otlppb.ScopeProfilesScope, name: "scope", alias: "scope", kind: kMessage, msg: mInstrumentationScope},
		{num: otlppb.ScopeProfilesProfiles, name: "profiles", alias: "profiles", kind: kMessage, flags: rep, msg: mProfile},
		{num: otlppb.ScopeProfilesSchemaURL, name: "schemaUrl", alias: "schema_url", kind: kString},
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
		{num: otlppb.ProfileSampleType, name: "sampleType", alias: "sample_type", kind: kMessage, msg: mValueType},
		{num: otlppb.ProfileSamples, name: "samples", alias: "samples", kind: kMessage, flags: rep, msg: mSample},
		{num: otlppb.ProfileTimeUnixNano, name: "timeUnixNano", alias: "time_unix_nano", kind: kFixed64},
		{num: otlppb.ProfileDurationNano, name: "durationNano", alias: "duration_nano", kind: kUint64},
		{num: otlppb.ProfilePeriodType, name: "periodType", alias: "period_type", kind: kMessage, msg: mValueType},
		{num: otlppb.ProfilePeriod, name: "period", alias: "period", kind: kInt64},
		{num: otlppb.ProfileProfileID, name: "profileId", alias: "profile_id", kind: kProfileID},
		{num: otlppb.ProfileDroppedAttributesCount, name: "droppedAttributesCount", alias: "dropped_attributes_count", kind: kUint32},
		{num: otlppb.ProfileOriginalPayloadFormat, name: "originalPayloadFormat", alias: "original_payload_format", kind: kString},
		{num: otlppb.ProfileOriginalPayload, name: "originalPayload", alias: "original_payload", kind: kBytes},
		{num: otlppb.ProfileAttributeIndices, name: "attributeIndices", alias: "attribute_indices", kind: kInt32, flags: rep},
	}},
	// message Link {
	//   bytes trace_id = 1;
	//   bytes span_id = 2;
	// }
	mProfileLink: {pkg: pkgProfiles, name: "Link", fields: []field{
		{num: otlppb.LinkTraceID, name: "traceId", alias: "trace_id", kind: kHexID},
		{num: otlppb.LinkSpanID, name: "spanId", alias: "span_id", kind: kHexID},
	}},
	// message ValueType {
	//   int32 type_strindex = 1;
	//   int32 unit_strindex = 2;
	// }
	mValueType: {pkg: pkgProfiles, name: "ValueType", fields: []field{
		{num: otlppb.ValueTypeTypeStrindex, name: "typeStrindex", alias: "type_strindex", kind: kInt32},
		{num: otlppb.ValueTypeUnitStrindex, name: "unitStrindex", alias: "unit_strindex", kind: kInt32},
	}},
	// message Sample {
	//   int32 stack_index = 1;
	//   repeated int32 attribute_indices = 2;
	//   int32 link_index = 3;
	//   repeated int64 values = 4;
	//   repeated fixed64 timestamps_unix_nano = 5;
	// }
	mSample: {pkg: pkgProfiles, name: "Sample", fields: []field{
		{num: otlppb.SampleStackIndex, name: "stackIndex", alias: "stack_index", kind: kInt32},
		{num: otlppb.SampleAttributeIndices, name: "attributeIndices", alias: "attribute_indices", kind: kInt32, flags: rep},
		{num: otlppb.SampleLinkIndex, name: "linkIndex", alias: "link_index", kind: kInt32},
		{num: otlppb.SampleValues, name: "values", alias: "values", kind: kInt64, flags: rep},
		{num: otlppb.SampleTimestampsUnixNano, name: "timestampsUnixNano", alias: "timestamps_unix_nano", kind: kFixed64, flags: rep},
	}},
	// message Mapping {
	//   uint64 memory_start = 1;
	//   uint64 memory_limit = 2;
	//   uint64 file_offset = 3;
	//   int32 filename_strindex = 4;
	//   repeated int32 attribute_indices = 5;
	// }
	mMapping: {pkg: pkgProfiles, name: "Mapping", fields: []field{
		{num: otlppb.MappingMemoryStart, name: "memoryStart", alias: "memory_start", kind: kUint64},
		{num: otlppb.MappingMemoryLimit, name: "memoryLimit", alias: "memory_limit", kind: kUint64},
		{num: otlppb.MappingFileOffset, name: "fileOffset", alias: "file_offset", kind: kUint64},
		{num: otlppb.MappingFilenameStrindex, name: "filenameStrindex", alias: "filename_strindex", kind: kInt32},
		{num: otlppb.MappingAttributeIndices, name: "attributeIndices", alias: "attribute_indices", kind: kInt32, flags: rep},
	}},
	// message Stack {
	//   repeated int32 location_indices = 1;
	// }
	mStack: {pkg: pkgProfiles, name: "Stack", fields: []field{
		{num: otlppb.StackLocationIndices, name: "locationIndices", alias: "location_indices", kind: kInt32, flags: rep},
	}},
	// message Location {
	//   int32 mapping_index = 1;
	//   uint64 address = 2;
	//   repeated Line lines = 3;
	//   repeated int32 attribute_indices = 4;
	// }
	mLocation: {pkg: pkgProfiles, name: "Location", fields: []field{
		{num: otlppb.LocationMappingIndex, name: "mappingIndex", alias: "mapping_index", kind: kInt32},
		{num: otlppb.LocationAddress, name: "address", alias: "address", kind: kUint64},
		{num: otlppb.LocationLines, name: "lines", alias: "lines", kind: kMessage, flags: rep, msg: mLine},
		{num: otlppb.LocationAttributeIndices, name: "attributeIndices", alias: "attribute_indices", kind: kInt32, flags: rep},
	}},
	// message Line {
	//   int32 function_index = 1;
	//   int64 line = 2;
	//   int64 column = 3;
	// }
	mLine: {pkg: pkgProfiles, name: "Line", fields: []field{
		{num: otlppb.LineFunctionIndex, name: "functionIndex", alias: "function_index", kind: kInt32},
		{num: otlppb.LineLine, name: "line", alias: "line", kind: kInt64},
		{num: otlppb.LineColumn, name: "column", alias: "column", kind: kInt64},
	}},
	// message Function {
	//   int32 name_strindex = 1;
	//   int32 system_name_strindex = 2;
	//   int32 filename_strindex = 3;
	//   int64 start_line = 4;
	// }
	mFunction: {pkg: pkgProfiles, name: "Function", fields: []field{
		{num: otlppb.FunctionNameStrindex, name: "nameStrindex", alias: "name_strindex", kind: kInt32},
		{num: otlppb.FunctionSystemNameStrindex, name: "systemNameStrindex", alias: "system_name_strindex", kind: kInt32},
		{num: otlppb.FunctionFilenameStrindex, name: "filenameStrindex", alias: "filename_strindex", kind: kInt32},
		{num: otlppb.FunctionStartLine, name: "startLine", alias: "start_line", kind: kInt64},
	}},
	// message KeyValueAndUnit {
	//   int32 key_strindex = 1;
	//   opentelemetry.proto.common.v1.AnyValue value = 2;
	//   int32 unit_strindex = 3;
	// }
	mKeyValueAndUnit: {pkg: pkgProfiles, name: "KeyValueAndUnit", fields: []field{
		{num: otlppb.KeyValueAndUnitKeyStrindex, name: "keyStrindex", alias: "key_strindex", kind: kInt32},
		{num: otlppb.KeyValueAndUnitValue, name: "value", alias: "value", kind: kMessage, msg: mAnyValue},
		{num: otlppb.KeyValueAndUnitUnitStrindex, name: "unitStrindex", alias: "unit_strindex", kind: kInt32},
	}},

	// message ExportTraceServiceResponse {
	//   ExportTracePartialSuccess partial_success = 1;
	// }
	mExportTraceServiceResponse: {pkg: pkgCollectorTrace, name: "ExportTraceServiceResponse", fields: []field{
		{num: otlppb.ExportTraceServiceResponsePartialSuccess, name: "partialSuccess", alias: "partial_success", kind: kMessage, msg: mExportTracePartialSuccess},
	}},
	// message ExportTracePartialSuccess {
	//   int64 rejected_spans = 1;
	//   string error_message = 2;
	// }
	mExportTracePartialSuccess: {pkg: pkgCollectorTrace, name: "ExportTracePartialSuccess", fields: []field{
		{num: otlppb.ExportTracePartialSuccessRejectedSpans, name: "rejectedSpans", alias: "rejected_spans", kind: kInt64},
		{num: otlppb.ExportTracePartialSuccessErrorMessage, name: "errorMessage", alias: "error_message", kind: kString},
	}},
	// message ExportMetricsServiceResponse {
	//   ExportMetricsPartialSuccess partial_success = 1;
	// }
	mExportMetricsServiceResponse: {pkg: pkgCollectorMetrics, name: "ExportMetricsServiceResponse", fields: []field{
		{num: otlppb.ExportMetricsServiceResponsePartialSuccess, name: "partialSuccess", alias: "partial_success", kind: kMessage, msg: mExportMetricsPartialSuccess},
	}},
	// message ExportMetricsPartialSuccess {
	//   int64 rejected_data_points = 1;
	//   string error_message = 2;
	// }
	mExportMetricsPartialSuccess: {pkg: pkgCollectorMetrics, name: "ExportMetricsPartialSuccess", fields: []field{
		{num: otlppb.ExportMetricsPartialSuccessRejectedDataPoints, name: "rejectedDataPoints", alias: "rejected_data_points", kind: kInt64},
		{num: otlppb.ExportMetricsPartialSuccessErrorMessage, name: "errorMessage", alias: "error_message", kind: kString},
	}},
	// message ExportLogsServiceResponse {
	//   ExportLogsPartialSuccess partial_success = 1;
	// }
	mExportLogsServiceResponse: {pkg: pkgCollectorLogs, name: "ExportLogsServiceResponse", fields: []field{
		{num: otlppb.ExportLogsServiceResponsePartialSuccess, name: "partialSuccess", alias: "partial_success", kind: kMessage, msg: mExportLogsPartialSuccess},
	}},
	// message ExportLogsPartialSuccess {
	//   int64 rejected_log_records = 1;
	//   string error_message = 2;
	// }
	mExportLogsPartialSuccess: {pkg: pkgCollectorLogs, name: "ExportLogsPartialSuccess", fields: []field{
		{num: otlppb.ExportLogsPartialSuccessRejectedLogRecords, name: "rejectedLogRecords", alias: "rejected_log_records", kind: kInt64},
		{num: otlppb.ExportLogsPartialSuccessErrorMessage, name: "errorMessage", alias: "error_message", kind: kString},
	}},

	// message ExportProfilesServiceResponse {
	//   ExportProfilesPartialSuccess partial_success = 1;
	// }
	mExportProfilesServiceResponse: {pkg: pkgCollectorProfiles, name: "ExportProfilesServiceResponse", fields: []field{
		{num: otlppb.ExportProfilesServiceResponsePartialSuccess, name: "partialSuccess", alias: "partial_success", kind: kMessage, msg: mExportProfilesPartialSuccess},
	}},
	// message ExportProfilesPartialSuccess {
	//   int64 rejected_profiles = 1;
	//   string error_message = 2;
	// }
	mExportProfilesPartialSuccess: {pkg: pkgCollectorProfiles, name: "ExportProfilesPartialSuccess", fields: []field{
		{num: otlppb.ExportProfilesPartialSuccessRejectedProfiles, name: "rejectedProfiles", alias: "rejected_profiles", kind: kInt64},
		{num: otlppb.ExportProfilesPartialSuccessErrorMessage, name: "errorMessage", alias: "error_message", kind: kString},
	}},

	// package google.rpc;
	// message Status {
	//   int32 code = 1;
	//   string message = 2;
	//   repeated google.protobuf.Any details = 3;
	// }
	mRPCStatus: {name: "google.rpc.Status", fields: []field{
		{num: otlppb.RPCStatusCode, name: "code", alias: "code", kind: kInt32},
		{num: otlppb.RPCStatusMessage, name: "message", alias: "message", kind: kString},
		{num: otlppb.RPCStatusDetails, name: "details", alias: "details", kind: kMessage, flags: rep, msg: mAny},
	}},
	// package google.protobuf;
	// message Any {
	//   string type_url = 1;
	//   bytes value = 2;
	// }
	// Transcoded by the special-case code in wellknown.go.
	mAny: {name: "google.protobuf.Any", special: specialAny, fields: []field{
		{num: otlppb.AnyTypeURL, name: "typeUrl", alias: "type_url", kind: kString},
		{num: otlppb.AnyValue, name: "value", alias: "value", kind: kBytes},
	}},
}
