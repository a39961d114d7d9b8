package otlppb

// The field numbers of the OTLP v1.11 messages
// (github.com/open-telemetry/opentelemetry-proto: common, resource, trace,
// metrics, logs and profiles/v1development, and the collector services'
// requests and responses; generated for Go as go.opentelemetry.io/proto/otlp
// v1.11.1 and its profiles modules v0.4.0), named once for every walk
// of the module: <Message><Field> in Go's camel case, a nested message
// prefixed by its parent (Span.Event.time_unix_nano is
// SpanEventTimeUnixNano). Each block quotes the field's declaration.
//
// interop's TestOTLPPBFieldNumbers holds every constant of this file to the
// descriptors of those generated types, and every field of those messages to a constant, so that a wrong or
// missing number fails.

// opentelemetry/proto/common/v1/common.proto (package opentelemetry.proto.common.v1).

// opentelemetry.proto.common.v1.AnyValue.
const (
	AnyValueStringValue         = 1 // string string_value, oneof value
	AnyValueBoolValue           = 2 // bool bool_value, oneof value
	AnyValueIntValue            = 3 // int64 int_value, oneof value
	AnyValueDoubleValue         = 4 // double double_value, oneof value
	AnyValueArrayValue          = 5 // opentelemetry.proto.common.v1.ArrayValue array_value, oneof value
	AnyValueKvlistValue         = 6 // opentelemetry.proto.common.v1.KeyValueList kvlist_value, oneof value
	AnyValueBytesValue          = 7 // bytes bytes_value, oneof value
	AnyValueStringValueStrindex = 8 // int32 string_value_strindex, oneof value
)

// opentelemetry.proto.common.v1.ArrayValue.
const (
	ArrayValueValues = 1 // repeated opentelemetry.proto.common.v1.AnyValue values
)

// opentelemetry.proto.common.v1.KeyValueList.
const (
	KeyValueListValues = 1 // repeated opentelemetry.proto.common.v1.KeyValue values
)

// opentelemetry.proto.common.v1.KeyValue.
const (
	KeyValueKey         = 1 // string key
	KeyValueValue       = 2 // opentelemetry.proto.common.v1.AnyValue value
	KeyValueKeyStrindex = 3 // int32 key_strindex
)

// opentelemetry.proto.common.v1.InstrumentationScope.
const (
	InstrumentationScopeName                   = 1 // string name
	InstrumentationScopeVersion                = 2 // string version
	InstrumentationScopeAttributes             = 3 // repeated opentelemetry.proto.common.v1.KeyValue attributes
	InstrumentationScopeDroppedAttributesCount = 4 // uint32 dropped_attributes_count
)

// opentelemetry.proto.common.v1.EntityRef.
const (
	EntityRefSchemaURL       = 1 // string schema_url
	EntityRefType            = 2 // string type
	EntityRefIDKeys          = 3 // repeated string id_keys
	EntityRefDescriptionKeys = 4 // repeated string description_keys
)

// opentelemetry/proto/resource/v1/resource.proto (package opentelemetry.proto.resource.v1).

// opentelemetry.proto.resource.v1.Resource.
const (
	ResourceAttributes             = 1 // repeated opentelemetry.proto.common.v1.KeyValue attributes
	ResourceDroppedAttributesCount = 2 // uint32 dropped_attributes_count
	ResourceEntityRefs             = 3 // repeated opentelemetry.proto.common.v1.EntityRef entity_refs
)

// opentelemetry/proto/trace/v1/trace.proto (package opentelemetry.proto.trace.v1).

// opentelemetry.proto.trace.v1.TracesData.
const (
	TracesDataResourceSpans = 1 // repeated opentelemetry.proto.trace.v1.ResourceSpans resource_spans
)

// opentelemetry.proto.trace.v1.ResourceSpans.
const (
	ResourceSpansResource   = 1 // opentelemetry.proto.resource.v1.Resource resource
	ResourceSpansScopeSpans = 2 // repeated opentelemetry.proto.trace.v1.ScopeSpans scope_spans
	ResourceSpansSchemaURL  = 3 // string schema_url
)

// opentelemetry.proto.trace.v1.ScopeSpans.
const (
	ScopeSpansScope     = 1 // opentelemetry.proto.common.v1.InstrumentationScope scope
	ScopeSpansSpans     = 2 // repeated opentelemetry.proto.trace.v1.Span spans
	ScopeSpansSchemaURL = 3 // string schema_url
)

