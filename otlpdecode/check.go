package otlpdecode

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlppb"
)

// checker walks a request for the Check* functions. It holds no buffers:
// the walk only looks at lengths and, optionally, UTF-8, so it runs on the
// caller's stack without allocating.
type checker struct {
	utf8     bool
	maxDepth int

	// profiles is set for a profiles request, whose KeyValue.key_strindex
	// and AnyValue.string_value_strindex index dict's string_table (see
	// keyValue); dict describes that request's ProfilesDictionary.
	profiles bool
	dict     dictionary

	// ignoredStrindex counts the *_strindex fields met in a request of
	// another signal (Result.IgnoredStrindex).
	ignoredStrindex int

	// visit is the request's Visit when a Visitor gets its items, nil
	// otherwise (see visit.go).
	visit *Visit
}

func newChecker(opts *Options) checker {
	return checker{utf8: opts.validateUTF8(), maxDepth: opts.maxDepth(), visit: opts.visit()}
}

// badString reports whether a string field is invalid UTF-8 while
// ValidateUTF8 is on. It inlines to a flag test when it is off.
func (c *checker) badString(fc *otlppb.Field) bool {
	return c.utf8 && badUTF8String(fc)
}

func badUTF8String(fc *otlppb.Field) bool {
	s, ok := fc.String()
	return ok && !validUTF8String(s)
}

// stringField records in *r that the string field fc, named name, is not
// UTF-8 (with ValidateUTF8), unless *r already holds a reason: the first
// one found is kept. Like badString, it inlines to a flag test when
// ValidateUTF8 is off.
func (c *checker) stringField(fc *otlppb.Field, name string, r *reason) {
	if c.utf8 {
		utf8Field(fc, name, r)
	}
}

func utf8Field(fc *otlppb.Field, name string, r *reason) {
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
	got  int // reasonLen: length in bytes; reasonBuckets: len(bucket_counts)
	// want is, for reasonLen, the allowed lengths, e.g. "16" or "empty
	// or 8"; for reasonIndex, the table indexed; for reasonText, the
	// whole complaint.
	want string
	// n is len(explicit_bounds) for reasonBuckets, the table's length
	// for reasonIndex, the second count for reasonCounts. int32 keeps it
	// and kind in one word: a reason is copied out of every item check.
	n    int32
	kind reasonKind
	// dict marks a reason found in a profiles request's dictionary,
	// which every profile of the request shares.
	dict bool
}

// reasonKind selects the wording of a reason.
type reasonKind uint8

const (
	reasonUTF8    reasonKind = iota // "is not valid UTF-8"
	reasonLen                       // "is <got> bytes, want <want>"
	reasonZero                      // "is all zeroes"
	reasonBuckets                   // "has <got> elements, want <n+1> (explicit_bounds + 1) or 0"
	reasonIndex                     // "is <got>, out of range of <want> (<n> entries)"
	reasonText                      // "<want>"
	reasonCounts                    // "has <got> elements and timestamps_unix_nano <n>: ..."
	reasonVisitor                   // "<want>": the Visitor's error, without the path
)

type pathElem struct {
	name string
	idx  int // index in a repeated field, -1 for a singular one
}

func (r reason) bad() bool { return r.path[0].name != "" }

func utf8Reason(field string, idx int) reason {
	return reason{path: [4]pathElem{{field, idx}}, kind: reasonUTF8}
}

