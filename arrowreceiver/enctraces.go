//go:build otelarrow

package arrowreceiver

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/otlp-lite/otlp-lite/internal/pbappend"

	"github.com/apache/arrow-go/v18/arrow"
	arrowpb "github.com/open-telemetry/otel-arrow/go/api/experimental/arrow/v1"
)

// The traces encoder writes a batch's Arrow records as an OTLP
// ExportTraceServiceRequest, reading the columns as otel-arrow's
// conversion (pkg/otel/traces/otlp) reads them, with no pdata between:
//
//   - the spans record is sorted by resource and scope, whose ids are
//     delta-encoded: a new ResourceSpans begins where the resource id
//     changes, a new ScopeSpans where the scope id does or a resource
//     begins;
//   - a span's id (delta-encoded, nullable) keys its attributes, events
//     and links;
//   - attribute records are keyed by a parent id, quasi-delta encoded
//     (a delta when the row repeats the previous row's key and value);
//     resource, scope, event and link attributes are found by a running
//     id (AttributesByDeltaID), span attributes by the span's id;
//   - events are keyed by a span id, a delta when the event repeats the
//     previous event's name; links likewise when they repeat the trace id.
//
// What otel-arrow's conversion does with hostile ids is kept where it
// shows in the output: a key given twice on one parent keeps its first
// place and its last value (pcommon.Map.PutEmpty), and the events and
// links of a span id are moved to the first span of that id, the later
// ones getting as many empty events and links (ptrace's MoveTo).
type tracesEncoder struct {
	resAttrs, scopeAttrs, spanAttrs, eventAttrs, linkAttrs attrTable

	events, links groups
	evAttr        []int64 // each event's attribute parent id, -1: none
	lkAttr        []int64
}

// errMultiple refuses a batch with two records of one payload type.
type errMultiple struct{ typ arrowpb.ArrowPayloadType }

func (e errMultiple) Error() string {
	return fmt.Sprintf("two %v records in one batch", e.typ)
}

// encode appends the batch's OTLP to dst, at most maxOTLP bytes of it, and
// returns the spans written. No spans record: nothing (0 spans, no error),
// as otel-arrow's consumer has it.
func (e *tracesEncoder) encode(recs []arrow.Record, types []arrowpb.ArrowPayloadType, dst []byte, maxOTLP int) ([]byte, int, error) {
	for _, t := range []*attrTable{&e.resAttrs, &e.scopeAttrs, &e.spanAttrs, &e.eventAttrs, &e.linkAttrs} {
		t.reset()
	}
	var spans, events, links arrow.Record
	for i, rec := range recs {
		var err error
		switch types[i] {
		case arrowpb.ArrowPayloadType_RESOURCE_ATTRS:
			err = e.resAttrs.load(rec, 0xffff)
		case arrowpb.ArrowPayloadType_SCOPE_ATTRS:
			err = e.scopeAttrs.load(rec, 0xffff)
		case arrowpb.ArrowPayloadType_SPAN_ATTRS:
			err = e.spanAttrs.load(rec, 0xffff)
		case arrowpb.ArrowPayloadType_SPAN_EVENT_ATTRS:
			err = e.eventAttrs.load(rec, 0xffffffff)
		case arrowpb.ArrowPayloadType_SPAN_LINK_ATTRS:
			err = e.linkAttrs.load(rec, 0xffffffff)
		case arrowpb.ArrowPayloadType_SPANS:
			if spans != nil {
				err = errMultiple{types[i]}
			}
			spans = rec
		case arrowpb.ArrowPayloadType_SPAN_EVENTS:
			if events != nil {
				err = errMultiple{types[i]}
			}
			events = rec
		case arrowpb.ArrowPayloadType_SPAN_LINKS:
			if links != nil {
				err = errMultiple{types[i]}
			}
			links = rec
		default:
			err = fmt.Errorf("a %v record in a traces batch", types[i])
		}
		if err != nil {
			return dst, 0, err
		}
	}
	if spans == nil {
		return dst, 0, nil
	}
	ev, err := e.loadEvents(events)
	if err != nil {
		return dst, 0, err
	}
	lk, err := e.loadLinks(links)
	if err != nil {
		return dst, 0, err
	}
	return e.encodeSpans(spans, &ev, &lk, dst, len(dst)+maxOTLP)
}