// opentelemetry.proto.trace.v1.Span.
const (
	SpanTraceID                = 1  // bytes trace_id
	SpanSpanID                 = 2  // bytes span_id
	SpanTraceState             = 3  // string trace_state
	SpanParentSpanID           = 4  // bytes parent_span_id
	SpanFlags                  = 16 // fixed32 flags
	SpanName                   = 5  // string name
	SpanKind                   = 6  // opentelemetry.proto.trace.v1.Span.SpanKind kind
	SpanStartTimeUnixNano      = 7  // fixed64 start_time_unix_nano
	SpanEndTimeUnixNano        = 8  // fixed64 end_time_unix_nano
	SpanAttributes             = 9  // repeated opentelemetry.proto.common.v1.KeyValue attributes
	SpanDroppedAttributesCount = 10 // uint32 dropped_attributes_count
	SpanEvents                 = 11 // repeated opentelemetry.proto.trace.v1.Span.Event events
	SpanDroppedEventsCount     = 12 // uint32 dropped_events_count
	SpanLinks                  = 13 // repeated opentelemetry.proto.trace.v1.Span.Link links
	SpanDroppedLinksCount      = 14 // uint32 dropped_links_count
	SpanStatus                 = 15 // opentelemetry.proto.trace.v1.Status status
)

// opentelemetry.proto.trace.v1.Span.Event.
const (
	SpanEventTimeUnixNano           = 1 // fixed64 time_unix_nano
	SpanEventName                   = 2 // string name
	SpanEventAttributes             = 3 // repeated opentelemetry.proto.common.v1.KeyValue attributes
	SpanEventDroppedAttributesCount = 4 // uint32 dropped_attributes_count
)

// opentelemetry.proto.trace.v1.Span.Link.
const (
	SpanLinkTraceID                = 1 // bytes trace_id
	SpanLinkSpanID                 = 2 // bytes span_id
	SpanLinkTraceState             = 3 // string trace_state
	SpanLinkAttributes             = 4 // repeated opentelemetry.proto.common.v1.KeyValue attributes
	SpanLinkDroppedAttributesCount = 5 // uint32 dropped_attributes_count
	SpanLinkFlags                  = 6 // fixed32 flags
)

// opentelemetry.proto.trace.v1.Status.
const (
	StatusMessage = 2 // string message
	StatusCode    = 3 // opentelemetry.proto.trace.v1.Status.StatusCode code
)

// opentelemetry/proto/metrics/v1/metrics.proto (package opentelemetry.proto.metrics.v1).

// opentelemetry.proto.metrics.v1.MetricsData.
const (
	MetricsDataResourceMetrics = 1 // repeated opentelemetry.proto.metrics.v1.ResourceMetrics resource_metrics
)

// opentelemetry.proto.metrics.v1.ResourceMetrics.
const (
	ResourceMetricsResource     = 1 // opentelemetry.proto.resource.v1.Resource resource
	ResourceMetricsScopeMetrics = 2 // repeated opentelemetry.proto.metrics.v1.ScopeMetrics scope_metrics
	ResourceMetricsSchemaURL    = 3 // string schema_url
)

// opentelemetry.proto.metrics.v1.ScopeMetrics.
const (
	ScopeMetricsScope     = 1 // opentelemetry.proto.common.v1.InstrumentationScope scope
	ScopeMetricsMetrics   = 2 // repeated opentelemetry.proto.metrics.v1.Metric metrics
	ScopeMetricsSchemaURL = 3 // string schema_url
)

// opentelemetry.proto.metrics.v1.Metric.
const (
	MetricName                 = 1  // string name
	MetricDescription          = 2  // string description
	MetricUnit                 = 3  // string unit
	MetricGauge                = 5  // opentelemetry.proto.metrics.v1.Gauge gauge, oneof data
	MetricSum                  = 7  // opentelemetry.proto.metrics.v1.Sum sum, oneof data
	MetricHistogram            = 9  // opentelemetry.proto.metrics.v1.Histogram histogram, oneof data
	MetricExponentialHistogram = 10 // opentelemetry.proto.metrics.v1.ExponentialHistogram exponential_histogram, oneof data
	MetricSummary              = 11 // opentelemetry.proto.metrics.v1.Summary summary, oneof data
	MetricMetadata             = 12 // repeated opentelemetry.proto.common.v1.KeyValue metadata
)

