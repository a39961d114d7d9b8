package otlpdecode

import (
	"github.com/otlp-lite/otlp-lite/otlppb"
	"github.com/otlp-lite/otlp-lite/otlpview"
)

// Visitor receives the decoded items of a request as its validation walks
// them: the decoded-data path of an embedder (a storage engine), in the
// same pass as validation, instead of the bytes of Sink.Write.
//
// Each function, if set, is called for every item of its signal that
// passed validation (with its Resource and Scope), in wire order, on the
// goroutine running the check; an item the rules reject is never
// visited, nor any item under a resource or scope they reject. A function
// may reject its item by returning an error: the item then counts as
// rejected in the Result (Rejected, FirstRejection, whose text after the
// item's position is the error's), which the receiver sends to the client
// as the partial success, and AppendValid* removes it like an invalid
// item, so that a byte sink after the visitor stores only what it
// accepted. Returning nil accepts it. The error should say why, for the
// client to read; it is not a way to fail the whole request.
//
// Lifetime: the views alias the request's bytes, which the receiver
// pools and reuses once the Export call returns, and the decoder's
// buffers, which the next item reuses. A view, and every string or byte
// slice read from it, is valid only until the function returns: an engine
// must copy what it keeps (strings.Clone, bytes.Clone, or by encoding it
// into its own buffers). visittest.Check holds an engine to this.
//
// When Check* returns an error the request is refused as a whole (it is
// malformed), even though the visitor may have been handed some of its
// items before the walk met the malformed part: an engine that stores as
// it visits must drop what it stored for a request whose Check* failed
// (or hold it until Check* returns).
//
// A Visitor shared by concurrent requests must have functions safe for
// concurrent use; one that belongs to one request (a storage.ItemBatch's)
// is called one item at a time.
type Visitor struct {
	Span func(res *otlpview.Resource, scope *otlpview.Scope, span *otlpview.Span) error
	// DataPoint is called for every data point (the item of the metrics
	// signal) with its metric; the point is of the kind m.Type says.
	DataPoint func(res *otlpview.Resource, scope *otlpview.Scope, m *otlpview.Metric, p *otlpview.DataPoint) error
	LogRecord func(res *otlpview.Resource, scope *otlpview.Scope, rec *otlpview.LogRecord) error
	// Profile is called for every profile; its indices resolve against
	// the request's dictionary (p.Dictionary, its samples' Stack...).
	Profile func(res *otlpview.Resource, scope *otlpview.Scope, p *otlpview.Profile) error
}

// Visit is one request's decoded-item pass: set Options.Visit to one for
// the request, with its Visitor, and pass the same Options to the
// request's Check* call and, when that reports Rejected > 0, to its
// AppendValid* call, which then also removes the items the visitor
// rejected. A Visit carries the views' buffers from one request to the
// next: reuse it (a sync.Pool), one request at a time. A nil
// Options.Visit is the plain validation, which costs what it did before
// visitors existed and allocates nothing.
type Visit struct {
	Visitor *Visitor

	views otlpview.ItemViews
	// ordinal counts the items (spans, data points, log records,
	// profiles) the walk has checked, in wire order; rejected holds, in
	// increasing order, the ordinals the visitor rejected, which
	// AppendValid* skips by counting the same way.
	ordinal  int
	rejected []int
	next     int // AppendValid*: index in rejected of the next to skip

	// res and scope are the views of the current resource and scope;
	// nil while they are invalid (their items are not visited).
	res   *otlpview.Resource
	scope *otlpview.Scope
}

// replay starts AppendValid*'s count of the items the check counted.
func (v *Visit) replay() { v.ordinal, v.next = 0, 0 }

// begin resets v for a walk of a request.
func (v *Visit) begin() {
	v.ordinal, v.next = 0, 0
	v.rejected = v.rejected[:0]
	v.res, v.scope = nil, nil
}

// item counts the next item of the walk and returns its ordinal.
func (v *Visit) item() int {
	n := v.ordinal
	v.ordinal++
	return n
}

// skip reports whether the item of ordinal n, counted again by
// AppendValid*, was rejected by the visitor.
func (v *Visit) skip(n int) bool {
	if v.next < len(v.rejected) && v.rejected[v.next] == n {
		v.next++
		return true
	}
	return false
}

// verdict records the visitor's answer err for the item of ordinal n and
// returns the reason it is rejected for (the zero reason when accepted).
func (v *Visit) verdict(n int, err error) reason {
	if err == nil {
		return reason{}
	}
	v.rejected = append(v.rejected, n)
	return reason{path: [4]pathElem{{name: "visitor", idx: -1}}, want: err.Error(), kind: reasonVisitor}
}

// visitHeader checks, before the items of a Resource* (scope false) or
// Scope* message src, what makes them all rejected (the resource or scope,
// the schema_url), and decodes the view the visitor gets; the walk after
// it then skips those fields. It is the visiting form of the checks of
// resourceItems and scopeItems, which meet the fields in wire order,
// where the header may follow the items.
//
// ok is false when src is malformed: then no item of src is visited, and
// the walk checks the header fields itself, in wire order, so that it
// reports the error the unvisited walk reports.
func (c *checker) visitHeader(src []byte, scope bool) (r reason, ok bool) {
	v := c.visit
	if scope {
		v.scope = nil
	} else {
		v.res, v.scope = nil, nil
	}
	name := "resource"
	if scope {
		name = "scope"
	}
	// The walk checks the fields again when this one fails: the strindex
	// count is its.
	saved := c.ignoredStrindex
	var fc otlppb.Field
	for rest := src; len(rest) > 0; {
		var err error
		if rest, err = fc.Read(rest); err != nil {
			c.ignoredStrindex = saved
			return reason{}, false
		}
		switch fc.FieldNum {
		case resourceResource: // = scopeScope (TestSharedLayout)
			data, ok := fc.MessageData()
			if !ok {
				continue
			}
			// Not a method value: an indirect call would move the
			// checker to the heap, on the unvisited path too.
			var sub reason
			if scope {
				sub, err = c.scope(data)
			} else {
				sub, err = c.resource(data)
			}
			if err != nil {
				c.ignoredStrindex = saved
				return reason{}, false
			}
			r.note(&sub, name, -1)
		case resourceSchema: // = scopeSchema
			c.stringField(&fc, "schema_url", &r)
		}
	}
	if r.bad() {
		return r, true // its items are rejected, not visited
	}
	if scope {
		if s, err := v.views.Scope(src); err == nil && v.res != nil {
			v.scope = s
		}
	} else if res, err := v.views.Resource(src); err == nil {
		v.res = res
	}
	return r, true
}