// eventCols are the columns of a span events record.
type eventCols struct {
	time    timestampCol
	name    strCol
	dropped u32Col
}

func (e *tracesEncoder) loadEvents(rec arrow.Record) (c eventCols, err error) {
	e.events.n = 0
	if rec == nil {
		return c, nil
	}
	r := resolver{f: recordFields(rec)}
	id := r.u32("id")
	parent := r.u16("parent_id")
	c.time = r.timestamp("time_unix_nano")
	c.name = r.str("name")
	c.dropped = r.u32("dropped_attributes_count")
	if r.err != nil {
		return c, r.err
	}
	n := int(rec.NumRows())
	e.events.parent = grow(e.events.parent, n)
	e.evAttr = grow(e.evAttr, n)
	// The span id is a delta when the event repeats the previous one's
	// name (EventParentIdDecoder); the attributes' parent id runs over
	// the events that have one (AttributesByDeltaID).
	var prevID uint16
	prevName := ""
	maxP := uint64(0)
	for i := range n {
		name := c.name.at(i)
		p := parent.at(i)
		if name == prevName {
			p += prevID
		} else {
			prevName = name
		}
		prevID = p
		e.events.parent[i] = uint32(p)
		maxP = max(maxP, uint64(p))
		e.evAttr[i] = -1
		if id.valid(i) {
			e.eventAttrs.lastID += id.at(i)
			e.evAttr[i] = int64(e.eventAttrs.lastID)
		}
	}
	e.events.index(n, maxP)
	e.events.taken = grow(e.events.taken, e.events.slots())
	clear(e.events.taken)
	return c, nil
}

// linkCols are the columns of a span links record.
type linkCols struct {
	traceID, spanID fsbCol
	traceState      strCol
	dropped, flags  u32Col
}