// opentelemetry.proto.metrics.v1.Gauge.
const (
	GaugeDataPoints = 1 // repeated opentelemetry.proto.metrics.v1.NumberDataPoint data_points
)

// opentelemetry.proto.metrics.v1.Sum.
const (
	SumDataPoints             = 1 // repeated opentelemetry.proto.metrics.v1.NumberDataPoint data_points
	SumAggregationTemporality = 2 // opentelemetry.proto.metrics.v1.AggregationTemporality aggregation_temporality
	SumIsMonotonic            = 3 // bool is_monotonic
)

// opentelemetry.proto.metrics.v1.Histogram.
const (
	HistogramDataPoints             = 1 // repeated opentelemetry.proto.metrics.v1.HistogramDataPoint data_points
	HistogramAggregationTemporality = 2 // opentelemetry.proto.metrics.v1.AggregationTemporality aggregation_temporality
)

// opentelemetry.proto.metrics.v1.ExponentialHistogram.
const (
	ExponentialHistogramDataPoints             = 1 // repeated opentelemetry.proto.metrics.v1.ExponentialHistogramDataPoint data_points
	ExponentialHistogramAggregationTemporality = 2 // opentelemetry.proto.metrics.v1.AggregationTemporality aggregation_temporality
)

// opentelemetry.proto.metrics.v1.Summary.
const (
	SummaryDataPoints = 1 // repeated opentelemetry.proto.metrics.v1.SummaryDataPoint data_points
)

// opentelemetry.proto.metrics.v1.NumberDataPoint.
const (
	NumberDataPointAttributes        = 7 // repeated opentelemetry.proto.common.v1.KeyValue attributes
	NumberDataPointStartTimeUnixNano = 2 // fixed64 start_time_unix_nano
	NumberDataPointTimeUnixNano      = 3 // fixed64 time_unix_nano
	NumberDataPointAsDouble          = 4 // double as_double, oneof value
	NumberDataPointAsInt             = 6 // sfixed64 as_int, oneof value
	NumberDataPointExemplars         = 5 // repeated opentelemetry.proto.metrics.v1.Exemplar exemplars
	NumberDataPointFlags             = 8 // uint32 flags
)

// opentelemetry.proto.metrics.v1.HistogramDataPoint.
const (
	HistogramDataPointAttributes        = 9  // repeated opentelemetry.proto.common.v1.KeyValue attributes
	HistogramDataPointStartTimeUnixNano = 2  // fixed64 start_time_unix_nano
	HistogramDataPointTimeUnixNano      = 3  // fixed64 time_unix_nano
	HistogramDataPointCount             = 4  // fixed64 count
	HistogramDataPointSum               = 5  // double sum
	HistogramDataPointBucketCounts      = 6  // repeated fixed64 bucket_counts
	HistogramDataPointExplicitBounds    = 7  // repeated double explicit_bounds
	HistogramDataPointExemplars         = 8  // repeated opentelemetry.proto.metrics.v1.Exemplar exemplars
	HistogramDataPointFlags             = 10 // uint32 flags
	HistogramDataPointMin               = 11 // double min
	HistogramDataPointMax               = 12 // double max
)

// opentelemetry.proto.metrics.v1.ExponentialHistogramDataPoint.
const (
	ExponentialHistogramDataPointAttributes        = 1  // repeated opentelemetry.proto.common.v1.KeyValue attributes
	ExponentialHistogramDataPointStartTimeUnixNano = 2  // fixed64 start_time_unix_nano
	ExponentialHistogramDataPointTimeUnixNano      = 3  // fixed64 time_unix_nano
	ExponentialHistogramDataPointCount             = 4  // fixed64 count
	ExponentialHistogramDataPointSum               = 5  // double sum
	ExponentialHistogramDataPointScale             = 6  // sint32 scale
	ExponentialHistogramDataPointZeroCount         = 7  // fixed64 zero_count
	ExponentialHistogramDataPointPositive          = 8  // opentelemetry.proto.metrics.v1.ExponentialHistogramDataPoint.Buckets positive
	ExponentialHistogramDataPointNegative          = 9  // opentelemetry.proto.metrics.v1.ExponentialHistogramDataPoint.Buckets negative
	ExponentialHistogramDataPointFlags             = 10 // uint32 flags
	ExponentialHistogramDataPointExemplars         = 11 // repeated opentelemetry.proto.metrics.v1.Exemplar exemplars
	ExponentialHistogramDataPointMin               = 12 // double min
	ExponentialHistogramDataPointMax               = 13 // double max
	ExponentialHistogramDataPointZeroThreshold     = 14 // double zero_threshold
)

