package otlpdecode

import (
	"encoding/binary"
	"slices"

	"github.com/otlp-lite/otlp-lite/otlppb"
)

// AppendValidTraces appends to dst the protobuf encoding of src without its
// rejected spans (the rules are CheckTraces'), and returns the result.
//
// Kept fields are copied verbatim, unknown fields included; only the
// enclosing messages get new length prefixes. A ScopeSpans or ResourceSpans
// whose own fields are invalid (with ValidateUTF8: a bad resource, scope or
// schema_url) is dropped with all its spans, since keeping it would forward
// the invalid string; one that is valid but left without spans is kept, so
// that its resource and scope still reach the storage.
//
// The handler calls it only when CheckTraces reported Rejected > 0; errors
// are CheckTraces' errors.
func AppendValidTraces(dst, src []byte, opts *Options) ([]byte, error) {
	c := newChecker(opts)
	return c.appendValid(dst, src, &traceNames, keepSpan)
}

// AppendValidMetrics is AppendValidTraces for metrics: it removes the
// rejected data points. A Metric whose own fields are invalid is dropped
// with its points; a valid one left without points is kept.
func AppendValidMetrics(dst, src []byte, opts *Options) ([]byte, error) {
	c := newChecker(opts)
	return c.appendValid(dst, src, &metricNames, appendValidMetric)
}

// AppendValidLogs is AppendValidTraces for logs: it removes the rejected
// log records.
func AppendValidLogs(dst, src []byte, opts *Options) ([]byte, error) {
	c := newChecker(opts)
	return c.appendValid(dst, src, &logNames, keepLogRecord)
}

// itemAppendFunc appends the valid part of one element of the item field
// of a Scope* message, as the payload of a field (without tag and length);
// keep=false drops the element.
type itemAppendFunc func(c *checker, dst, src []byte) (out []byte, keep bool, err error)

func keepSpan(c *checker, dst, src []byte) ([]byte, bool, error) {
	n := c.countItem()
	r, err := c.span(src)
	return c.keepValid(dst, src, n, &r, err)
}

func keepLogRecord(c *checker, dst, src []byte) ([]byte, bool, error) {
	n := c.countItem()
	r, err := c.logRecord(src)
	return c.keepValid(dst, src, n, &r, err)
}

// keepValid appends the item src, of ordinal n (countItem), if its check
// found it valid (r is a pointer for the same reason as in
// itemTally.single) and the request's visitor did not reject it.
func (c *checker) keepValid(dst, src []byte, n int, r *reason, err error) ([]byte, bool, error) {
	if err != nil || r.bad() || c.visitorRejected(n) {
		return dst, false, err
	}
	return append(dst, src...), true, nil
}

// countItem counts an item the way the visited check did, when the
// request has a Visit, and returns its ordinal.
func (c *checker) countItem() int {
	if c.visit == nil {
		return 0
	}
	return c.visit.item()
}

// visitorRejected reports whether the request's visitor rejected the item
// of ordinal n.
func (c *checker) visitorRejected(n int) bool {
	return c.visit != nil && c.visit.skip(n)
}

// rawField returns the encoded bytes of the field Read just read:
// src before the call, tail after.
func rawField(src, tail []byte) []byte {
	return src[:len(src)-len(tail)]
}

// wrapField turns dst[start:], the payload of a length-delimited field
// built in place, into the field itself by inserting its tag and length.
func wrapField(dst []byte, start int, num uint32) []byte {
	var hdr [2 * binary.MaxVarintLen64]byte
	n := binary.PutUvarint(hdr[:], uint64(num)<<3|otlppb.WireLen)
	n += binary.PutUvarint(hdr[n:], uint64(len(dst)-start))
	size := len(dst) - start
	dst = append(dst, hdr[:n]...)
	copy(dst[start+n:], dst[start:start+size])
	copy(dst[start:], hdr[:n])
	return dst
}

// appendValid re-encodes an Export*ServiceRequest (layout at
// checker.check).
func (c *checker) appendValid(dst, src []byte, names *signalNames, item itemAppendFunc) ([]byte, error) {
	// The output is at most as long as src: grow dst once.
	dst = slices.Grow(dst, len(src))
	if c.visit != nil {
		c.visit.replay()
	}
	dst, err := c.appendElems(dst, src, levelRequest, names, item)
	if err != nil {
		return dst, topLevel(err)
	}
	return dst, nil
}

// level says which message of a request appendElems walks.
type level uint8

const (
	levelRequest  level = iota // Export*ServiceRequest: resource_* (requestResources)
	levelResource              // Resource*: scope_* (resourceScopes)
	levelScope                 // Scope*: the items (scopeItemsField)
)

