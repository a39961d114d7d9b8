// Package viewwalk walks otlpview's views the way an embedder would, every
// iterator to its end, for the tests and benchmarks of otlpview and of
// otlpdecode's visited check.
package viewwalk

import (
	ov "github.com/otlp-lite/otlp-lite/otlpview"
)

// Decoders holds a decoder of each signal, reused across walks as an
// embedder would; its methods walk src and return the first error.
type Decoders struct {
	traces  ov.TracesDecoder
	metrics ov.MetricsDecoder
	logs    ov.LogsDecoder
}

// Traces walks src with Traces.
func (d *Decoders) Traces(src []byte) error {
	_, _, err := Traces(&d.traces, src)
	return err
}

// Metrics walks src with Metrics.
func (d *Decoders) Metrics(src []byte) error {
	_, err := Metrics(&d.metrics, src)
	return err
}

// Logs walks src with Logs.
func (d *Decoders) Logs(src []byte) error {
	_, err := Logs(&d.logs, src)
	return err
}

// Traces decodes src and iterates over every view, nested values
// included, the way an embedder would; it returns the number of spans and
// of attributes seen.
func Traces(d *ov.TracesDecoder, src []byte) (spans, attrs int, err error) {
	err = d.Decode(src, func(res *ov.Resource, scope *ov.Scope, s *ov.Span) error {
		spans++
		n, err := KeyValues(res.Attributes)
		if err != nil {
			return err
		}
		attrs += n
		er := res.EntityRefs.Iter()
		for er.Next() {
			e := er.EntityRef()
			for _, ss := range []ov.Strings{e.IDKeys, e.DescriptionKeys} {
				it := ss.Iter()
				for it.Next() {
				}
				if err := it.Err(); err != nil {
					return err
				}
			}
		}
		if err := er.Err(); err != nil {
			return err
		}
		if n, err = KeyValues(scope.Attributes); err != nil {
			return err
		}
		attrs += n
		if n, err = KeyValues(s.Attributes); err != nil {
			return err
		}
		attrs += n
		ev := s.Events.Iter()
		for ev.Next() {
			if _, err := KeyValues(ev.Event().Attributes); err != nil {
				return err
			}
		}
		if err := ev.Err(); err != nil {
			return err
		}
		li := s.Links.Iter()
		for li.Next() {
			if _, err := KeyValues(li.Link().Attributes); err != nil {
				return err
			}
		}
		return li.Err()
	})
	return spans, attrs, err
}

// KeyValues walks kvs and their values and returns how many pairs there are.
func KeyValues(kvs ov.KeyValues) (int, error) {
	n := 0
	it := kvs.Iter()
	for it.Next() {
		n++
		if err := Value(&it.KeyValue().Value); err != nil {
			return n, err
		}
	}
	return n, it.Err()
}

// Value walks the arrays and kvlists of v.
func Value(v *ov.AnyValue) error {
	switch v.Kind() {
	case ov.KindArray:
		it := v.Array().Iter()
		for it.Next() {
			if err := Value(it.Value()); err != nil {
				return err
			}
		}
		return it.Err()
	case ov.KindKVList:
		_, err := KeyValues(v.KVList())
		return err
	}
	return nil
}

// Exemplars walks es and their filtered attributes.
func Exemplars(es ov.Exemplars) error {
	it := es.Iter()
	for it.Next() {
		if _, err := KeyValues(it.Exemplar().FilteredAttributes); err != nil {
			return err
		}
	}
	return it.Err()
}

// Metrics decodes src and iterates over every data point.
func Metrics(d *ov.MetricsDecoder, src []byte) (points int, err error) {
	err = d.Decode(src, func(res *ov.Resource, scope *ov.Scope, m *ov.Metric) error {
		if _, err := KeyValues(m.Metadata); err != nil {
			return err
		}
		nit := m.NumberDataPoints()
		for nit.Next() {
			points++
			if err := Exemplars(nit.Point().Exemplars); err != nil {
				return err
			}
		}
		hit := m.HistogramDataPoints()
		for hit.Next() {
			points++
			if err := Exemplars(hit.Point().Exemplars); err != nil {
				return err
			}
		}
		eit := m.ExponentialHistogramDataPoints()
		for eit.Next() {
			points++
			if _, err := KeyValues(eit.Point().Attributes); err != nil {
				return err
			}
		}
		sit := m.SummaryDataPoints()
		for sit.Next() {
			points++
			qi := sit.Point().QuantileValues.Iter()
			for qi.Next() {
			}
			if err := qi.Err(); err != nil {
				return err
			}
		}
		for _, err := range []error{nit.Err(), hit.Err(), eit.Err(), sit.Err()} {
			if err != nil {
				return err
			}
		}
		return nil
	})
	return points, err
}