// opentelemetry.proto.metrics.v1.ExponentialHistogramDataPoint.Buckets.
const (
	ExponentialHistogramDataPointBucketsOffset       = 1 // sint32 offset
	ExponentialHistogramDataPointBucketsBucketCounts = 2 // repeated uint64 bucket_counts
)

// opentelemetry.proto.metrics.v1.SummaryDataPoint.
const (
	SummaryDataPointAttributes        = 7 // repeated opentelemetry.proto.common.v1.KeyValue attributes
	SummaryDataPointStartTimeUnixNano = 2 // fixed64 start_time_unix_nano
	SummaryDataPointTimeUnixNano      = 3 // fixed64 time_unix_nano
	SummaryDataPointCount             = 4 // fixed64 count
	SummaryDataPointSum               = 5 // double sum
	SummaryDataPointQuantileValues    = 6 // repeated opentelemetry.proto.metrics.v1.SummaryDataPoint.ValueAtQuantile quantile_values
	SummaryDataPointFlags             = 8 // uint32 flags
)

// opentelemetry.proto.metrics.v1.SummaryDataPoint.ValueAtQuantile.
const (
	SummaryDataPointValueAtQuantileQuantile = 1 // double quantile
	SummaryDataPointValueAtQuantileValue    = 2 // double value
)

// opentelemetry.proto.metrics.v1.Exemplar.
const (
	ExemplarFilteredAttributes = 7 // repeated opentelemetry.proto.common.v1.KeyValue filtered_attributes
	ExemplarTimeUnixNano       = 2 // fixed64 time_unix_nano
	ExemplarAsDouble           = 3 // double as_double, oneof value
	ExemplarAsInt              = 6 // sfixed64 as_int, oneof value
	ExemplarSpanID             = 4 // bytes span_id
	ExemplarTraceID            = 5 // bytes trace_id
)

// opentelemetry/proto/logs/v1/logs.proto (package opentelemetry.proto.logs.v1).

// opentelemetry.proto.logs.v1.LogsData.
const (
	LogsDataResourceLogs = 1 // repeated opentelemetry.proto.logs.v1.ResourceLogs resource_logs
)

// opentelemetry.proto.logs.v1.ResourceLogs.
const (
	ResourceLogsResource  = 1 // opentelemetry.proto.resource.v1.Resource resource
	ResourceLogsScopeLogs = 2 // repeated opentelemetry.proto.logs.v1.ScopeLogs scope_logs
	ResourceLogsSchemaURL = 3 // string schema_url
)

// opentelemetry.proto.logs.v1.ScopeLogs.
const (
	ScopeLogsScope      = 1 // opentelemetry.proto.common.v1.InstrumentationScope scope
	ScopeLogsLogRecords = 2 // repeated opentelemetry.proto.logs.v1.LogRecord log_records
	ScopeLogsSchemaURL  = 3 // string schema_url
)

// opentelemetry.proto.logs.v1.LogRecord.
const (
	LogRecordTimeUnixNano           = 1  // fixed64 time_unix_nano
	LogRecordObservedTimeUnixNano   = 11 // fixed64 observed_time_unix_nano
	LogRecordSeverityNumber         = 2  // opentelemetry.proto.logs.v1.SeverityNumber severity_number
	LogRecordSeverityText           = 3  // string severity_text
	LogRecordBody                   = 5  // opentelemetry.proto.common.v1.AnyValue body
	LogRecordAttributes             = 6  // repeated opentelemetry.proto.common.v1.KeyValue attributes
	LogRecordDroppedAttributesCount = 7  // uint32 dropped_attributes_count
	LogRecordFlags                  = 8  // fixed32 flags
	LogRecordTraceID                = 9  // bytes trace_id
	LogRecordSpanID                 = 10 // bytes span_id
	LogRecordEventName              = 12 // string event_name
)

// opentelemetry/proto/profiles/v1development/profiles.proto (package opentelemetry.proto.profiles.v1development).