// textReason rejects element idx of field (idx -1: a singular field) with
// a static complaint.
func textReason(field string, idx int, text string) reason {
	return reason{path: [4]pathElem{{field, idx}}, want: text, kind: reasonText}
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

// noteIn records in *r the reason sub, found in element idx of the field
// name (idx -1: a singular field), unless *r already holds a reason. It
// is for the failure path: sub is built by the caller only once something
// is wrong.
func (r *reason) noteIn(sub reason, name string, idx int) {
	if !r.bad() {
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
	if r.kind == reasonVisitor {
		return r.want
	}
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
	case reasonIndex:
		b = append(b, " is "...)
		b = strconv.AppendInt(b, int64(r.got), 10)
		b = append(b, ", out of range of "...)
		b = append(b, r.want...)
		b = append(b, " ("...)
		b = strconv.AppendInt(b, int64(r.n), 10)
		b = append(b, " entries)"...)
	case reasonText:
		b = append(b, ' ')
		b = append(b, r.want...)
	case reasonCounts:
		b = append(b, " has "...)
		b = strconv.AppendInt(b, int64(r.got), 10)
		b = append(b, " elements and timestamps_unix_nano "...)
		b = strconv.AppendInt(b, int64(r.n), 10)
		b = append(b, ", want as many or one of them empty"...)
	}
	if r.dict {
		b = append(b, " (every profile of the request uses the dictionary)"...)
	}
	return string(b)
}

var errDepth = errors.New("AnyValue nesting exceeds the depth limit")

// verdict is what the check of a KeyValue or an AnyValue found wrong with
// it; the zero value means nothing.
type verdict uint8

const (
	verdictOK            verdict = iota
	verdictUTF8                  // a string is not UTF-8 (with ValidateUTF8)
	verdictKeyStrindex           // profiles: a key_strindex is out of range
	verdictValueStrindex         // profiles: a string_value_strindex is out of range
	verdictKeyTwice              // profiles: key and key_strindex are both set
)

// utf8Verdict is verdictOK if valid, verdictUTF8 otherwise.
func utf8Verdict(valid bool) verdict {
	if valid {
		return verdictOK
	}
	return verdictUTF8
}

// reason is the reason for rejecting element idx of the field name
// (idx -1: a singular field), a KeyValue or AnyValue, with verdict v.
func (v verdict) reason(name string, idx int) reason {
	switch v {
	case verdictKeyStrindex:
		return textReason(name, idx, "has a key_strindex out of range of the dictionary's string_table")
	case verdictValueStrindex:
		return textReason(name, idx, "has a string_value_strindex out of range of the dictionary's string_table")
	case verdictKeyTwice:
		return textReason(name, idx, "has both key and key_strindex set (common.proto: key MUST NOT be set if key_strindex is used)")
	}
	return utf8Reason(name, idx)
}

// strindex returns the verdict on an alpha *_strindex field (bad: the
// verdict if its index is out of range) and counts it outside profiles.
//
// common.proto (v1.11) adds KeyValue.key_strindex and
// AnyValue.string_value_strindex, "currently used exclusively in the
// Profiling signal", as references into ProfilesDictionary.string_table.
// The rule implemented here is the one stated there:
//   - in a profiles request they are indices into the request's
//     string_table, so one out of range makes the KeyValue unusable like
//     any other dangling dictionary index (0 is the empty string, always
//     valid);
//   - in a traces, metrics or logs request, receivers "should treat the
//     presence of this [field] as a non-fatal issue. Log an error or
//     warning ... and process the data as if this value were absent or
//     empty": such a field never rejects anything; it is counted in
//     Result.IgnoredStrindex for the caller to log, and the data is kept
//     verbatim (a later reader applies the same rule).
func (c *checker) strindex(fc *otlppb.Field, bad verdict) verdict {
	v, ok := fc.Uint64()
	if !ok {
		return verdictOK // not a varint: an unknown field
	}
	if !c.profiles {
		c.ignoredStrindex++
		return verdictOK
	}
	if !inRange(v, c.dict.len[tableString]) {
		return bad
	}
	return verdictOK
}

// anyValue checks an AnyValue at the given nesting depth (1 for an
// attribute value or a log body) and returns what is wrong with it, if
// anything: a string that is not UTF-8 or, in profiles, a
// string_value_strindex out of range (see strindex).
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
func (c *checker) anyValue(src []byte, depth int) (verdict, error) {
	if depth > c.maxDepth {
		return verdictOK, fmt.Errorf("%w (%d)", errDepth, c.maxDepth)
	}
	var v verdict
	var fc otlppb.Field
	for len(src) > 0 {
		var ok bool
		if src, ok = fc.ReadShort(src); !ok {
			var err error
			if src, err = fc.Read(src); err != nil {
				return verdictOK, err
			}
		}
		switch fc.FieldNum {
		case otlppb.AnyValueStringValue:
			if c.badString(&fc) && v == verdictOK {
				v = verdictUTF8
			}
		case otlppb.AnyValueArrayValue:
			if data, ok := fc.MessageData(); ok {
				sub, err := c.arrayValue(data, depth)
				if err != nil {
					return verdictOK, at(err, "array_value", -1)
				}
				v = cmp.Or(v, sub)
			}
		case otlppb.AnyValueKvlistValue:
			if data, ok := fc.MessageData(); ok {
				sub, err := c.keyValueList(data, depth)
				if err != nil {
					return verdictOK, at(err, "kvlist_value", -1)
				}
				v = cmp.Or(v, sub)
			}
		case otlppb.AnyValueStringValueStrindex:
			v = cmp.Or(v, c.strindex(&fc, verdictValueStrindex))
		}
	}
	return v, nil
}

// One-byte tags (field number << 3 | wire type) the fast paths of
// scalarValue and keyValue compare whole.
const (
	tagStringValue = otlppb.AnyValueStringValue<<3 | otlppb.WireLen  // 0x0a
	tagBoolValue   = otlppb.AnyValueBoolValue<<3 | otlppb.WireVarint // 0x10
	tagIntValue    = otlppb.AnyValueIntValue<<3 | otlppb.WireVarint  // 0x18
	tagDoubleValue = otlppb.AnyValueDoubleValue<<3 | otlppb.WireI64  // 0x21
	tagBytesValue  = otlppb.AnyValueBytesValue<<3 | otlppb.WireLen   // 0x3a
	tagKey         = otlppb.KeyValueKey<<3 | otlppb.WireLen          // 0x0a
	tagValue       = otlppb.KeyValueValue<<3 | otlppb.WireLen        // 0x12
)

// scalarValue checks an AnyValue made of a single scalar field (or of
// nothing) in its shortest encoding; ok is false for any other shape,
// which the caller then walks in full.
func (c *checker) scalarValue(v []byte) (valid, ok bool) {
	if len(v) == 0 {
		return true, true
	}
	switch v[0] {
	case tagStringValue:
		if len(v) >= 2 && v[1] < 0x80 && int(v[1])+2 == len(v) {
			return !c.utf8 || validUTF8(v[2:]), true
		}
	case tagBytesValue:
		if len(v) >= 2 && v[1] < 0x80 && int(v[1])+2 == len(v) {
			return true, true
		}
	case tagBoolValue, tagIntValue:
		if _, n := binary.Uvarint(v[1:]); n > 0 && 1+n == len(v) {
			return true, true
		}
	case tagDoubleValue:
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
func (c *checker) arrayValue(src []byte, depth int) (verdict, error) {
	var v verdict
	var fc otlppb.Field
	for i := 0; len(src) > 0; {
		var ok bool
		if src, ok = fc.ReadShort(src); !ok {
			var err error
			if src, err = fc.Read(src); err != nil {
				return verdictOK, err
			}
		}
		if fc.FieldNum != otlppb.ArrayValueValues {
			continue
		}
		if data, ok := fc.MessageData(); ok {
			sub, err := c.anyValue(data, depth+1)
			if err != nil {
				return verdictOK, at(err, "values", i)
			}
			v = cmp.Or(v, sub)
			i++
		}
	}
	return v, nil
}

// keyValueList checks the pairs of a KeyValueList held by an AnyValue at
// depth.
//
//	message KeyValueList {
//	  repeated KeyValue values = 1;
//	}
func (c *checker) keyValueList(src []byte, depth int) (verdict, error) {
	var v verdict
	var fc otlppb.Field
	for i := 0; len(src) > 0; {
		var ok bool
		if src, ok = fc.ReadShort(src); !ok {
			var err error
			if src, err = fc.Read(src); err != nil {
				return verdictOK, err
			}
		}
		if fc.FieldNum != otlppb.KeyValueListValues {
			continue
		}
		if data, ok := fc.MessageData(); ok {
			sub, err := c.keyValue(data, depth+1)
			if err != nil {
				return verdictOK, at(err, "values", i)
			}
			v = cmp.Or(v, sub)
			i++
		}
	}
	return v, nil
}

// keyValue checks a KeyValue whose value is at depth and returns what is
// wrong with it, if anything (see anyValue, and strindex for key_strindex).
//
//	message KeyValue {
//	  string key = 1;
//	  AnyValue value = 2;
//	  int32 key_strindex = 3;
//	}
func (c *checker) keyValue(src []byte, depth int) (verdict, error) {
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
			case src[0] == tagKey && src[2+n] == tagValue:
				if valid, ok := c.scalarValue(second); ok {
					return utf8Verdict(valid && (!c.utf8 || validUTF8(first))), nil
				}
			case src[0] == tagValue && src[2+n] == tagKey:
				if valid, ok := c.scalarValue(first); ok {
					return utf8Verdict(valid && (!c.utf8 || validUTF8(second))), nil
				}
			}
		}
	}
	var v verdict
	// In profiles, key and key_strindex exclude each other; the last
	// occurrence of each counts.
	keySet, strindexSet := false, false
	var fc otlppb.Field
	for len(src) > 0 {
		var ok bool
		if src, ok = fc.ReadShort(src); !ok {
			var err error
			if src, err = fc.Read(src); err != nil {
				return verdictOK, err
			}
		}
		switch fc.FieldNum {
		case otlppb.KeyValueKey:
			if s, ok := fc.String(); ok {
				keySet = s != ""
				if c.utf8 && !validUTF8String(s) && v == verdictOK {
					v = verdictUTF8
				}
			}
		case otlppb.KeyValueValue:
			if data, ok := fc.MessageData(); ok {
				sub, err := c.anyValue(data, depth)
				if err != nil {
					return verdictOK, at(err, "value", -1)
				}
				v = cmp.Or(v, sub)
			}
		case otlppb.KeyValueKeyStrindex:
			if x, ok := fc.Uint64(); ok {
				strindexSet = x != 0
				v = cmp.Or(v, c.strindex(&fc, verdictKeyStrindex))
			}
		}
	}
	if c.profiles && keySet && strindexSet && v == verdictOK {
		v = verdictKeyTwice
	}
	return v, nil
}

