package otlpdecode

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/VictoriaMetrics/easyproto"

	"github.com/otlp-lite/otlp-lite/otlp"
)

// checker walks a request for the Check* functions. It holds no buffers:
// the walk only looks at lengths and, optionally, UTF-8, so it runs on the
// caller's stack without allocating.
type checker struct {
	utf8     bool
	maxDepth int
}

func newChecker(opts *Options) checker {
	return checker{utf8: opts.validateUTF8(), maxDepth: opts.maxDepth()}
}

// badString reports whether a string field is invalid UTF-8 while
// ValidateUTF8 is on. It inlines to a flag test when it is off.
func (c *checker) badString(fc *easyproto.FieldContext) bool {
	return c.utf8 && badUTF8String(fc)
}

func badUTF8String(fc *easyproto.FieldContext) bool {
	s, ok := fc.String()
	return ok && !validUTF8String(s)
}

// stringField records in *r that the string field fc, named name, is not
// UTF-8 (with ValidateUTF8), unless *r already holds a reason: the first
// one found is kept. Like badString, it inlines to a flag test when
// ValidateUTF8 is off.
func (c *checker) stringField(fc *easyproto.FieldContext, name string, r *reason) {
	if c.utf8 {
		utf8Field(fc, name, r)
	}
}

func utf8Field(fc *easyproto.FieldContext, name string, r *reason) {
	if s, ok := fc.String(); ok && !validUTF8String(s) && !r.bad() {
		*r = utf8Reason(name, -1)
	}
}

// reason says why an item is rejected; the zero value means it is valid.
// It holds static strings and numbers only, so the happy path of Check
// never formats, and a rejection costs no allocation either: String runs
// once per request, for FirstRejection.
type reason struct {
	// path names the offending field from the item down, e.g.
	// links[1].trace_id is {{"links", 1}, {"trace_id", -1}}.
	path [4]pathElem
	got  int    // reasonLen: length in bytes; reasonBuckets: len(bucket_counts)
	want string // reasonLen: allowed lengths, e.g. "16" or "empty or 8"
	// n is len(explicit_bounds) for reasonBuckets. int32 keeps it and
	// kind in one word: a reason is copied out of every item check.
	n    int32
	kind reasonKind
}

// reasonKind selects the wording of a reason.
type reasonKind uint8

const (
	reasonUTF8    reasonKind = iota // "is not valid UTF-8"
	reasonLen                       // "is <got> bytes, want <want>"
	reasonZero                      // "is all zeroes"
	reasonBuckets                   // "has <got> elements, want <n+1> (explicit_bounds + 1) or 0"
)

type pathElem struct {
	name string
	idx  int // index in a repeated field, -1 for a singular one
}

func (r reason) bad() bool { return r.path[0].name != "" }

func utf8Reason(field string, idx int) reason {
	return reason{path: [4]pathElem{{field, idx}}, kind: reasonUTF8}
}

func lenReason(field string, got int, want string) reason {
	return reason{path: [4]pathElem{{field, -1}}, got: got, want: want, kind: reasonLen}
}

// zeroReason rejects an id made of zero bytes only, which trace.proto
// declares invalid for a span's own trace_id and span_id.
func zeroReason(field string) reason {
	return reason{path: [4]pathElem{{field, -1}}, kind: reasonZero}
}

// bucketsReason rejects a HistogramDataPoint whose bucket_counts has
// counts elements while explicit_bounds has bounds elements.
func bucketsReason(counts, bounds int) reason {
	return reason{path: [4]pathElem{{"bucket_counts", -1}}, got: counts, n: int32(min(bounds, 1<<31-2)), kind: reasonBuckets}
}

// note records in *r the reason *sub found in element idx of the field
// name (idx -1: a singular field), unless *sub is valid or *r already
// holds a reason. sub is a pointer so that the inlined call does not copy
// the reason on the happy path.
func (r *reason) note(sub *reason, name string, idx int) {
	if sub.bad() && !r.bad() {
		*r = sub.in(name, idx)
	}
}

// in nests a reason found in element idx of the field name (idx -1: a
// singular field). Paths deeper than 4 elements keep their first 4.
func (r reason) in(name string, idx int) reason {
	copy(r.path[1:], r.path[:3])
	r.path[0] = pathElem{name, idx}
	return r
}