// opentelemetry.proto.profiles.v1development.ProfilesDictionary.
const (
	ProfilesDictionaryMappingTable   = 1 // repeated opentelemetry.proto.profiles.v1development.Mapping mapping_table
	ProfilesDictionaryLocationTable  = 2 // repeated opentelemetry.proto.profiles.v1development.Location location_table
	ProfilesDictionaryFunctionTable  = 3 // repeated opentelemetry.proto.profiles.v1development.Function function_table
	ProfilesDictionaryLinkTable      = 4 // repeated opentelemetry.proto.profiles.v1development.Link link_table
	ProfilesDictionaryStringTable    = 5 // repeated string string_table
	ProfilesDictionaryAttributeTable = 6 // repeated opentelemetry.proto.profiles.v1development.KeyValueAndUnit attribute_table
	ProfilesDictionaryStackTable     = 7 // repeated opentelemetry.proto.profiles.v1development.Stack stack_table
)

// opentelemetry.proto.profiles.v1development.ProfilesData.
const (
	ProfilesDataResourceProfiles = 1 // repeated opentelemetry.proto.profiles.v1development.ResourceProfiles resource_profiles
	ProfilesDataDictionary       = 2 // opentelemetry.proto.profiles.v1development.ProfilesDictionary dictionary
)

// opentelemetry.proto.profiles.v1development.ResourceProfiles.
const (
	ResourceProfilesResource      = 1 // opentelemetry.proto.resource.v1.Resource resource
	ResourceProfilesScopeProfiles = 2 // repeated opentelemetry.proto.profiles.v1development.ScopeProfiles scope_profiles
	ResourceProfilesSchemaURL     = 3 // string schema_url
)

// opentelemetry.proto.profiles.v1development.ScopeProfiles.
const (
	ScopeProfilesScope     = 1 // opentelemetry.proto.common.v1.InstrumentationScope scope
	ScopeProfilesProfiles  = 2 // repeated opentelemetry.proto.profiles.v1development.Profile profiles
	ScopeProfilesSchemaURL = 3 // string schema_url
)

// opentelemetry.proto.profiles.v1development.Profile.
const (
	ProfileSampleType             = 1  // opentelemetry.proto.profiles.v1development.ValueType sample_type
	ProfileSamples                = 2  // repeated opentelemetry.proto.profiles.v1development.Sample samples
	ProfileTimeUnixNano           = 3  // fixed64 time_unix_nano
	ProfileDurationNano           = 4  // uint64 duration_nano
	ProfilePeriodType             = 5  // opentelemetry.proto.profiles.v1development.ValueType period_type
	ProfilePeriod                 = 6  // int64 period
	ProfileProfileID              = 7  // bytes profile_id
	ProfileDroppedAttributesCount = 8  // uint32 dropped_attributes_count
	ProfileOriginalPayloadFormat  = 9  // string original_payload_format
	ProfileOriginalPayload        = 10 // bytes original_payload
	ProfileAttributeIndices       = 11 // repeated int32 attribute_indices
)

// opentelemetry.proto.profiles.v1development.Link.
const (
	LinkTraceID = 1 // bytes trace_id
	LinkSpanID  = 2 // bytes span_id
)

// opentelemetry.proto.profiles.v1development.ValueType.
const (
	ValueTypeTypeStrindex = 1 // int32 type_strindex
	ValueTypeUnitStrindex = 2 // int32 unit_strindex
)

// opentelemetry.proto.profiles.v1development.Sample.
const (
	SampleStackIndex         = 1 // int32 stack_index
	SampleAttributeIndices   = 2 // repeated int32 attribute_indices
	SampleLinkIndex          = 3 // int32 link_index
	SampleValues             = 4 // repeated int64 values
	SampleTimestampsUnixNano = 5 // repeated fixed64 timestamps_unix_nano
)

// opentelemetry.proto.profiles.v1development.Mapping.
const (
	MappingMemoryStart      = 1 // uint64 memory_start
	MappingMemoryLimit      = 2 // uint64 memory_limit
	MappingFileOffset       = 3 // uint64 file_offset
	MappingFilenameStrindex = 4 // int32 filename_strindex
	MappingAttributeIndices = 5 // repeated int32 attribute_indices
)

// opentelemetry.proto.profiles.v1development.Stack.
const (
	StackLocationIndices = 1 // repeated int32 location_indices
)