// attribute checks element idx of a repeated KeyValue field named field and
// folds its verdict into r.
func (c *checker) attribute(fc *otlppb.Field, field string, idx *int, r *reason) error {
	data, ok := fc.MessageData()
	if !ok {
		return nil
	}
	i := *idx
	*idx = i + 1
	v, err := c.keyValue(data, 1)
	if err != nil {
		return at(err, field, i)
	}
	if v != verdictOK && !r.bad() {
		*r = v.reason(field, i)
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
	var fc otlppb.Field
	nAttrs, nRefs := 0, 0
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return r, err
		}
		switch fc.FieldNum {
		case otlppb.ResourceAttributes:
			if err := c.attribute(&fc, "attributes", &nAttrs, &r); err != nil {
				return r, err
			}
		case otlppb.ResourceEntityRefs:
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
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return r, err
		}
		switch fc.FieldNum {
		case otlppb.EntityRefSchemaURL:
			c.stringField(&fc, "schema_url", &r)
		case otlppb.EntityRefType:
			c.stringField(&fc, "type", &r)
		case otlppb.EntityRefIDKeys:
			c.stringField(&fc, "id_keys", &r)
		case otlppb.EntityRefDescriptionKeys:
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
	var fc otlppb.Field
	nAttrs := 0
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return r, err
		}
		switch fc.FieldNum {
		case otlppb.InstrumentationScopeName:
			c.stringField(&fc, "name", &r)
		case otlppb.InstrumentationScopeVersion:
			c.stringField(&fc, "version", &r)
		case otlppb.InstrumentationScopeAttributes:
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
	samples  int    // profiles: samples in the profile
}

// signal selects the item check of a walk: the OTLP signal enum of package
// otlp, defined there once for every package. It is a switch rather than a
// function value so that the itemTally stays on the stack: an indirect
// call would make it escape, one allocation per item.
type signal = otlp.Signal

const (
	signalTraces   = otlp.Traces
	signalMetrics  = otlp.Metrics
	signalLogs     = otlp.Logs
	signalProfiles = otlp.Profiles

	// signalVisited marks the signal of a walk whose items go to a
	// Visitor (see visitedItem): the walk's one test of that is the
	// default case of item's switch, so that the unvisited walk costs
	// what it did before visitors.
	signalVisited otlp.Signal = 0x80
)

// item checks one element of the item field of a Scope* message.
func (c *checker) item(sig signal, src []byte, t *itemTally) error {
	switch sig {
	case signalTraces:
		r, err := c.span(src)
		return t.single(&r, err)
	case signalMetrics:
		return checkMetricItem(c, src, t)
	case signalProfiles:
		r, samples, err := c.profile(src, nil)
		t.samples = samples
		return t.single(&r, err)
	case signalLogs:
		r, err := c.logRecord(src)
		return t.single(&r, err)
	default: // | signalVisited
		return c.visitedItem(sig&^signalVisited, src, t)
	}
}

// single tallies an element that is one item (a span, a log record or a
// profile) with the verdict of its check. r is a pointer so that the
// inlined call does not copy the reason on the happy path.
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
	traceNames   = signalNames{"resource_spans", "scope_spans", "spans"}
	metricNames  = signalNames{"resource_metrics", "scope_metrics", "metrics"}
	logNames     = signalNames{"resource_logs", "scope_logs", "log_records"}
	profileNames = signalNames{"resource_profiles", "scope_profiles", "profiles"}
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
	// samples and rejectedSamples count the samples of the profiles in
	// items and rejected.
	samples, rejectedSamples int
	firstItem                itemPos
	firstRej                 itemPos
	firstReason              reason
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
	t.samples += u.samples
	t.rejectedSamples += u.rejectedSamples
}

