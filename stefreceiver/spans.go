package stefreceiver

import (
	"errors"
	"fmt"
	"github.com/otlp-lite/otlp-lite/internal/pbappend"

	"github.com/splunk/stef/go/otel/otelstef"
)

// spansBuilder turns a sequence of STEF Spans records into one
// ExportTraceServiceRequest, as metricsBuilder does for metrics: each
// record is a span, consecutive records with the same resource and scope
// share their ResourceSpans and ScopeSpans. STEF does not carry the
// dropped event and link counts: they are not written.
type spansBuilder struct {
	rec *otelstef.Spans
	out []byte
	// The open ResourceSpans and ScopeSpans (At < 0: none), and the
	// content sizes of the last ones closed (pbappend.OpenLenFor).
	rm, sm         pbappend.Len
	rmSize, smSize int
	res            otelstef.Resource
	scope          otelstef.Scope
	spans          int
	last           int // the size of the recent requests finished (highWater, outBuffer)
	// maxRecord bounds what a record writes (recordLimit).
	maxRecord int
}

func (b *spansBuilder) reset(buf []byte) {
	b.out, b.rm, b.sm, b.spans = outBuffer(buf, b.last), pbappend.NoLen, pbappend.NoLen, 0
}

func (b *spansBuilder) items() int { return b.spans }

func (b *spansBuilder) setMaxRecord(n int) { b.maxRecord = n }
func (b *spansBuilder) size() int          { return len(b.out) }

func (b *spansBuilder) closeScope() {
	if b.sm.At >= 0 {
		b.smSize = b.sm.Content(b.out)
		b.out = pbappend.CloseLenFor(b.out, b.sm)
		b.sm = pbappend.NoLen
	}
}

func (b *spansBuilder) closeResource() {
	b.closeScope()
	if b.rm.At >= 0 {
		b.rmSize = b.rm.Content(b.out)
		b.out = pbappend.CloseLenFor(b.out, b.rm)
		b.rm = pbappend.NoLen
	}
}

func (b *spansBuilder) finish() []byte {
	b.closeResource()
	if len(b.out) > 0 {
		b.last = highWater(b.last, len(b.out))
	}
	return b.out
}

func (b *spansBuilder) buf() *[]byte { return &b.out }

func (b *spansBuilder) add() (err error) {
	r := b.rec
	if b.out == nil {
		b.out = firstBuffer(b.last)
	}
	start, rm0, sm0 := len(b.out), b.rm, b.sm
	lim := recordLimit(start, b.maxRecord)
	// As in metricsBuilder.add: once the record has closed the previous
	// containers, it rolls back to after them.
	closed := func() { start, rm0, sm0 = len(b.out), b.rm, b.sm }
	defer func() {
		if err != nil {
			b.out, b.rm, b.sm = b.out[:start], rm0, sm0
			b.closeResource()
		}
	}()
	if r.Resource() == nil || r.Scope() == nil {
		return errNilRef
	}
	// As in metricsBuilder.add: a field the record did not carry is the
	// previous record's.
	if b.rm.At < 0 || (!fastPaths || r.IsResourceModified()) && !b.res.IsEqual(r.Resource()) {
		if b.rm.At >= 0 {
			b.closeResource()
			closed()
		}
		b.res.CopyFrom(r.Resource())
		b.out, b.rm = pbappend.OpenLenFor(b.out, 1, b.rmSize) // ResourceSpans
		b.out = pbappend.StringNonEmpty(b.out, 3, r.Resource().SchemaURL())
		if b.out, err = appendResource(b.out, r.Resource(), lim); err != nil {
			return err
		}
	}
	if b.sm.At < 0 || (!fastPaths || r.IsScopeModified()) && !b.scope.IsEqual(r.Scope()) {
		if b.sm.At >= 0 {
			b.closeScope()
			closed()
		}
		b.scope.CopyFrom(r.Scope())
		b.out, b.sm = pbappend.OpenLenFor(b.out, 2, b.smSize) // ScopeSpans
		b.out = pbappend.StringNonEmpty(b.out, 3, r.Scope().SchemaURL())
		if b.out, err = appendScope(b.out, r.Scope(), lim); err != nil {
			return err
		}
	}
	if b.out, err = appendSpan(b.out, r.Span(), lim); err != nil {
		return fmt.Errorf("cannot decode span: %w", err)
	}
	if len(b.out) > lim {
		return fmt.Errorf("cannot decode span: %w", errRecordTooLarge)
	}
	b.spans++
	return nil
}

