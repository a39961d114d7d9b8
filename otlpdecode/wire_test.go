package otlpdecode

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// pb builds protobuf wire bytes for tests; core packages cannot use the
// generated OTLP types (those tests live in the interop module).
type pb []byte

func (m pb) tag(num, typ int) pb { return binary.AppendUvarint(m, uint64(num)<<3|uint64(typ)) }

func (m pb) msg(num int, b pb) pb {
	return append(binary.AppendUvarint(m.tag(num, 2), uint64(len(b))), b...)
}

func (m pb) str(num int, s string) pb { return m.msg(num, pb(s)) }

func (m pb) varint(num int, v uint64) pb { return binary.AppendUvarint(m.tag(num, 0), v) }

func (m pb) fixed64(num int, v uint64) pb { return binary.LittleEndian.AppendUint64(m.tag(num, 1), v) }

func (m pb) fixed32(num int, v uint32) pb { return binary.LittleEndian.AppendUint32(m.tag(num, 5), v) }

func ids(n int, seed byte) pb {
	b := make(pb, n)
	for i := range b {
		b[i] = seed + byte(i)
	}
	return b
}

func strAttr(k, v string) pb { return pb{}.str(1, k).msg(2, pb{}.str(1, v)) }

func intAttr(k string, v int64) pb { return pb{}.str(1, k).msg(2, pb{}.varint(3, uint64(v))) }

// span returns a Span with ids of the given lengths and extra fields.
func span(traceLen, spanLen int, extra pb) pb {
	return pb{}.msg(1, ids(traceLen, 1)).msg(2, ids(spanLen, 2)).str(5, "op").
		fixed64(7, 1).fixed64(8, 2).msg(9, strAttr("k", "v")).msg(9, intAttr("n", -1)).
		msg(15, pb{}.varint(3, 1)).append(extra)
}

func (m pb) append(b pb) pb { return append(m, b...) }

// request wraps items into Export*ServiceRequest / ResourceX / ScopeX, one
// scope per group of items; resource and scope are optional payloads.
func request(resource, scope pb, scopes ...[]pb) pb {
	var rs pb
	if resource != nil {
		rs = rs.msg(1, resource)
	}
	for _, items := range scopes {
		var ss pb
		if scope != nil {
			ss = ss.msg(1, scope)
		}
		for _, it := range items {
			ss = ss.msg(2, it)
		}
		rs = rs.msg(2, ss)
	}
	return pb{}.msg(1, rs)
}

// golden reads a payload written by the interop module's
// TestWriteGoldenPayloads with the official OTLP types.
func golden(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "otlp", name))
	if err != nil {
		tb.Fatalf("cannot read golden payload: %v", err)
	}
	return b
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