// rejectAll rejects every item, because their container is invalid.
func (t *tally) rejectAll(r reason) {
	if t.items == 0 {
		return
	}
	t.rejected = t.items
	t.rejectedSamples = t.samples
	t.firstRej, t.firstReason = t.firstItem, r
}

func (p *itemPos) format(n *signalNames) string {
	s := fmt.Sprintf("%s[%d].%s[%d].%s[%d]", n.resources, p.rs, n.scopes, p.ss, n.items, p.idx)
	if p.kind != "" {
		s += fmt.Sprintf(".%s.data_points[%d]", p.kind, p.point)
	}
	return s
}

// The four signals share the layout of their request, Resource* and
// Scope* messages, which the walks below read for all of them; they name
// the fields with the traces' names (TestSharedLayout holds the other
// signals' numbers equal).
const (
	requestResources = otlppb.ExportTraceServiceRequestResourceSpans // resource_spans, resource_metrics...
	resourceResource = otlppb.ResourceSpansResource
	resourceScopes   = otlppb.ResourceSpansScopeSpans // scope_spans, scope_metrics...
	resourceSchema   = otlppb.ResourceSpansSchemaURL
	scopeScope       = otlppb.ScopeSpansScope
	scopeItemsField  = otlppb.ScopeSpansSpans // spans, metrics, log_records, profiles
	scopeSchema      = otlppb.ScopeSpansSchemaURL
)

