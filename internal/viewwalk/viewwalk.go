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