// visitedItem is checker.item with a visitor: it checks the element src
// of the item field of a Scope* message and hands what the rules accept
// to the visitor. The item's view is filled by the check as it reads the
// item (spanView, logRecordView, dataPointView, profile with a view): an
// item is walked once, not once to check and once for its view.
func (c *checker) visitedItem(sig signal, src []byte, t *itemTally) error {
	if sig == signalMetrics {
		return c.item(sig, src, t) // visits its data points
	}
	n := c.visit.item()
	switch sig {
	case signalTraces:
		return c.visitSpan(src, n, t)
	case signalLogs:
		return c.visitLogRecord(src, n, t)
	}
	return c.visitProfile(src, n, t)
}

// visitSpan checks the span src of ordinal n, filling its view as it
// reads it (checker.spanView), and hands it, if valid, to the visitor: a
// span is walked once, not once to check and once for its view.
func (c *checker) visitSpan(src []byte, n int, t *itemTally) error {
	v := c.visit
	f := v.Visitor.Span
	if f == nil || v.scope == nil { // nothing to visit, or rejected already
		r, err := c.span(src)
		return t.single(&r, err)
	}
	sv := v.views.SpanOf(src)
	r, err := c.spanView(src, sv)
	if err := t.single(&r, err); err != nil || t.rejected > 0 {
		return err
	}
	if r := v.verdict(n, f(v.res, v.scope, sv)); r.bad() {
		t.rejected, t.first = 1, r
	}
	return nil
}

// visitLogRecord is visitSpan for the log record src (logRecordView).
func (c *checker) visitLogRecord(src []byte, n int, t *itemTally) error {
	v := c.visit
	f := v.Visitor.LogRecord
	if f == nil || v.scope == nil { // nothing to visit, or rejected already
		r, err := c.logRecord(src)
		return t.single(&r, err)
	}
	rv := v.views.LogRecordOf(src)
	r, err := c.logRecordView(src, rv)
	if err := t.single(&r, err); err != nil || t.rejected > 0 {
		return err
	}
	if r := v.verdict(n, f(v.res, v.scope, rv)); r.bad() {
		t.rejected, t.first = 1, r
	}
	return nil
}

// visitProfile is visitSpan for the profile src (checker.profile with a
// view).
func (c *checker) visitProfile(src []byte, n int, t *itemTally) error {
	v := c.visit
	f := v.Visitor.Profile
	var pv *otlpview.Profile
	if f != nil && v.scope != nil {
		pv = v.views.ProfileOf(src)
	}
	r, samples, err := c.profile(src, pv)
	t.samples = samples
	if err := t.single(&r, err); err != nil || t.rejected > 0 || pv == nil {
		return err
	}
	if r := v.verdict(n, f(v.res, v.scope, pv)); r.bad() {
		t.rejected, t.first = 1, r
	}
	return nil
}

// visitMetric prepares the visit of the data points of the Metric src:
// it checks the metric's own fields first (they may follow the points on
// the wire; a bad one rejects every point, none is visited) and decodes
// its view. It returns nil when its points are not to be visited.
func (c *checker) visitMetric(src []byte) *otlpview.Metric {
	v := c.visit
	if v.scope == nil || v.Visitor.DataPoint == nil {
		return nil
	}
	var r reason
	nMeta := 0
	// The walk checks these fields again: the strindex count is its.
	defer func(n int) { c.ignoredStrindex = n }(c.ignoredStrindex)
	var fc otlppb.Field
	for rest := src; len(rest) > 0; {
		var err error
		if rest, err = fc.Read(rest); err != nil {
			return nil // the walk reports it
		}
		switch fc.FieldNum {
		case otlppb.MetricName, otlppb.MetricDescription, otlppb.MetricUnit:
			c.stringField(&fc, "name", &r)
		case otlppb.MetricMetadata:
			if c.attribute(&fc, "metadata", &nMeta, &r) != nil {
				return nil
			}
		}
	}
	if r.bad() {
		return nil
	}
	m, err := v.views.Metric(src)
	if err != nil {
		return nil
	}
	return m
}

// visitPoint checks the data point src of kind and ordinal n, filling
// its view as it reads it (dataPointView), and hands it, if valid, to the
// visitor, with its metric m; it returns the reason the rules or the
// visitor reject it for, if they do.
func (c *checker) visitPoint(m *otlpview.Metric, kind otlppb.PointKind, src []byte, n int) (reason, error) {
	v := c.visit
	pr := v.views.DataPointOf(kind, src)
	r, err := c.dataPointView(src, kind, pr)
	if err != nil || r.bad() {
		return r, err
	}
	p, err := pr.DataPoint()
	if err == nil {
		err = v.Visitor.DataPoint(v.res, v.scope, m, p)
	}
	return v.verdict(n, err), nil
}