func (r reason) String() string {
	var b []byte
	for i, e := range r.path {
		if e.name == "" {
			break
		}
		if i > 0 {
			b = append(b, '.')
		}
		b = append(b, e.name...)
		if e.idx >= 0 {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(e.idx), 10)
			b = append(b, ']')
		}
	}
	switch r.kind {
	case reasonUTF8:
		b = append(b, " is not valid UTF-8"...)
	case reasonLen:
		b = append(b, " is "...)
		b = strconv.AppendInt(b, int64(r.got), 10)
		b = append(b, " bytes, want "...)
		b = append(b, r.want...)
	case reasonZero:
		b = append(b, " is all zeroes"...)
	case reasonBuckets:
		b = append(b, " has "...)
		b = strconv.AppendInt(b, int64(r.got), 10)
		b = append(b, " elements, want "...)
		b = strconv.AppendInt(b, int64(r.n)+1, 10)
		b = append(b, " (explicit_bounds + 1) or 0"...)
	}
	return string(b)
}

var errDepth = errors.New("AnyValue nesting exceeds the depth limit")

// anyValue checks an AnyValue at the given nesting depth (1 for an
// attribute value or a log body) and reports whether its strings are valid.
//
//	message AnyValue {
//	  oneof value {
//	    string string_value = 1;
//	    bool bool_value = 2;
//	    int64 int_value = 3;
//	    double double_value = 4;
//	    ArrayValue array_value = 5;
//	    KeyValueList kvlist_value = 6;
//	    bytes bytes_value = 7;
//	    int32 string_value_strindex = 8;
//	  }
//	}
func (c *checker) anyValue(src []byte, depth int) (bool, error) {
	if depth > c.maxDepth {
		return false, fmt.Errorf("%w (%d)", errDepth, c.maxDepth)
	}
	valid := true
	var fc easyproto.FieldContext
	for len(src) > 0 {
		var err error
		if src, err = nextField(&fc, src); err != nil {
			return false, err
		}
		switch fc.FieldNum {
		case 1:
			if c.badString(&fc) {
				valid = false
			}
		case 5:
			if data, ok := fc.MessageData(); ok {
				ok, err := c.arrayValue(data, depth)
				if err != nil {
					return false, at(err, "array_value", -1)
				}
				valid = valid && ok
			}
		case 6:
			if data, ok := fc.MessageData(); ok {
				ok, err := c.keyValueList(data, depth)
				if err != nil {
					return false, at(err, "kvlist_value", -1)
				}
				valid = valid && ok
			}
		}
	}
	return valid, nil
}

// scalarValue checks an AnyValue made of a single scalar field (or of
// nothing) in its shortest encoding; ok is false for any other shape,
// which the caller then walks in full.
func (c *checker) scalarValue(v []byte) (valid, ok bool) {
	if len(v) == 0 {
		return true, true
	}
	switch v[0] {
	case 0x0a: // string_value
		if len(v) >= 2 && v[1] < 0x80 && int(v[1])+2 == len(v) {
			return !c.utf8 || validUTF8(v[2:]), true
		}
	case 0x3a: // bytes_value
		if len(v) >= 2 && v[1] < 0x80 && int(v[1])+2 == len(v) {
			return true, true
		}
	case 0x10, 0x18: // bool_value, int_value
		if _, n := binary.Uvarint(v[1:]); n > 0 && 1+n == len(v) {
			return true, true
		}
	case 0x21: // double_value
		return true, len(v) == 9
	}
	return false, false
}

// arrayValue checks the elements of an ArrayValue held by an AnyValue at
// depth.
//
//	message ArrayValue {
//	  repeated AnyValue values = 1;
//	}
func (c *checker) arrayValue(src []byte, depth int) (bool, error) {
	valid := true
	var fc easyproto.FieldContext
	for i := 0; len(src) > 0; {
		var err error
		if src, err = nextField(&fc, src); err != nil {
			return false, err
		}
		if fc.FieldNum != 1 {
			continue
		}
		if data, ok := fc.MessageData(); ok {
			ok, err := c.anyValue(data, depth+1)
			if err != nil {
				return false, at(err, "values", i)
			}
			valid = valid && ok
			i++
		}
	}
	return valid, nil
}