// Logs decodes src and iterates over every log record.
func Logs(d *ov.LogsDecoder, src []byte) (records int, err error) {
	err = d.Decode(src, func(res *ov.Resource, scope *ov.Scope, r *ov.LogRecord) error {
		records++
		if err := Value(&r.Body); err != nil {
			return err
		}
		_, err := KeyValues(r.Attributes)
		return err
	})
	return records, err
}

// The functions below read every field of one item's views, as a storage
// engine fed by an otlpdecode.Visitor would, and return the first error of
// an iterator; sink receives what they read so that the reads are not
// optimised away.

// Sink accumulates what the item walks read.
type Sink struct {
	N     int    // items
	Bytes int    // lengths of the strings and byte slices read
	Sum   uint64 // the numbers read
}

func (k *Sink) str(s string)   { k.Bytes += len(s) }
func (k *Sink) bytes(b []byte) { k.Bytes += len(b) }

// Resource reads a resource.
func (k *Sink) Resource(res *ov.Resource) error {
	k.str(res.SchemaURL)
	k.Sum += uint64(res.DroppedAttributesCount)
	if err := k.kvs(res.Attributes); err != nil {
		return err
	}
	er := res.EntityRefs.Iter()
	for er.Next() {
		e := er.EntityRef()
		k.str(e.SchemaURL)
		k.str(e.Type)
		for _, ss := range []ov.Strings{e.IDKeys, e.DescriptionKeys} {
			it := ss.Iter()
			for it.Next() {
				k.str(it.String())
			}
			if err := it.Err(); err != nil {
				return err
			}
		}
	}
	return er.Err()
}

// Scope reads a scope.
func (k *Sink) Scope(s *ov.Scope) error {
	k.str(s.Name)
	k.str(s.Version)
	k.str(s.SchemaURL)
	k.Sum += uint64(s.DroppedAttributesCount)
	return k.kvs(s.Attributes)
}

func (k *Sink) kvs(kvs ov.KeyValues) error {
	it := kvs.Iter()
	for it.Next() {
		kv := it.KeyValue()
		k.str(kv.Key)
		if err := k.value(&kv.Value); err != nil {
			return err
		}
	}
	return it.Err()
}

func (k *Sink) value(v *ov.AnyValue) error {
	switch v.Kind() {
	case ov.KindString:
		k.str(v.Str())
	case ov.KindBytes:
		k.bytes(v.Bytes())
	case ov.KindInt:
		k.Sum += uint64(v.Int())
	case ov.KindBool:
		if v.Bool() {
			k.Sum++
		}
	case ov.KindDouble:
		k.Sum += uint64(v.Double())
	case ov.KindArray:
		it := v.Array().Iter()
		for it.Next() {
			if err := k.value(it.Value()); err != nil {
				return err
			}
		}
		return it.Err()
	case ov.KindKVList:
		return k.kvs(v.KVList())
	}
	return nil
}

// Span reads a span.
func (k *Sink) Span(s *ov.Span) error {
	k.N++
	k.bytes(s.TraceID)
	k.bytes(s.SpanID)
	k.bytes(s.ParentSpanID)
	k.str(s.TraceState)
	k.str(s.Name)
	k.str(s.Status.Message)
	k.Sum += uint64(s.Flags) + uint64(s.Kind) + s.StartTimeUnixNano + s.EndTimeUnixNano + uint64(s.Status.Code) +
		uint64(s.DroppedAttributesCount) + uint64(s.DroppedEventsCount) + uint64(s.DroppedLinksCount)
	if err := k.kvs(s.Attributes); err != nil {
		return err
	}
	ev := s.Events.Iter()
	for ev.Next() {
		e := ev.Event()
		k.str(e.Name)
		k.Sum += e.TimeUnixNano + uint64(e.DroppedAttributesCount)
		if err := k.kvs(e.Attributes); err != nil {
			return err
		}
	}
	if err := ev.Err(); err != nil {
		return err
	}
	li := s.Links.Iter()
	for li.Next() {
		l := li.Link()
		k.bytes(l.TraceID)
		k.bytes(l.SpanID)
		k.str(l.TraceState)
		k.Sum += uint64(l.Flags) + uint64(l.DroppedAttributesCount)
		if err := k.kvs(l.Attributes); err != nil {
			return err
		}
	}
	return li.Err()
}