// opentelemetry.proto.profiles.v1development.Location.
const (
	LocationMappingIndex     = 1 // int32 mapping_index
	LocationAddress          = 2 // uint64 address
	LocationLines            = 3 // repeated opentelemetry.proto.profiles.v1development.Line lines
	LocationAttributeIndices = 4 // repeated int32 attribute_indices
)

// opentelemetry.proto.profiles.v1development.Line.
const (
	LineFunctionIndex = 1 // int32 function_index
	LineLine          = 2 // int64 line
	LineColumn        = 3 // int64 column
)

// opentelemetry.proto.profiles.v1development.Function.
const (
	FunctionNameStrindex       = 1 // int32 name_strindex
	FunctionSystemNameStrindex = 2 // int32 system_name_strindex
	FunctionFilenameStrindex   = 3 // int32 filename_strindex
	FunctionStartLine          = 4 // int64 start_line
)

// opentelemetry.proto.profiles.v1development.KeyValueAndUnit.
const (
	KeyValueAndUnitKeyStrindex  = 1 // int32 key_strindex
	KeyValueAndUnitValue        = 2 // opentelemetry.proto.common.v1.AnyValue value
	KeyValueAndUnitUnitStrindex = 3 // int32 unit_strindex
)

// opentelemetry/proto/collector/trace/v1/trace_service.proto (package opentelemetry.proto.collector.trace.v1).

// opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest.
const (
	ExportTraceServiceRequestResourceSpans = 1 // repeated opentelemetry.proto.trace.v1.ResourceSpans resource_spans
)

// opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse.
const (
	ExportTraceServiceResponsePartialSuccess = 1 // opentelemetry.proto.collector.trace.v1.ExportTracePartialSuccess partial_success
)

// opentelemetry.proto.collector.trace.v1.ExportTracePartialSuccess.
const (
	ExportTracePartialSuccessRejectedSpans = 1 // int64 rejected_spans
	ExportTracePartialSuccessErrorMessage  = 2 // string error_message
)

// opentelemetry/proto/collector/metrics/v1/metrics_service.proto (package opentelemetry.proto.collector.metrics.v1).

// opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest.
const (
	ExportMetricsServiceRequestResourceMetrics = 1 // repeated opentelemetry.proto.metrics.v1.ResourceMetrics resource_metrics
)

// opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse.
const (
	ExportMetricsServiceResponsePartialSuccess = 1 // opentelemetry.proto.collector.metrics.v1.ExportMetricsPartialSuccess partial_success
)

// opentelemetry.proto.collector.metrics.v1.ExportMetricsPartialSuccess.
const (
	ExportMetricsPartialSuccessRejectedDataPoints = 1 // int64 rejected_data_points
	ExportMetricsPartialSuccessErrorMessage       = 2 // string error_message
)

// opentelemetry/proto/collector/logs/v1/logs_service.proto (package opentelemetry.proto.collector.logs.v1).

// opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest.
const (
	ExportLogsServiceRequestResourceLogs = 1 // repeated opentelemetry.proto.logs.v1.ResourceLogs resource_logs
)

// opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse.
const (
	ExportLogsServiceResponsePartialSuccess = 1 // opentelemetry.proto.collector.logs.v1.ExportLogsPartialSuccess partial_success
)

// opentelemetry.proto.collector.logs.v1.ExportLogsPartialSuccess.
const (
	ExportLogsPartialSuccessRejectedLogRecords = 1 // int64 rejected_log_records
	ExportLogsPartialSuccessErrorMessage       = 2 // string error_message
)

// opentelemetry/proto/collector/profiles/v1development/profiles_service.proto (package opentelemetry.proto.collector.profiles.v1development).

// opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest.
const (
	ExportProfilesServiceRequestResourceProfiles = 1 // repeated opentelemetry.proto.profiles.v1development.ResourceProfiles resource_profiles
	ExportProfilesServiceRequestDictionary       = 2 // opentelemetry.proto.profiles.v1development.ProfilesDictionary dictionary
)

// opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceResponse.
const (
	ExportProfilesServiceResponsePartialSuccess = 1 // opentelemetry.proto.collector.profiles.v1development.ExportProfilesPartialSuccess partial_success
)

// opentelemetry.proto.collector.profiles.v1development.ExportProfilesPartialSuccess.
const (
	ExportProfilesPartialSuccessRejectedProfiles = 1 // int64 rejected_profiles
	ExportProfilesPartialSuccessErrorMessage     = 2 // string error_message
)
