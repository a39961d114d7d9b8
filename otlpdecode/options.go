package otlpdecode

// DefaultMaxAnyValueDepth is the AnyValue nesting limit used when
// Options.MaxAnyValueDepth is 0.
//
// An attribute value or a log body is at depth 1; every array_value or
// kvlist_value adds one level. OTLP itself sets no limit (protobuf-go
// stops at 10000 nested messages), and a request nested deeper than the
// limit is refused as a whole, losing its valid items too, so the limit is
// set far beyond anything real telemetry nests (a few levels) rather than
// tight. What it must bound is recursion: the check recurses once per
// level, about 600 bytes of stack for a kvlist level, so 128 levels cost
// under 80 KiB per request. The rest of the cost of a hostile payload
// (time, memory) is bounded by the request size, not by the depth.
const DefaultMaxAnyValueDepth = 128

// maxAnyValueDepthCeiling caps Options.MaxAnyValueDepth. Without a cap a
// large setting would let a request of a few tens of megabytes, nested a
// million levels deep, exhaust the goroutine stack, which is a fatal
// error rather than a refused request. 10000 is protobuf-go's default
// recursion limit: about 6 MiB of stack at most.
const maxAnyValueDepthCeiling = 10000

// Options control validation. The zero value (or a nil *Options) means: no
// UTF-8 check, MaxAnyValueDepth DefaultMaxAnyValueDepth.
type Options struct {
	// ValidateUTF8 rejects items whose string fields (names, keys, string
	// values...), or whose resource's or scope's string fields, are not
	// valid UTF-8. protobuf requires UTF-8 in proto3 `string` fields, but
	// many producers do not honour it, so the check is opt-in.
	ValidateUTF8 bool

	// MaxAnyValueDepth is the nesting limit for AnyValue arrays and
	// kvlists; 0 means DefaultMaxAnyValueDepth, and values above 10000
	// (protobuf-go's recursion limit) mean 10000. A request nested deeper
	// is refused as a whole (an error, not a rejected item).
	MaxAnyValueDepth int

	// Visit, when set (with its Visitor), hands every item the Check*
	// call validates to the visitor, and makes the AppendValid* call of
	// the same request remove the items it rejected too; it belongs to
	// one request at a time. nil (the default) is plain validation.
	Visit *Visit
}

// visit returns the request's Visit, or nil when there is no visitor.
func (o *Options) visit() *Visit {
	if o == nil || o.Visit == nil || o.Visit.Visitor == nil {
		return nil
	}
	return o.Visit
}

func (o *Options) validateUTF8() bool {
	return o != nil && o.ValidateUTF8
}

func (o *Options) maxDepth() int {
	if o == nil || o.MaxAnyValueDepth <= 0 {
		return DefaultMaxAnyValueDepth
	}
	return min(o.MaxAnyValueDepth, maxAnyValueDepthCeiling)
}

// Result summarises a validated request.
type Result struct {
	// Items is the number of spans, metric data points (of all five kinds),
	// log records or profiles in the request.
	Items int

	// Rejected is how many of Items failed validation.
	Rejected int

	// FirstRejection describes the first rejected item and where it is,
	// e.g. `resource_spans[0].scope_spans[1].spans[7]: trace_id is 3 bytes,
	// want 16`. It is empty when Rejected == 0.
	FirstRejection string

	// Samples is, for profiles, the number of samples in the profiles of
	// Items, and RejectedSamples the number in the profiles of Rejected:
	// the Collector counts profiles in samples in its receiver metrics
	// (otelcol_receiver_accepted_profile_samples), while the partial
	// success counts profiles (rejected_profiles). Both are 0 for the
	// other signals.
	Samples, RejectedSamples int

	// IgnoredStrindex counts the KeyValue.key_strindex and
	// AnyValue.string_value_strindex fields of a traces, metrics or logs
	// request. common.proto (v1.11) defines them for the profiles signal
	// only and asks receivers of the other signals to log a warning and
	// to process the data as if they were absent, so they reject nothing
	// and the data is kept as it is; the caller logs the count. It is
	// always 0 for profiles, whose requests use them.
	IgnoredStrindex int
}
