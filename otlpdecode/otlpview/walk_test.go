package otlpview

import (
	"github.com/otlp-lite/otlp-lite/internal/pbtest"
)

// pb is short for pbtest's builder, which the tests write requests with.
type pb = pbtest.PB

// decoders holds a decoder of each signal, reused across walks as an
// embedder would; its methods walk src and return the first error.
type decoders struct {
	traces  TracesDecoder
	metrics MetricsDecoder
	logs    LogsDecoder
}

func (d *decoders) walkTraces(src []byte) error {
	_, _, err := walkTraces(&d.traces, src)
	return err
}

func (d *decoders) walkMetrics(src []byte) error {
	_, err := walkMetrics(&d.metrics, src)
	return err
}

func (d *decoders) walkLogs(src []byte) error {
	_, err := walkLogs(&d.logs, src)
	return err
}

// walkTraces decodes src and iterates over every view, nested values
// included, the way an embedder would; it returns the number of spans and
// of attributes seen.
func walkTraces(d *TracesDecoder, src []byte) (spans, attrs int, err error) {
	err = d.Decode(src, func(res *Resource, scope *Scope, s *Span) error {
		spans++
		n, err := walkKVs(res.Attributes)
		if err != nil {
			return err
		}
		attrs += n
		er := res.EntityRefs.Iter()
		for er.Next() {
			e := er.EntityRef()
			for _, ss := range []Strings{e.IDKeys, e.DescriptionKeys} {
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
		if n, err = walkKVs(scope.Attributes); err != nil {
			return err
		}
		attrs += n
		if n, err = walkKVs(s.Attributes); err != nil {
			return err
		}
		attrs += n
		ev := s.Events.Iter()
		for ev.Next() {
			if _, err := walkKVs(ev.Event().Attributes); err != nil {
				return err
			}
		}
		if err := ev.Err(); err != nil {
			return err
		}
		li := s.Links.Iter()
		for li.Next() {
			if _, err := walkKVs(li.Link().Attributes); err != nil {
				return err
			}
		}
		return li.Err()
	})
	return spans, attrs, err
}

func walkKVs(kvs KeyValues) (int, error) {
	n := 0
	it := kvs.Iter()
	for it.Next() {
		n++
		if err := walkValue(&it.KeyValue().Value); err != nil {
			return n, err
		}
	}
	return n, it.Err()
}

func walkValue(v *AnyValue) error {
	switch v.Kind() {
	case KindArray:
		it := v.Array().Iter()
		for it.Next() {
			if err := walkValue(it.Value()); err != nil {
				return err
			}
		}
		return it.Err()
	case KindKVList:
		_, err := walkKVs(v.KVList())
		return err
	}
	return nil
}

func walkExemplars(es Exemplars) error {
	it := es.Iter()
	for it.Next() {
		if _, err := walkKVs(it.Exemplar().FilteredAttributes); err != nil {
			return err
		}
	}
	return it.Err()
}

// walkMetrics decodes src and iterates over every data point.
func walkMetrics(d *MetricsDecoder, src []byte) (points int, err error) {
	err = d.Decode(src, func(res *Resource, scope *Scope, m *Metric) error {
		if _, err := walkKVs(m.Metadata); err != nil {
			return err
		}
		nit := m.NumberDataPoints()
		for nit.Next() {
			points++
			if err := walkExemplars(nit.Point().Exemplars); err != nil {
				return err
			}
		}
		hit := m.HistogramDataPoints()
		for hit.Next() {
			points++
			if err := walkExemplars(hit.Point().Exemplars); err != nil {
				return err
			}
		}
		eit := m.ExponentialHistogramDataPoints()
		for eit.Next() {
			points++
			if _, err := walkKVs(eit.Point().Attributes); err != nil {
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

// walkLogs decodes src and iterates over every log record.
func walkLogs(d *LogsDecoder, src []byte) (records int, err error) {
	err = d.Decode(src, func(res *Resource, scope *Scope, r *LogRecord) error {
		records++
		if err := walkValue(&r.Body); err != nil {
			return err
		}
		_, err := walkKVs(r.Attributes)
		return err
	})
	return records, err
}
