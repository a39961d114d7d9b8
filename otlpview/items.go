package otlpview

import "github.com/otlp-lite/otlp-lite/otlppb"

// DataPoint is one data point of a Metric: the view of the kind the
// metric's Type says is set, the others nil.
type DataPoint struct {
	Number               *NumberDataPoint // Gauge and Sum
	Histogram            *HistogramDataPoint
	ExponentialHistogram *ExponentialHistogramDataPoint
	Summary              *SummaryDataPoint
}

// ItemViews decodes the views of a request one message at a time, for a
// walk that finds the messages itself: otlpdecode's validation hands
// each item it accepts to an embedder's visitor through it, so that the
// request is walked once. The zero value is ready to use; reuse it (its
// buffers stop growing). It is not safe for concurrent use.
//
// Every view it returns aliases the bytes it was given and is valid until
// the next call of the same method (Resource, Scope, or the item methods,
// which share their buffers); Dictionary until the next Dictionary.
type ItemViews struct {
	c       containers
	span    Span
	rec     LogRecord
	metric  Metric
	bufs    pointBufs
	point   DataPoint
	number  NumberDataPoint
	hist    HistogramDataPoint
	exp     ExponentialHistogramDataPoint
	summary SummaryDataPoint
	profile Profile
	dict    Dictionary
	samples sampleBufs
}

// Resource decodes the resource and schema_url of src, a ResourceSpans,
// ResourceMetrics, ResourceLogs or ResourceProfiles message.
func (v *ItemViews) Resource(src []byte) (*Resource, error) {
	if err := v.c.resourceHeader(src); err != nil {
		return nil, err
	}
	return &v.c.res, nil
}

// Scope decodes the scope and schema_url of src, a ScopeSpans,
// ScopeMetrics, ScopeLogs or ScopeProfiles message.
func (v *ItemViews) Scope(src []byte) (*Scope, error) {
	if err := v.c.scopeHeader(src); err != nil {
		return nil, err
	}
	return &v.c.scope, nil
}

// Span decodes a Span.
func (v *ItemViews) Span(src []byte) (*Span, error) {
	return &v.span, v.span.decode(src)
}

// SpanOf is the view of the Span src for a walk that reads the span's
// fields itself: otlpdecode's validation, which reads every field anyway,
// fills the view as it checks, instead of a second walk by Span. The view
// is reset to Span{Raw: src}; the walk sets the fields it reads, the last
// occurrence of each winning as in Span, the status with Status.Decode,
// and the lists with SetLists. It shares Span's buffer.
func (v *ItemViews) SpanOf(src []byte) *Span {
	v.span = Span{Raw: src}
	return &v.span
}

// SetLists sets what Attributes, Events and Links iterate over: for each,
// the part of s.Raw from the first occurrence of its field to the end of
// the last (nil when the span has none), as Span finds them.
func (s *Span) SetLists(attrs, events, links []byte) {
	s.Attributes = KeyValues{src: attrs, field: otlppb.SpanAttributes}
	s.Events = Events{src: events}
	s.Links = Links{src: links}
}

// LogRecord decodes a LogRecord.
func (v *ItemViews) LogRecord(src []byte) (*LogRecord, error) {
	return &v.rec, v.rec.decode(src)
}

// Metric decodes a Metric; its data points are reached through its
// iterators, or one at a time through DataPoint.
func (v *ItemViews) Metric(src []byte) (*Metric, error) {
	v.metric.bufs = &v.bufs
	return &v.metric, v.metric.decode(src)
}

// DataPoint decodes src, a data point of the metric kind (the Metric field
// of its container: otlppb.MetricGauge...). Its unpacked bucket counts and
// bounds share the buffers of the Metric's iterators: one of the two at a
// time.
func (v *ItemViews) DataPoint(kind otlppb.PointKind, src []byte) (*DataPoint, error) {
	v.point = DataPoint{}
	var err error
	switch kind {
	case otlppb.MetricGauge, otlppb.MetricSum:
		v.point.Number, err = &v.number, v.number.decode(src)
	case otlppb.MetricHistogram:
		v.point.Histogram, err = &v.hist, v.hist.decode(src, &v.bufs)
	case otlppb.MetricExponentialHistogram:
		v.point.ExponentialHistogram, err = &v.exp, v.exp.decode(src, &v.bufs)
	case otlppb.MetricSummary:
		v.point.Summary, err = &v.summary, v.summary.decode(src)
	}
	return &v.point, err
}

// Dictionary indexes the ProfilesDictionary of src, an
// ExportProfilesServiceRequest, for the profiles Profile decodes next.
func (v *ItemViews) Dictionary(src []byte) (*Dictionary, error) {
	return &v.dict, v.dict.load(src)
}

// Profile decodes a Profile of the request whose Dictionary was read last.
func (v *ItemViews) Profile(src []byte) (*Profile, error) {
	v.profile.Dictionary, v.profile.Samples.bufs = &v.dict, &v.samples
	return &v.profile, v.profile.decode(src)
}
