package otlpdecode

import (
	"testing"

	"github.com/otlp-lite/otlp-lite/otlppb"
)

// TestSharedLayout holds what the walks assume when they read the four
// signals with one set of names (requestResources, resourceScopes...,
// taken from traces): that the request, Resource* and Scope* messages of
// every signal, and the containers of the five metric data kinds, number
// their fields alike.
func TestSharedLayout(t *testing.T) {
	type layout [7]uint32 // request, resource, scopes, schema; scope, items, schema
	want := layout{requestResources, resourceResource, resourceScopes, resourceSchema, scopeScope, scopeItemsField, scopeSchema}
	for name, got := range map[string]layout{
		"traces": {otlppb.ExportTraceServiceRequestResourceSpans, otlppb.ResourceSpansResource, otlppb.ResourceSpansScopeSpans, otlppb.ResourceSpansSchemaURL,
			otlppb.ScopeSpansScope, otlppb.ScopeSpansSpans, otlppb.ScopeSpansSchemaURL},
		"metrics": {otlppb.ExportMetricsServiceRequestResourceMetrics, otlppb.ResourceMetricsResource, otlppb.ResourceMetricsScopeMetrics, otlppb.ResourceMetricsSchemaURL,
			otlppb.ScopeMetricsScope, otlppb.ScopeMetricsMetrics, otlppb.ScopeMetricsSchemaURL},
		"logs": {otlppb.ExportLogsServiceRequestResourceLogs, otlppb.ResourceLogsResource, otlppb.ResourceLogsScopeLogs, otlppb.ResourceLogsSchemaURL,
			otlppb.ScopeLogsScope, otlppb.ScopeLogsLogRecords, otlppb.ScopeLogsSchemaURL},
		"profiles": {otlppb.ExportProfilesServiceRequestResourceProfiles, otlppb.ResourceProfilesResource, otlppb.ResourceProfilesScopeProfiles, otlppb.ResourceProfilesSchemaURL,
			otlppb.ScopeProfilesScope, otlppb.ScopeProfilesProfiles, otlppb.ScopeProfilesSchemaURL},
		"data files": {otlppb.TracesDataResourceSpans, otlppb.ResourceSpansResource, otlppb.ResourceSpansScopeSpans, otlppb.ResourceSpansSchemaURL,
			otlppb.ScopeSpansScope, otlppb.ScopeSpansSpans, otlppb.ScopeSpansSchemaURL},
	} {
		if got != want {
			t.Errorf("%s: field numbers %v, the walks read %v", name, got, want)
		}
	}
	// containerReason reads a Resource* or a Scope* message alike.
	if resourceResource != scopeScope || resourceSchema != scopeSchema {
		t.Error("Resource* and Scope* number their header fields differently")
	}
	// The data points of every metric kind are in field GaugeDataPoints
	// of its container.
	for _, n := range []uint32{otlppb.SumDataPoints, otlppb.HistogramDataPoints, otlppb.ExponentialHistogramDataPoints, otlppb.SummaryDataPoints} {
		if n != otlppb.GaugeDataPoints {
			t.Errorf("a metric kind keeps its data points in field %d, not %d", n, otlppb.GaugeDataPoints)
		}
	}
}