// keyValueList checks the pairs of a KeyValueList held by an AnyValue at
// depth.
//
//	message KeyValueList {
//	  repeated KeyValue values = 1;
//	}
func (c *checker) keyValueList(src []byte, depth int) (bool, error) {
	valid := true
	var fc easyproto.FieldContext
	for i := 0; len(src) > 0; {
		var err error
		if src, err = nextField(&fc, src); err != nil {
			return false, err
		}
		if fc.FieldNum != 1 {
			continue
		}
		if data, ok := fc.MessageData(); ok {
			ok, err := c.keyValue(data, depth+1)
			if err != nil {
				return false, at(err, "values", i)
			}
			valid = valid && ok
			i++
		}
	}
	return valid, nil
}

// keyValue checks a KeyValue whose value is at depth.
//
//	message KeyValue {
//	  string key = 1;
//	  AnyValue value = 2;
//	  int32 key_strindex = 3;
//	}
func (c *checker) keyValue(src []byte, depth int) (bool, error) {
	// Fast path for what exporters emit: a key and a scalar value with
	// short lengths, nothing else, in either order — the SDKs
	// (protobuf-go) write fields in field-number order, the Collector's
	// pdata writes them backwards (value first). Anything different
	// takes the general walk.
	if len(src) >= 4 && src[1] < 0x80 && depth <= c.maxDepth {
		n := int(src[1]) // length of the first field
		if 4+n <= len(src) && src[3+n] < 0x80 && 4+n+int(src[3+n]) == len(src) {
			first, second := src[2:2+n], src[4+n:]
			switch {
			case src[0] == 0x0a && src[2+n] == 0x12: // key = 1, value = 2
				if valid, ok := c.scalarValue(second); ok {
					return valid && (!c.utf8 || validUTF8(first)), nil
				}
			case src[0] == 0x12 && src[2+n] == 0x0a: // value = 2, key = 1
				if valid, ok := c.scalarValue(first); ok {
					return valid && (!c.utf8 || validUTF8(second)), nil
				}
			}
		}
	}
	valid := true
	var fc easyproto.FieldContext
	for len(src) > 0 {
		var err error
		if src, err = nextField(&fc, src); err != nil {
			return false, err
		}
		switch fc.FieldNum {
		case 1:
			if c.badString(&fc) {
				valid = false
			}
		case 2:
			if data, ok := fc.MessageData(); ok {
				ok, err := c.anyValue(data, depth)
				if err != nil {
					return false, at(err, "value", -1)
				}
				valid = valid && ok
			}
		}
	}
	return valid, nil
}

// attribute checks element idx of a repeated KeyValue field named field and
// folds its UTF-8 verdict into r.
func (c *checker) attribute(fc *easyproto.FieldContext, field string, idx *int, r *reason) error {
	data, ok := fc.MessageData()
	if !ok {
		return nil
	}
	i := *idx
	*idx = i + 1
	valid, err := c.keyValue(data, 1)
	if err != nil {
		return at(err, field, i)
	}
	if !valid && !r.bad() {
		*r = utf8Reason(field, i)
	}
	return nil
}

// resource checks a Resource.
//
//	message Resource {
//	  repeated opentelemetry.proto.common.v1.KeyValue attributes = 1;
//	  uint32 dropped_attributes_count = 2;
//	  repeated opentelemetry.proto.common.v1.EntityRef entity_refs = 3;
//	}
func (c *checker) resource(src []byte) (reason, error) {
	var r reason
	var fc easyproto.FieldContext
	nAttrs, nRefs := 0, 0
	for len(src) > 0 {
		var err error
		if src, err = nextField(&fc, src); err != nil {
			return r, err
		}
		switch fc.FieldNum {
		case 1:
			if err := c.attribute(&fc, "attributes", &nAttrs, &r); err != nil {
				return r, err
			}
		case 3:
			data, ok := fc.MessageData()
			if !ok {
				continue
			}
			er, err := c.entityRef(data)
			if err != nil {
				return r, at(err, "entity_refs", nRefs)
			}
			r.note(&er, "entity_refs", nRefs)
			nRefs++
		}
	}
	return r, nil
}

// entityRef checks an EntityRef.
//
//	message EntityRef {
//	  string schema_url = 1;
//	  string type = 2;
//	  repeated string id_keys = 3;
//	  repeated string description_keys = 4;
//	}
func (c *checker) entityRef(src []byte) (reason, error) {
	var r reason
	var fc easyproto.FieldContext
	for len(src) > 0 {
		var err error
		if src, err = nextField(&fc, src); err != nil {
			return r, err
		}
		switch fc.FieldNum {
		case 1:
			c.stringField(&fc, "schema_url", &r)
		case 2:
			c.stringField(&fc, "type", &r)
		case 3:
			c.stringField(&fc, "id_keys", &r)
		case 4:
			c.stringField(&fc, "description_keys", &r)
		}
	}
	return r, nil
}