// appendSpan appends s as field 2 (spans) of the open ScopeSpans.
func appendSpan(b []byte, s *otelstef.Span, lim int) (_ []byte, err error) {
	if err := checkSpanIDs(s); err != nil {
		return b, err
	}
	if len(b)+len(s.Name())+len(s.TraceState())+len(s.Status().Message()) > lim {
		return b, errRecordTooLarge
	}
	at := 0
	b, at = pbappend.OpenLen(b, 2)
	b = pbappend.StringField(b, 1, string(s.TraceID()))
	b = pbappend.StringField(b, 2, string(s.SpanID()))
	b = pbappend.StringNonEmpty(b, 3, s.TraceState())
	if id := s.ParentSpanID(); len(id) > 0 {
		b = pbappend.StringField(b, 4, string(id))
	}
	b = pbappend.StringNonEmpty(b, 5, s.Name())
	if k := s.Kind(); k != 0 {
		b = pbappend.VarintField(b, 6, uint64(k))
	}
	b = pbappend.Fixed64Field(b, 7, s.StartTimeUnixNano())
	b = pbappend.Fixed64Field(b, 8, s.EndTimeUnixNano())
	if b, err = appendAttributes(b, 9, s.Attributes(), lim); err != nil {
		return b, err
	}
	if n := s.DroppedAttributesCount(); n > 0 {
		b = pbappend.VarintField(b, 10, n)
	}
	ev := s.Events()
	for i := range ev.Len() {
		e := ev.At(i)
		if len(b)+len(e.Name()) > lim {
			return b, errRecordTooLarge
		}
		var ea int
		b, ea = pbappend.OpenLen(b, 11)
		b = pbappend.Fixed64Field(b, 1, e.TimeUnixNano())
		b = pbappend.StringNonEmpty(b, 2, e.Name())
		if b, err = appendAttributes(b, 3, e.Attributes(), lim); err != nil {
			return b, err
		}
		if n := e.DroppedAttributesCount(); n > 0 {
			b = pbappend.VarintField(b, 4, n)
		}
		b = pbappend.CloseLen(b, ea)
	}
	ln := s.Links()
	for i := range ln.Len() {
		l := ln.At(i)
		if len(b)+len(l.TraceState()) > lim {
			return b, errRecordTooLarge
		}
		var la int
		b, la = pbappend.OpenLen(b, 13)
		b = pbappend.StringField(b, 1, string(l.TraceID()))
		b = pbappend.StringField(b, 2, string(l.SpanID()))
		b = pbappend.StringNonEmpty(b, 3, l.TraceState())
		if b, err = appendAttributes(b, 4, l.Attributes(), lim); err != nil {
			return b, err
		}
		if n := l.DroppedAttributesCount(); n > 0 {
			b = pbappend.VarintField(b, 5, n)
		}
		if f := l.Flags(); f != 0 {
			b = pbappend.Fixed32Field(b, 6, uint32(f))
		}
		b = pbappend.CloseLen(b, la)
	}
	if st := s.Status(); st.Code() != 0 || st.Message() != "" {
		var sa int
		b, sa = pbappend.OpenLen(b, 15)
		b = pbappend.StringNonEmpty(b, 2, st.Message())
		if c := st.Code(); c != 0 {
			b = pbappend.VarintField(b, 3, c)
		}
		b = pbappend.CloseLen(b, sa)
	}
	if f := s.Flags(); f != 0 {
		b = pbappend.Fixed32Field(b, 16, uint32(f))
	}
	return pbappend.CloseLen(b, at), nil
}

// checkSpanIDs refuses a span the pipeline's validation would reject
// (otlpdecode.CheckTraces, after trace.proto): a trace_id of other than 16
// bytes or all zeroes, a span_id of other than 8 bytes or all zeroes, a
// parent_span_id neither empty nor 8 bytes, a link whose trace_id is not
// 16 bytes or span_id not 8. The decoder enforces them so that the
// requests it builds need no validation pass (ingest.ExportValidated),
// and a bad span is reported alone (bad_data_record_id_ranges), not with
// its request.
func checkSpanIDs(s *otelstef.Span) error {
	switch id := s.TraceID(); {
	case len(id) != 16:
		return fmt.Errorf("trace_id is %d bytes, want 16", len(id))
	case allZero(string(id)):
		return errors.New("trace_id is all zeroes")
	}
	switch id := s.SpanID(); {
	case len(id) != 8:
		return fmt.Errorf("span_id is %d bytes, want 8", len(id))
	case allZero(string(id)):
		return errors.New("span_id is all zeroes")
	}
	if n := len(s.ParentSpanID()); n != 0 && n != 8 {
		return fmt.Errorf("parent_span_id is %d bytes, want empty or 8", n)
	}
	ln := s.Links()
	for i := range ln.Len() {
		if n := len(ln.At(i).TraceID()); n != 16 {
			return fmt.Errorf("link %d: trace_id is %d bytes, want 16", i, n)
		}
		if n := len(ln.At(i).SpanID()); n != 8 {
			return fmt.Errorf("link %d: span_id is %d bytes, want 8", i, n)
		}
	}
	return nil
}

func allZero(id string) bool {
	for i := range len(id) {
		if id[i] != 0 {
			return false
		}
	}
	return true
}