// appendElems copies the fields of src, a message of level lvl, to dst
// verbatim, except the occurrences of its repeated child field, which are
// re-encoded without their rejected items, or dropped. On error it
// returns what it appended before the failing element.
func (c *checker) appendElems(dst, src []byte, lvl level, names *signalNames, item itemAppendFunc) ([]byte, error) {
	num, name := uint32(resourceScopes), names.scopes
	switch lvl {
	case levelRequest:
		num, name = requestResources, names.resources
	case levelScope:
		num, name = scopeItemsField, names.items
	}
	var fc otlppb.Field
	for i := 0; len(src) > 0; {
		tail, err := fc.Read(src)
		if err != nil {
			return dst, err
		}
		raw := rawField(src, tail)
		src = tail
		data, ok := fc.MessageData()
		if fc.FieldNum != num || !ok {
			dst = append(dst, raw...)
			continue
		}
		start := len(dst)
		var keep bool
		switch lvl {
		case levelRequest:
			dst, keep, err = c.appendContainer(dst, data, levelResource, names, item)
		case levelResource:
			dst, keep, err = c.appendContainer(dst, data, levelScope, names, item)
		default:
			dst, keep, err = item(c, dst, data)
		}
		if err != nil {
			return dst[:start], at(err, name, i)
		}
		if keep {
			dst = wrapField(dst, start, num)
		} else {
			dst = dst[:start]
		}
		i++
	}
	return dst, nil
}

// containerReason returns why the header fields (field 1, checked by
// check, and the schema_url in field 3) of a Resource* or Scope* message
// are invalid. It reads them all even after a first reason, so that a
// malformed field further on refuses the request, as it does in Check.
func (c *checker) containerReason(src []byte, check func(*checker, []byte) (reason, error)) (reason, error) {
	var r reason
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return reason{}, err
		}
		switch fc.FieldNum {
		case resourceResource: // scopeScope
			if data, ok := fc.MessageData(); ok {
				sub, err := check(c, data)
				if err != nil {
					return sub, err
				}
				if !r.bad() {
					r = sub
				}
			}
		case resourceSchema: // scopeSchema
			if c.badString(&fc) && !r.bad() {
				r = utf8Reason("schema_url", -1)
			}
		}
	}
	return r, nil
}

// appendContainer re-encodes the payload of a Resource* (lvl
// levelResource) or Scope* (levelScope) message; layouts at
// checker.resourceItems and checker.scopeItems. keep is false when the
// message's own fields are invalid; its children are walked all the same,
// so that a malformed one fails the request here too, as it does in Check.
func (c *checker) appendContainer(dst, src []byte, lvl level, names *signalNames, item itemAppendFunc) ([]byte, bool, error) {
	check := (*checker).resource
	if lvl == levelScope {
		check = (*checker).scope
	}
	r, err := c.containerReason(src, check)
	if err != nil {
		return dst, false, err
	}
	orig := len(dst)
	dst, err = c.appendElems(dst, src, lvl, names, item)
	if err != nil || r.bad() {
		return dst[:orig], false, err
	}
	return dst, true, nil
}

// appendValidMetric re-encodes a Metric without its rejected data points
// (layout at checkMetricItem).
func appendValidMetric(c *checker, dst, src []byte) ([]byte, bool, error) {
	orig := len(dst)
	var r reason
	nMeta := 0
	var fc otlppb.Field
	for len(src) > 0 {
		tail, err := fc.Read(src)
		if err != nil {
			return dst[:orig], false, err
		}
		raw := rawField(src, tail)
		src = tail
		switch fc.FieldNum {
		case otlppb.MetricName, otlppb.MetricDescription, otlppb.MetricUnit:
			if c.badString(&fc) {
				r = utf8Reason("name", -1)
			}
		case otlppb.MetricMetadata:
			if err := c.attribute(&fc, "metadata", &nMeta, &r); err != nil {
				return dst[:orig], false, err
			}
		case metricGauge, metricSum, metricHistogram, metricExponentialHistogram, metricSummary:
			data, ok := fc.MessageData()
			if !ok {
				break
			}
			start := len(dst)
			if dst, err = c.appendMetricData(dst, data, fc.FieldNum); err != nil {
				return dst[:orig], false, at(err, metricKindName(fc.FieldNum), -1)
			}
			dst = wrapField(dst, start, fc.FieldNum)
			continue
		}
		dst = append(dst, raw...)
	}
	if r.bad() {
		return dst[:orig], false, nil
	}
	return dst, true, nil
}

// appendMetricData re-encodes a Gauge, Sum, Histogram, ExponentialHistogram
// or Summary without its rejected data points (layouts at
// checker.metricData).
func (c *checker) appendMetricData(dst, src []byte, kind uint32) ([]byte, error) {
	var fc otlppb.Field
	for i := 0; len(src) > 0; {
		tail, err := fc.Read(src)
		if err != nil {
			return dst, err
		}
		raw := rawField(src, tail)
		src = tail
		data, ok := fc.MessageData()
		if fc.FieldNum != otlppb.GaugeDataPoints || !ok { // data_points, in all five kinds
			dst = append(dst, raw...)
			continue
		}
		n := c.countItem()
		r, err := c.dataPoint(data, kind)
		if err != nil {
			return dst, at(err, "data_points", i)
		}
		if !r.bad() && !c.visitorRejected(n) {
			dst = append(dst, raw...)
		}
		i++
	}
	return dst, nil
}