// scope checks an InstrumentationScope.
//
//	message InstrumentationScope {
//	  string name = 1;
//	  string version = 2;
//	  repeated KeyValue attributes = 3;
//	  uint32 dropped_attributes_count = 4;
//	}
func (c *checker) scope(src []byte) (reason, error) {
	var r reason
	var fc easyproto.FieldContext
	nAttrs := 0
	for len(src) > 0 {
		var err error
		if src, err = nextField(&fc, src); err != nil {
			return r, err
		}
		switch fc.FieldNum {
		case 1:
			c.stringField(&fc, "name", &r)
		case 2:
			c.stringField(&fc, "version", &r)
		case 3:
			if err := c.attribute(&fc, "attributes", &nAttrs, &r); err != nil {
				return r, err
			}
		}
	}
	return r, nil
}

// itemTally counts the items found in one element of a Scope* message's
// item field (one span or log record, or all data points of one metric)
// and remembers the first rejected one.
type itemTally struct {
	items    int
	rejected int
	kind     string // metrics: the data field holding the points, e.g. "gauge"
	first    reason // why the first rejected item is rejected
	point    int    // metrics: index of the first rejected data point
}

// signal selects the item check of a walk: the OTLP signal enum of package
// otlp, defined there once for every package. It is a switch rather than a
// function value so that the itemTally stays on the stack: an indirect
// call would make it escape, one allocation per item.
type signal = otlp.Signal

const (
	signalTraces  = otlp.Traces
	signalMetrics = otlp.Metrics
	signalLogs    = otlp.Logs
)

// item checks one element of the item field of a Scope* message.
func (c *checker) item(sig signal, src []byte, t *itemTally) error {
	switch sig {
	case signalTraces:
		r, err := c.span(src)
		return t.single(&r, err)
	case signalMetrics:
		return checkMetricItem(c, src, t)
	default:
		r, err := c.logRecord(src)
		return t.single(&r, err)
	}
}

// single tallies an element that is one item (a span or a log record)
// with the verdict of its check. r is a pointer so that the inlined call
// does not copy the reason on the happy path.
func (t *itemTally) single(r *reason, err error) error {
	if err != nil {
		return err
	}
	t.items = 1
	if r.bad() {
		t.rejected = 1
		t.first = *r
	}
	return nil
}

// signalNames are the field names used in positions for one signal.
type signalNames struct {
	resources string // "resource_spans"
	scopes    string // "scope_spans"
	items     string // "spans"
}

var (
	traceNames  = signalNames{"resource_spans", "scope_spans", "spans"}
	metricNames = signalNames{"resource_metrics", "scope_metrics", "metrics"}
	logNames    = signalNames{"resource_logs", "scope_logs", "log_records"}
)

// itemPos locates an item (a span, a log record or a data point) inside a
// request.
type itemPos struct {
	rs, ss, idx int
	kind        string // metrics: data field of metrics[idx]
	point       int    // metrics: index in data_points
}

// tally accumulates items, rejections, and the positions of the first item
// and of the first rejected item of a Resource* or Scope* message.
type tally struct {
	items, rejected int
	firstItem       itemPos
	firstRej        itemPos
	firstReason     reason
}

func (t *tally) add(u *tally) {
	if u.items > 0 && t.items == 0 {
		t.firstItem = u.firstItem
	}
	if u.rejected > 0 && t.rejected == 0 {
		t.firstRej, t.firstReason = u.firstRej, u.firstReason
	}
	t.items += u.items
	t.rejected += u.rejected
}

// rejectAll rejects every item, because their container is invalid.
func (t *tally) rejectAll(r reason) {
	if t.items == 0 {
		return
	}
	t.rejected = t.items
	t.firstRej, t.firstReason = t.firstItem, r
}

func (p *itemPos) format(n *signalNames) string {
	s := fmt.Sprintf("%s[%d].%s[%d].%s[%d]", n.resources, p.rs, n.scopes, p.ss, n.items, p.idx)
	if p.kind != "" {
		s += fmt.Sprintf(".%s.data_points[%d]", p.kind, p.point)
	}
	return s
}