func (e *tracesEncoder) loadLinks(rec arrow.Record) (c linkCols, err error) {
	e.links.n = 0
	if rec == nil {
		return c, nil
	}
	r := resolver{f: recordFields(rec)}
	id := r.u32("id")
	parent := r.u16("parent_id")
	c.traceID = r.fsb("trace_id")
	c.spanID = r.fsb("span_id")
	c.traceState = r.str("trace_state")
	c.dropped = r.u32("dropped_attributes_count")
	c.flags = r.u32("flags")
	if r.err != nil {
		return c, r.err
	}
	n := int(rec.NumRows())
	e.links.parent = grow(e.links.parent, n)
	e.lkAttr = grow(e.lkAttr, n)
	// The span id is a delta when the link repeats the previous one's
	// trace id (LinkParentIdDecoder, whose first previous id is nil).
	var prevID uint16
	var prevTrace []byte
	maxP := uint64(0)
	for i := range n {
		tid := c.traceID.at(i)
		p := parent.at(i)
		if bytes.Equal(prevTrace, tid) {
			p += prevID
		} else {
			prevTrace = tid
		}
		prevID = p
		e.links.parent[i] = uint32(p)
		maxP = max(maxP, uint64(p))
		e.lkAttr[i] = -1
		if id.valid(i) {
			e.linkAttrs.lastID += id.at(i)
			e.lkAttr[i] = int64(e.linkAttrs.lastID)
		}
	}
	e.links.index(n, maxP)
	e.links.taken = grow(e.links.taken, e.links.slots())
	clear(e.links.taken)
	return c, nil
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// spanCols are the columns of the spans record.
type spanCols struct {
	id                               u16Col
	status                           structCol
	start                            timestampCol
	duration                         durationCol
	traceID, spanID, parentID        fsbCol
	traceState, name                 strCol
	flags                            u32Col
	kind                             i32Col
	dropAttrs, dropEvents, dropLinks u32Col
	statusCode                       i32Col
	statusMessage                    strCol
}

func spanColumns(rec arrow.Record) (c spanCols, err error) {
	r := resolver{f: recordFields(rec)}
	c.id = r.u16("id")
	c.status = r.strct("status")
	c.start = r.timestamp("start_time_unix_nano")
	c.duration = r.duration("duration_time_unix_nano")
	c.traceID = r.fsb("trace_id")
	c.spanID = r.fsb("span_id")
	c.parentID = r.fsb("parent_span_id")
	c.traceState = r.str("trace_state")
	c.name = r.str("name")
	c.flags = r.u32("flags")
	c.kind = r.i32("kind")
	c.dropAttrs = r.u32("dropped_attributes_count")
	c.dropEvents = r.u32("dropped_events_count")
	c.dropLinks = r.u32("dropped_links_count")
	if r.err != nil {
		return c, r.err
	}
	st := resolver{f: structFields(c.status.a)}
	c.statusCode = st.i32("code")
	c.statusMessage = st.str("status_message")
	return c, st.err
}

// Span fields (opentelemetry.proto.trace.v1.Span) and its messages.
const (
	fSpanTraceID      = 1
	fSpanSpanID       = 2
	fSpanTraceState   = 3
	fSpanParentSpanID = 4
	fSpanName         = 5
	fSpanKind         = 6
	fSpanStart        = 7
	fSpanEnd          = 8
	fSpanAttrs        = 9
	fSpanDropAttrs    = 10
	fSpanEvents       = 11
	fSpanDropEvents   = 12
	fSpanLinks        = 13
	fSpanDropLinks    = 14
	fSpanStatus       = 15
	fSpanFlags        = 16

	fEventTime    = 1
	fEventName    = 2
	fEventAttrs   = 3
	fEventDropped = 4

	fLinkTraceID    = 1
	fLinkSpanID     = 2
	fLinkTraceState = 3
	fLinkAttrs      = 4
	fLinkDropped    = 5
	fLinkFlags      = 6

	fStatusMessage = 2
	fStatusCode    = 3
)

var (
	errTraceIDLen = errors.New("a span's trace id is not 16 bytes")
	errSpanIDLen  = errors.New("a span's id is not 8 bytes")
)

func (e *tracesEncoder) encodeSpans(rec arrow.Record, ev *eventCols, lk *linkCols, b []byte, limit int) ([]byte, int, error) {
	c, err := spanColumns(rec)
	if err != nil {
		return b, 0, err
	}
	w, err := newScopeWalker(rec, &e.resAttrs, &e.scopeAttrs, limit)
	if err != nil {
		return b, 0, err
	}
	n := int(rec.NumRows())
	var spanID uint16
	for row := range n {
		if b, err = w.begin(b, row); err != nil {
			return b, 0, err
		}
		if b, err = e.appendSpan(b, &c, ev, lk, row, &spanID, limit); err != nil {
			return b, 0, err
		}
	}
	return w.end(b), n, nil
}

// appendSpan writes row as a Span of the open ScopeSpans.
func (e *tracesEncoder) appendSpan(b []byte, c *spanCols, ev *eventCols, lk *linkCols, row int, spanID *uint16, limit int) ([]byte, error) {
	tid := c.traceID.at(row)
	if len(tid) != 16 {
		return b, errTraceIDLen
	}
	sid := c.spanID.at(row)
	if len(sid) != 8 {
		return b, errSpanIDLen
	}
	psid := c.parentID.at(row)
	if psid != nil && len(psid) != 8 {
		return b, errSpanIDLen
	}
	b, at := pbappend.OpenLen(b, fScopeItems)
	b = appendIDField(b, fSpanTraceID, tid, 16)
	b = appendIDField(b, fSpanSpanID, sid, 8)
	b = pbappend.StringNonEmpty(b, fSpanTraceState, c.traceState.at(row))
	b = appendIDField(b, fSpanParentSpanID, psid, 8)
	b = pbappend.StringNonEmpty(b, fSpanName, c.name.at(row))
	b = pbappend.VarintNonZero(b, fSpanKind, uint64(int64(c.kind.at(row))))
	start := c.start.at(row)
	b = pbappend.Fixed64NonZero(b, fSpanStart, uint64(start))
	b = pbappend.Fixed64NonZero(b, fSpanEnd, uint64(start+c.duration.at(row)))
	if c.id.valid(row) {
		*spanID += c.id.at(row)
		id := *spanID
		var err error
		if b, err = e.spanAttrs.appendAttrs(b, fSpanAttrs, e.spanAttrs.rows(uint32(id)), limit); err != nil {
			return b, err
		}
		// A span id's events and links go to its first span (taken).
		moved := false
		if s := e.events.slot(uint32(id)); s >= 0 {
			moved, e.events.taken[s] = e.events.taken[s], true
		}
		for _, r := range e.events.rows(uint32(id)) {
			if moved {
				b = append(b, fSpanEvents<<3|2, 0)
				continue
			}
			if b, err = e.appendEvent(b, ev, int(r), limit); err != nil {
				return b, err
			}
		}
		moved = false
		if s := e.links.slot(uint32(id)); s >= 0 {
			moved, e.links.taken[s] = e.links.taken[s], true
		}
		for _, r := range e.links.rows(uint32(id)) {
			if moved {
				b = append(b, fSpanLinks<<3|2, 0)
				continue
			}
			if b, err = e.appendLink(b, lk, int(r), limit); err != nil {
				return b, err
			}
		}
	}
	b = pbappend.VarintNonZero(b, fSpanDropAttrs, uint64(c.dropAttrs.at(row)))
	b = pbappend.VarintNonZero(b, fSpanDropEvents, uint64(c.dropEvents.at(row)))
	b = pbappend.VarintNonZero(b, fSpanDropLinks, uint64(c.dropLinks.at(row)))
	if c.status.present(row) {
		msg, code := c.statusMessage.at(row), c.statusCode.at(row)
		if msg != "" || code != 0 {
			var st int
			b, st = pbappend.OpenLen(b, fSpanStatus)
			b = pbappend.StringNonEmpty(b, fStatusMessage, msg)
			b = pbappend.VarintNonZero(b, fStatusCode, uint64(int64(code)))
			b = pbappend.CloseLen(b, st)
		}
	}
	b = pbappend.Fixed32NonZero(b, fSpanFlags, c.flags.at(row))
	b = pbappend.CloseLen(b, at)
	if len(b) > limit {
		return b, errTooLarge{len(b), limit}
	}
	return b, nil
}

func (e *tracesEncoder) appendEvent(b []byte, c *eventCols, r int, limit int) ([]byte, error) {
	b, at := pbappend.OpenLen(b, fSpanEvents)
	b = pbappend.Fixed64NonZero(b, fEventTime, uint64(c.time.at(r)))
	b = pbappend.StringNonEmpty(b, fEventName, c.name.at(r))
	if p := e.evAttr[r]; p >= 0 {
		var err error
		if b, err = e.eventAttrs.appendAttrs(b, fEventAttrs, e.eventAttrs.rows(uint32(p)), limit); err != nil {
			return b, err
		}
	}
	b = pbappend.VarintNonZero(b, fEventDropped, uint64(c.dropped.at(r)))
	return pbappend.CloseLen(b, at), nil
}

func (e *tracesEncoder) appendLink(b []byte, c *linkCols, r int, limit int) ([]byte, error) {
	b, at := pbappend.OpenLen(b, fSpanLinks)
	b = appendIDField(b, fLinkTraceID, c.traceID.at(r), 16)
	b = appendIDField(b, fLinkSpanID, c.spanID.at(r), 8)
	b = pbappend.StringNonEmpty(b, fLinkTraceState, c.traceState.at(r))
	if p := e.lkAttr[r]; p >= 0 {
		var err error
		if b, err = e.linkAttrs.appendAttrs(b, fLinkAttrs, e.linkAttrs.rows(uint32(p)), limit); err != nil {
			return b, err
		}
	}
	b = pbappend.VarintNonZero(b, fLinkDropped, uint64(c.dropped.at(r)))
	b = pbappend.Fixed32NonZero(b, fLinkFlags, c.flags.at(r))
	return pbappend.CloseLen(b, at), nil
}

// appendIDField writes a trace or span id of size bytes (shorter ones
// zero-padded, longer ones cut, as pdata's fixed-size ids take them); an
// all-zero id is omitted, as pdata omits it.
func appendIDField(b []byte, num int, id []byte, size int) []byte {
	var buf [16]byte
	copy(buf[:size], id)
	zero := true
	for _, x := range buf[:size] {
		if x != 0 {
			zero = false
			break
		}
	}
	if zero {
		return b
	}
	return pbappend.BytesField(b, num, buf[:size])
}
