package otlpview

import "github.com/otlp-lite/otlp-lite/otlppb"

// DataPoint is one data point of a Metric: the view of the kind the
// metric's Type says is set, the others nil.
type DataPoint struct {
	// Raw is the point's protobuf encoding, as it came (it aliases the
	// request).
	Raw                  []byte
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
	reader  PointReader
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
	v.span = Span{} // in place: see LogRecord.reset
	v.span.Raw = src
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

// LogRecordOf is the view of the LogRecord src for a walk that reads the
// record's fields itself (otlpdecode's validation), as SpanOf is a span's:
// the view is reset to the empty record of src, and the walk hands every
// field it reads, in wire order, to LogRecord.ReadField. It shares
// LogRecord's buffer.
func (v *ItemViews) LogRecordOf(src []byte) *LogRecord {
	v.rec.reset(src)
	return &v.rec
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
	pr := v.DataPointOf(kind, src)
	roles := otlppb.PointRolesOf(kind)
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			p, _ := pr.DataPoint()
			return p, err
		}
		pr.ReadField(roles.Of(fc.FieldNum), &fc)
	}
	return pr.DataPoint()
}

// PointReader fills the view of one data point from the fields a walk
// reads itself (otlpdecode's validation), as SpanOf does a span's: the
// walk hands every field of the point, in wire order, to ReadField, then
// takes the view from DataPoint. ItemViews.DataPoint is this with a walk
// of its own.
type PointReader struct {
	views *ItemViews
	kind  otlppb.PointKind
	src   []byte
	vals  pointValues
	err   error
}

// DataPointOf starts the view of src, a data point of the metric kind (see
// DataPoint), for a walk that reads the point's fields itself. The
// PointReader, and the view it makes, share DataPoint's buffers.
func (v *ItemViews) DataPointOf(kind otlppb.PointKind, src []byte) *PointReader {
	pr := &v.reader // set in place: see LogRecord.reset
	pr.views, pr.kind, pr.src, pr.err = v, kind, src, nil
	pr.vals = pointValues{}
	pr.vals.start(kind, &v.bufs)
	return pr
}

// ReadField reads the field fc of the point, whose role in the point's
// kind is role (otlppb.PointRolesOf), into the view: the last occurrence
// of a scalar wins, repeated scalars and buckets append, as in protobuf. A
// malformed packed run or Buckets is kept as the error DataPoint returns.
func (pr *PointReader) ReadField(role otlppb.PointRole, fc *otlppb.Field) {
	if err := pr.vals.field(role, fc); err != nil && pr.err == nil {
		pr.err = err
	}
}

// ReadFixed64 is ReadField for a field of wire type I64 whose value is x,
// for a walk that reads such fields inline (the commonest of a point:
// its times, value, count, sum) without a Field.
func (pr *PointReader) ReadFixed64(role otlppb.PointRole, x uint64) {
	pr.vals.fixed64(role, x)
}

// DataPoint returns the view of the point from the fields read, and the
// first error ReadField met.
func (pr *PointReader) DataPoint() (*DataPoint, error) {
	v := pr.views
	pr.vals.keep(pr.kind, &v.bufs)
	v.point = DataPoint{}
	v.point.Raw = pr.src
	switch pr.kind {
	case otlppb.MetricGauge, otlppb.MetricSum:
		v.number.set(pr.src, &pr.vals)
		v.point.Number = &v.number
	case otlppb.MetricHistogram:
		v.hist.set(pr.src, &pr.vals)
		v.point.Histogram = &v.hist
	case otlppb.MetricExponentialHistogram:
		v.exp.set(pr.src, &pr.vals)
		v.point.ExponentialHistogram = &v.exp
	case otlppb.MetricSummary:
		v.summary.set(pr.src, &pr.vals)
		v.point.Summary = &v.summary
	}
	return &v.point, pr.err
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

// ProfileOf is the view of the Profile src, of the request whose
// Dictionary was read last, for a walk that reads the profile's fields
// itself (otlpdecode's validation), as SpanOf is a span's: the view is
// reset to the empty profile of src, and the walk hands every field it
// reads, in wire order, to Profile.ReadField. It shares Profile's buffer.
func (v *ItemViews) ProfileOf(src []byte) *Profile {
	v.profile.Dictionary, v.profile.Samples.bufs = &v.dict, &v.samples
	v.profile.reset(src)
	return &v.profile
}