// check walks an Export*ServiceRequest; the four request messages share
// this layout, ExportProfilesServiceRequest adding its dictionary in field
// 2, which this walk skips (CheckProfiles reads it first, loadDictionary):
//
//	message ExportTraceServiceRequest {
//	  repeated opentelemetry.proto.trace.v1.ResourceSpans resource_spans = 1;
//	}
func (c *checker) check(src []byte, names *signalNames, item signal) (Result, error) {
	if c.visit != nil {
		c.visit.begin()
		item |= signalVisited
	}
	var total tally
	var fc otlppb.Field
	for rs := 0; len(src) > 0; {
		var err error
		if src, err = fc.Read(src); err != nil {
			return Result{}, topLevel(err)
		}
		if fc.FieldNum != requestResources {
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
	res := Result{
		Items: total.items, Rejected: total.rejected,
		Samples: total.samples, RejectedSamples: total.rejectedSamples,
		IgnoredStrindex: c.ignoredStrindex,
	}
	if total.rejected > 0 {
		res.FirstRejection = total.firstRej.format(names) + ": " + total.firstReason.String()
	}
	return res, nil
}

// resourceItems walks a Resource{Spans,Metrics,Logs,Profiles}; the four
// share this layout:
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
	visiting := c.visit != nil
	if visiting {
		resReason, visiting = c.visitHeader(src, false)
	}
	var fc otlppb.Field
	for ss := 0; len(src) > 0; {
		var err error
		if src, err = fc.Read(src); err != nil {
			return err
		}
		switch fc.FieldNum {
		case resourceResource:
			data, ok := fc.MessageData()
			if !ok || visiting {
				continue
			}
			r, err := c.resource(data)
			if err != nil {
				return at(err, "resource", -1)
			}
			resReason.note(&r, "resource", -1)
		case resourceScopes:
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
		case resourceSchema:
			if !visiting {
				c.stringField(&fc, "schema_url", &resReason)
			}
		}
	}
	if resReason.bad() {
		t.rejectAll(resReason)
	}
	return nil
}

// scopeItems walks a Scope{Spans,Metrics,Logs,Profiles}; the four share
// this layout:
//
//	message ScopeSpans {
//	  opentelemetry.proto.common.v1.InstrumentationScope scope = 1;
//	  repeated Span spans = 2;
//	  string schema_url = 3;
//	}
func (c *checker) scopeItems(src []byte, rs, ss int, names *signalNames, item signal, t *tally) error {
	var scopeReason reason
	visiting := c.visit != nil
	if visiting {
		scopeReason, visiting = c.visitHeader(src, true)
	}
	var fc otlppb.Field
	for idx := 0; len(src) > 0; {
		var err error
		if src, err = fc.Read(src); err != nil {
			return err
		}
		switch fc.FieldNum {
		case scopeScope:
			data, ok := fc.MessageData()
			if !ok || visiting {
				continue
			}
			r, err := c.scope(data)
			if err != nil {
				return at(err, "scope", -1)
			}
			scopeReason.note(&r, "scope", -1)
		case scopeItemsField:
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
			t.samples += it.samples
			if it.rejected > 0 {
				t.rejectedSamples += it.samples
			}
			idx++
		case scopeSchema:
			if !visiting {
				c.stringField(&fc, "schema_url", &scopeReason)
			}
		}
	}
	if scopeReason.bad() {
		t.rejectAll(scopeReason)
	}
	return nil
}

// noteIDLen records in *r, unless it holds one, an occurrence of n bytes
// of the id field named field, of ids of want bytes, that pdata refuses
// (ValidIDLen): the item's rejection when its last ids are valid. Two
// compares an id, inlined (callgrind-ab.sh: BenchmarkCheckTraces
// 3,970,355 to 3,969,011 instructions, BenchmarkCheckLogs 138,770 to
// 139,542, +0.6 %).
func noteIDLen(r *reason, field string, n, want int) {
	if !ValidIDLen(n, want) && !r.bad() {
		w := "empty or 8 in every occurrence"
		if want == 16 {
			w = "empty or 16 in every occurrence"
		}
		*r = lenReason(field, n, w)
	}
}