// check walks an Export*ServiceRequest; the three request messages share
// this layout:
//
//	message ExportTraceServiceRequest {
//	  repeated opentelemetry.proto.trace.v1.ResourceSpans resource_spans = 1;
//	}
func (c *checker) check(src []byte, names *signalNames, item signal) (Result, error) {
	var total tally
	var fc easyproto.FieldContext
	for rs := 0; len(src) > 0; {
		var err error
		if src, err = nextField(&fc, src); err != nil {
			return Result{}, topLevel(err)
		}
		if fc.FieldNum != 1 {
			continue
		}
		data, ok := fc.MessageData()
		if !ok {
			continue
		}
		var t tally
		if err := c.resourceItems(data, rs, names, item, &t); err != nil {
			return Result{}, at(err, names.resources, rs)
		}
		total.add(&t)
		rs++
	}
	res := Result{Items: total.items, Rejected: total.rejected}
	if total.rejected > 0 {
		res.FirstRejection = total.firstRej.format(names) + ": " + total.firstReason.String()
	}
	return res, nil
}

// resourceItems walks a Resource{Spans,Metrics,Logs}; the three share this
// layout:
//
//	message ResourceSpans {
//	  opentelemetry.proto.resource.v1.Resource resource = 1;
//	  repeated ScopeSpans scope_spans = 2;
//	  string schema_url = 3;
//	}
//
// If the resource (or schema_url) is invalid, every item under it is
// rejected; the resource may follow the scopes on the wire, so the verdict
// is applied after the walk.
func (c *checker) resourceItems(src []byte, rs int, names *signalNames, item signal, t *tally) error {
	var resReason reason
	var fc easyproto.FieldContext
	for ss := 0; len(src) > 0; {
		var err error
		if src, err = nextField(&fc, src); err != nil {
			return err
		}
		switch fc.FieldNum {
		case 1:
			data, ok := fc.MessageData()
			if !ok {
				continue
			}
			r, err := c.resource(data)
			if err != nil {
				return at(err, "resource", -1)
			}
			resReason.note(&r, "resource", -1)
		case 2:
			data, ok := fc.MessageData()
			if !ok {
				continue
			}
			var st tally
			if err := c.scopeItems(data, rs, ss, names, item, &st); err != nil {
				return at(err, names.scopes, ss)
			}
			t.add(&st)
			ss++
		case 3:
			c.stringField(&fc, "schema_url", &resReason)
		}
	}
	if resReason.bad() {
		t.rejectAll(resReason)
	}
	return nil
}

// scopeItems walks a Scope{Spans,Metrics,Logs}; the three share this
// layout:
//
//	message ScopeSpans {
//	  opentelemetry.proto.common.v1.InstrumentationScope scope = 1;
//	  repeated Span spans = 2;
//	  string schema_url = 3;
//	}
func (c *checker) scopeItems(src []byte, rs, ss int, names *signalNames, item signal, t *tally) error {
	var scopeReason reason
	var fc easyproto.FieldContext
	for idx := 0; len(src) > 0; {
		var err error
		if src, err = nextField(&fc, src); err != nil {
			return err
		}
		switch fc.FieldNum {
		case 1:
			data, ok := fc.MessageData()
			if !ok {
				continue
			}
			r, err := c.scope(data)
			if err != nil {
				return at(err, "scope", -1)
			}
			scopeReason.note(&r, "scope", -1)
		case 2:
			data, ok := fc.MessageData()
			if !ok {
				continue
			}
			var it itemTally
			if err := c.item(item, data, &it); err != nil {
				return at(err, names.items, idx)
			}
			if it.items > 0 && t.items == 0 {
				t.firstItem = itemPos{rs: rs, ss: ss, idx: idx, kind: it.kind}
			}
			if it.rejected > 0 && t.rejected == 0 {
				t.firstRej = itemPos{rs: rs, ss: ss, idx: idx, kind: it.kind, point: it.point}
				t.firstReason = it.first
			}
			t.items += it.items
			t.rejected += it.rejected
			idx++
		case 3:
			c.stringField(&fc, "schema_url", &scopeReason)
		}
	}
	if scopeReason.bad() {
		t.rejectAll(scopeReason)
	}
	return nil
}