// LogRecord reads a log record.
func (k *Sink) LogRecord(r *ov.LogRecord) error {
	k.N++
	k.bytes(r.TraceID)
	k.bytes(r.SpanID)
	k.str(r.SeverityText)
	k.str(r.EventName)
	k.Sum += r.TimeUnixNano + r.ObservedTimeUnixNano + uint64(r.SeverityNumber) + uint64(r.Flags) + uint64(r.DroppedAttributesCount)
	if err := k.value(&r.Body); err != nil {
		return err
	}
	return k.kvs(r.Attributes)
}

// DataPoint reads a data point and its metric's fields.
func (k *Sink) DataPoint(m *ov.Metric, p *ov.DataPoint) error {
	k.N++
	k.str(m.Name)
	k.str(m.Description)
	k.str(m.Unit)
	k.Sum += uint64(m.Type) + uint64(m.AggregationTemporality)
	if err := k.kvs(m.Metadata); err != nil {
		return err
	}
	var attrs ov.KeyValues
	var ex ov.Exemplars
	switch {
	case p.Number != nil:
		n := p.Number
		attrs, ex = n.Attributes, n.Exemplars
		k.Sum += n.StartTimeUnixNano + n.TimeUnixNano + uint64(n.AsInt) + uint64(n.AsDouble) + uint64(n.Flags)
	case p.Histogram != nil:
		h := p.Histogram
		attrs, ex = h.Attributes, h.Exemplars
		k.Sum += h.StartTimeUnixNano + h.TimeUnixNano + h.Count + uint64(h.Sum+h.Min+h.Max) + uint64(len(h.BucketCounts)+len(h.ExplicitBounds))
	case p.ExponentialHistogram != nil:
		e := p.ExponentialHistogram
		attrs, ex = e.Attributes, e.Exemplars
		k.Sum += e.Count + e.ZeroCount + uint64(e.Scale) + uint64(len(e.Positive.BucketCounts)+len(e.Negative.BucketCounts))
	case p.Summary != nil:
		s := p.Summary
		attrs = s.Attributes
		k.Sum += s.Count + uint64(s.Sum)
		qi := s.QuantileValues.Iter()
		for qi.Next() {
			k.Sum += uint64(qi.Quantile().Value)
		}
		if err := qi.Err(); err != nil {
			return err
		}
	}
	if err := k.kvs(attrs); err != nil {
		return err
	}
	it := ex.Iter()
	for it.Next() {
		e := it.Exemplar()
		k.bytes(e.TraceID)
		k.bytes(e.SpanID)
		k.Sum += e.TimeUnixNano
		if err := k.kvs(e.FilteredAttributes); err != nil {
			return err
		}
	}
	return it.Err()
}

// Profile reads a profile and every sample, resolved against its
// dictionary: stack, locations, mappings, lines, functions, attributes.
func (k *Sink) Profile(p *ov.Profile) error {
	k.N++
	k.str(p.SampleType.Type)
	k.str(p.SampleType.Unit)
	k.str(p.PeriodType.Type)
	k.bytes(p.ProfileID)
	k.str(p.OriginalPayloadFormat)
	k.Sum += p.TimeUnixNano + p.DurationNano + uint64(p.Period)
	if err := k.attrs(p.Attributes); err != nil {
		return err
	}
	si := p.Samples.Iter()
	for si.Next() {
		s := si.Sample()
		for _, v := range s.Values {
			k.Sum += uint64(v)
		}
		k.Sum += uint64(len(s.TimestampsUnixNano))
		k.bytes(s.Link.TraceID)
		if err := k.attrs(s.Attributes); err != nil {
			return err
		}
		li := s.Stack.Iter()
		for li.Next() {
			l := li.Location()
			k.Sum += l.Address
			k.str(l.Mapping.Filename)
			lines := l.Lines.Iter()
			for lines.Next() {
				ln := lines.Line()
				k.str(ln.Function.Name)
				k.str(ln.Function.Filename)
				k.Sum += uint64(ln.Line)
			}
			if err := lines.Err(); err != nil {
				return err
			}
			if err := k.attrs(l.Attributes); err != nil {
				return err
			}
		}
		if err := li.Err(); err != nil {
			return err
		}
	}
	return si.Err()
}

func (k *Sink) attrs(as ov.Attributes) error {
	it := as.Iter()
	for it.Next() {
		a := it.Attribute()
		k.str(a.Key)
		k.str(a.Unit)
		if err := k.value(&a.Value); err != nil {
			return err
		}
	}
	return it.Err()
}
