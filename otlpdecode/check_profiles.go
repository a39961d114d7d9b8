package otlpdecode

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/VictoriaMetrics/easyproto"
)

// The rules below are those of opentelemetry-proto v1.11.0,
// opentelemetry/proto/profiles/v1development/profiles.proto (Alpha), whose
// model differs from earlier development versions (no per-profile tables,
// a single sample_type, samples pointing at a stack); the messages are
// pasted above their checks.

// CheckProfiles walks an ExportProfilesServiceRequest (same wire format as
// ProfilesData) and validates every profile against the request's
// ProfilesDictionary, which it reads first: it may come after the
// profiles on the wire.
//
// A profile is rejected when
//   - its profile_id is neither empty nor 16 bytes, or all zeroes
//     (profiles.proto: "The ID is a 16-byte array. An ID with all zeroes is
//     considered invalid ... This field is optional");
//   - one of its dictionary indices is out of range (sample_type,
//     period_type, attribute_indices, and its samples' stack_index,
//     attribute_indices, link_index): index 0 always means "not set",
//     any other index must be below the table's length;
//   - original_payload_format and original_payload are not both set or both
//     unset ("It MUST be set together with original_payload or both left
//     unset");
//   - one of its samples has neither values nor timestamps_unix_nano, or
//     both but not as many of each ("A Sample MUST have at least one entry
//     in values or timestamps_unix_nano. If both fields are populated, they
//     MUST contain the same number of elements");
//   - the dictionary is unusable: all profiles depend on it, so they are
//     all rejected (see checkDictionary for its rules);
//   - with opts.ValidateUTF8, a string of the profile, of the dictionary,
//     or of its resource or scope is not UTF-8.
//
// In a profiles request the resource's and scope's KeyValue.key_strindex
// and AnyValue.string_value_strindex index the dictionary's string_table,
// and a KeyValue with both key and key_strindex set is invalid (see
// checker.strindex).
//
// Not checked, because the .proto makes them recommendations (SHOULD) or
// they cannot be checked without per-request tables: sample timestamps
// within the profile's time range, Location.address within its mapping,
// duplicate or orphaned dictionary entries, and the uniqueness of the
// attribute keys an attribute_indices list refers to (no signal checks
// attribute key uniqueness). Sample values may be negative (pprof allows
// it, e.g. for differences of profiles).
//
// Errors and allocations are as for CheckTraces: malformed protobuf
// anywhere, dictionary included, refuses the request, e.g.
// `cannot decode dictionary.location_table[7].lines[0]: ...`.
func CheckProfiles(src []byte, opts *Options) (Result, error) {
	c := newChecker(opts)
	if err := c.loadDictionary(src); err != nil {
		return Result{}, err
	}
	return c.check(src, &profileNames, signalProfiles)
}

// AppendValidProfiles is AppendValidTraces for profiles: it removes the
// rejected profiles. The dictionary is copied verbatim: the profiles kept
// need it, and the entries only removed profiles used become orphans,
// which profiles.proto allows. When the dictionary itself is invalid every
// profile is rejected, and the handler stores nothing.
func AppendValidProfiles(dst, src []byte, opts *Options) ([]byte, error) {
	c := newChecker(opts)
	if err := c.loadDictionary(src); err != nil {
		return dst, err
	}
	return c.appendValid(dst, src, &profileNames, keepProfile)
}

func keepProfile(c *checker, dst, src []byte) ([]byte, bool, error) {
	r, _, err := c.profile(src)
	return keepValid(dst, src, &r, err)
}

// The tables of ProfilesDictionary, by field number.
const (
	tableMapping   = 1
	tableLocation  = 2
	tableFunction  = 3
	tableLink      = 4
	tableString    = 5
	tableAttribute = 6
	tableStack     = 7
	numTables      = 8 // field numbers 1..7
)

var tableNames = [numTables]string{
	tableMapping:   "mapping_table",
	tableLocation:  "location_table",
	tableFunction:  "function_table",
	tableLink:      "link_table",
	tableString:    "string_table",
	tableAttribute: "attribute_table",
	tableStack:     "stack_table",
}

// dictionary is what the walk of a profiles request needs to know of its
// ProfilesDictionary: the length of each table, and why it is unusable.
type dictionary struct {
	len [numTables]int // by field number
	bad reason
}

// inRange reports whether v, the varint of an int32 index field, is a
// valid index into a dictionary table of n entries. protobuf-go reads an
// int32 from the low 32 bits of the varint, so this does too. Index 0 is
// always valid: profiles.proto makes every table's element 0 its zero
// value "to indicate 'null' / 'not set'", so 0 means no reference even
// when the table is empty (an empty request, a profile without samples).
func inRange(v uint64, n int) bool {
	i := int32(v)
	return i == 0 || (i > 0 && int(i) < n)
}

// indexReason rejects element idx (-1: a singular field) of field, whose
// value v is out of range of table.
func (c *checker) indexReason(field string, idx int, v uint64, table int) reason {
	return reason{
		path: [4]pathElem{{field, idx}}, got: int(int32(v)),
		want: tableNames[table], n: int32(min(c.dict.len[table], math.MaxInt32)), kind: reasonIndex,
	}
}

// index checks the int32 index field fc into table and records in *r the
// first bad one.
func (c *checker) index(fc *easyproto.FieldContext, field string, table int, r *reason) {
	if v, ok := fc.Uint64(); ok && !inRange(v, c.dict.len[table]) && !r.bad() {
		*r = c.indexReason(field, -1, v, table)
	}
}

// indices checks an occurrence of a repeated int32 field of indices into
// table (one varint, or a packed run, which protobuf parsers must both
// accept); *n counts the elements across occurrences, for positions.
func (c *checker) indices(fc *easyproto.FieldContext, field string, table int, n *int, r *reason) error {
	size := c.dict.len[table]
	if v, ok := fc.Uint64(); ok {
		if !inRange(v, size) && !r.bad() {
			*r = c.indexReason(field, *n, v, table)
		}
		*n++
		return nil
	}
	data, ok := fc.MessageData()
	if !ok {
		return nil // another wire type: an unknown field
	}
	for len(data) > 0 {
		v := uint64(data[0])
		if v < 0x80 {
			data = data[1:]
		} else {
			var k int
			if v, k = binary.Uvarint(data); k <= 0 {
				return fmt.Errorf("cannot read packed varint in field #%d", fc.FieldNum)
			}
			data = data[k:]
		}
		if !inRange(v, size) && !r.bad() {
			*r = c.indexReason(field, *n, v, table)
		}
		*n++
	}
	return nil
}

// countVarints returns how many elements an occurrence of a repeated
// varint field holds (one varint, or a packed run).
func countVarints(fc *easyproto.FieldContext) (int, error) {
	if _, ok := fc.Uint64(); ok {
		return 1, nil
	}
	data, ok := fc.MessageData()
	if !ok {
		return 0, nil
	}
	n := 0
	for len(data) > 0 {
		if data[0] < 0x80 {
			data = data[1:]
		} else {
			_, k := binary.Uvarint(data)
			if k <= 0 {
				return 0, fmt.Errorf("cannot read packed varint in field #%d", fc.FieldNum)
			}
			data = data[k:]
		}
		n++
	}
	return n, nil
}

// loadDictionary reads the ProfilesDictionary of a request into c.dict:
// first the length of every table, then the check of every entry, which
// needs them. It allocates nothing; err refuses the request.
//
//	message ExportProfilesServiceRequest {
//	  repeated opentelemetry.proto.profiles.v1development.ResourceProfiles resource_profiles = 1;
//	  opentelemetry.proto.profiles.v1development.ProfilesDictionary dictionary = 2;
//	}
//
// As for any message field, several occurrences of dictionary are merged:
// their tables are concatenated, and indices count across them.
func (c *checker) loadDictionary(src []byte) error {
	c.profiles = true
	var fc easyproto.FieldContext
	for rest := src; len(rest) > 0; {
		var err error
		if rest, err = nextField(&fc, rest); err != nil {
			return topLevel(err)
		}
		if data, ok := fc.MessageData(); ok && fc.FieldNum == 2 {
			if err := c.countTables(data); err != nil {
				return topLevel(at(err, "dictionary", -1))
			}
		}
	}
	var seen [numTables]int // entries checked so far, by table
	for rest := src; len(rest) > 0; {
		rest, _ = nextField(&fc, rest) // read without error above
		if data, ok := fc.MessageData(); ok && fc.FieldNum == 2 {
			if err := c.checkDictionary(data, &seen); err != nil {
				return topLevel(at(err, "dictionary", -1))
			}
		}
	}
	if c.dict.bad.bad() {
		c.dict.bad = c.dict.bad.in("dictionary", -1)
		c.dict.bad.dict = true
	}
	return nil
}

// countTables adds the entries of one occurrence of the dictionary to
// c.dict.len. Every table holds messages or strings, so an entry with
// another wire type is an unknown field, as in protobuf-go.
func (c *checker) countTables(src []byte) error {
	var fc easyproto.FieldContext
	for len(src) > 0 {
		var err error
		if src, err = nextField(&fc, src); err != nil {
			return err
		}
		if _, ok := fc.MessageData(); ok && fc.FieldNum < numTables {
			c.dict.len[fc.FieldNum]++
		}
	}
	return nil
}

// checkDictionary checks the entries of one occurrence of the dictionary;
// seen counts the entries of each table checked before it. The first
// problem found is kept in c.dict.bad; the walk goes on, because
// malformed protobuf further on must still refuse the request.
//
//	message ProfilesDictionary {
//	  repeated Mapping mapping_table = 1;
//	  repeated Location location_table = 2;
//	  repeated Function function_table = 3;
//	  repeated Link link_table = 4;
//	  repeated string string_table = 5;
//	  repeated KeyValueAndUnit attribute_table = 6;
//	  repeated Stack stack_table = 7;
//	}
//
// An entry is unusable, and with it the dictionary, when one of its indices
// is out of range, when it breaks its own message's rules (below), and for
// element 0 of a table when it is not the zero value: "The element at
// index 0 MUST be the zero value for the dictionary's element type (e.g.
// "" for string_table, Location{} for location_table)", so that index 0
// can mean "not set". An empty table is accepted: nothing can then refer
// to it but index 0, which means "not set" anyway.
func (c *checker) checkDictionary(src []byte, seen *[numTables]int) error {
	var fc easyproto.FieldContext
	for len(src) > 0 {
		var err error
		if src, err = nextField(&fc, src); err != nil {
			return err
		}
		table := fc.FieldNum
		data, ok := fc.MessageData()
		if !ok || table >= numTables || table == 0 {
			continue
		}
		idx := seen[table]
		seen[table] = idx + 1
		name := tableNames[table]
		// r is relative to the entry; self, a reason about the entry as
		// a whole, already names it.
		var r, self reason
		zero, named := false, true
		switch table {
		case tableMapping:
			r, zero, err = c.mapping(data)
		case tableLocation:
			r, zero, err = c.location(data)
		case tableFunction:
			r, zero, named, err = c.function(data)
		case tableLink:
			r, zero, err = profileLink(data, idx)
		case tableString:
			zero = len(data) == 0
			if c.utf8 && !validUTF8(data) {
				self = utf8Reason(name, idx)
			}
		case tableAttribute:
			r, zero, err = c.keyValueAndUnit(data)
		case tableStack:
			r, zero, err = c.stack(data)
		}
		if err != nil {
			return at(err, name, idx)
		}
		switch {
		case idx == 0 && !zero:
			self = textReason(name, idx, "is not the zero value (profiles.proto: element 0 of every dictionary table MUST be the zero value)")
		case idx > 0 && !named && !r.bad():
			self = textReason(name, idx, "has none of name_strindex, system_name_strindex, filename_strindex (profiles.proto: at least one MUST be present)")
		}
		if c.dict.bad.bad() {
			continue
		}
		if self.bad() {
			c.dict.bad = self
		} else if r.bad() {
			c.dict.bad = r.in(name, idx)
		}
	}
	return nil
}

// mapping checks a Mapping of the dictionary; zero reports whether it is
// Mapping{}.
//
//	message Mapping {
//	  uint64 memory_start = 1;
//	  uint64 memory_limit = 2;
//	  uint64 file_offset = 3;
//	  int32 filename_strindex = 4;
//	  repeated int32 attribute_indices = 5;
//	}
func (c *checker) mapping(src []byte) (r reason, zero bool, err error) {
	zero = true
	nAttrs := 0
	var fc easyproto.FieldContext
	for len(src) > 0 {
		if src, err = nextField(&fc, src); err != nil {
			return r, false, err
		}
		switch fc.FieldNum {
		case 1, 2, 3:
			zero = zero && varintZero(&fc)
		case 4:
			zero = zero && varintZero(&fc)
			c.index(&fc, "filename_strindex", tableString, &r)
		case 5:
			zero = zero && emptyRepeated(&fc)
			if err := c.indices(&fc, "attribute_indices", tableAttribute, &nAttrs, &r); err != nil {
				return r, false, err
			}
		}
	}
	return r, zero, nil
}

// varintZero reports whether fc is not a varint set to something other
// than 0 (a field of another wire type is unknown, and does not count).
func varintZero(fc *easyproto.FieldContext) bool {
	v, ok := fc.Uint64()
	return !ok || v == 0
}

// emptyRepeated reports whether an occurrence of a repeated scalar field
// adds no element: only an empty packed run does not.
func emptyRepeated(fc *easyproto.FieldContext) bool {
	if _, ok := fc.Uint64(); ok {
		return false
	}
	if _, ok := fc.Fixed64(); ok {
		return false
	}
	data, ok := fc.MessageData()
	return !ok || len(data) == 0
}

// location checks a Location of the dictionary; zero reports whether it is
// Location{}.
//
//	message Location {
//	  int32 mapping_index = 1;
//	  uint64 address = 2;
//	  repeated Line lines = 3;
//	  repeated int32 attribute_indices = 4;
//	}
func (c *checker) location(src []byte) (r reason, zero bool, err error) {
	zero = true
	nLines, nAttrs := 0, 0
	var fc easyproto.FieldContext
	for len(src) > 0 {
		if src, err = nextField(&fc, src); err != nil {
			return r, false, err
		}
		switch fc.FieldNum {
		case 1:
			zero = zero && varintZero(&fc)
			c.index(&fc, "mapping_index", tableMapping, &r)
		case 2:
			zero = zero && varintZero(&fc)
		case 3:
			data, ok := fc.MessageData()
			if !ok {
				continue
			}
			zero = false
			lr, err := c.line(data)
			if err != nil {
				return r, false, at(err, "lines", nLines)
			}
			r.note(&lr, "lines", nLines)
			nLines++
		case 4:
			zero = zero && emptyRepeated(&fc)
			if err := c.indices(&fc, "attribute_indices", tableAttribute, &nAttrs, &r); err != nil {
				return r, false, err
			}
		}
	}
	return r, zero, nil
}

// line checks a Line.
//
//	message Line {
//	  int32 function_index = 1;
//	  int64 line = 2;
//	  int64 column = 3;
//	}
//
// line and column are "1-based, 0 means unset": a negative one is no
// position in a source file.
func (c *checker) line(src []byte) (reason, error) {
	var r reason
	var fc easyproto.FieldContext
	for len(src) > 0 {
		var err error
		if src, err = nextField(&fc, src); err != nil {
			return r, err
		}
		switch fc.FieldNum {
		case 1:
			c.index(&fc, "function_index", tableFunction, &r)
		case 2:
			negative(&fc, "line", &r)
		case 3:
			negative(&fc, "column", &r)
		}
	}
	return r, nil
}

// negative records in *r that the int64 field fc, a 1-based line or
// column number, is negative.
func negative(fc *easyproto.FieldContext, field string, r *reason) {
	if v, ok := fc.Int64(); ok && v < 0 && !r.bad() {
		*r = textReason(field, -1, "is negative (profiles.proto: 1-based, 0 means unset)")
	}
}

// function checks an entry of the dictionary's function_table; zero
// reports whether it is Function{}, named whether one of its names is set.
//
//	message Function {
//	  int32 name_strindex = 1;
//	  int32 system_name_strindex = 2;
//	  int32 filename_strindex = 3;
//	  int64 start_line = 4;
//	}
//
// "At least one of {name_strindex, system_name_strindex,
// filename_strindex} MUST be present", except in element 0, which must be
// Function{} (checkDictionary applies both).
func (c *checker) function(src []byte) (r reason, zero, named bool, err error) {
	// Last occurrence wins for each of the three names.
	var names [3]bool
	zero = true
	var fc easyproto.FieldContext
	for len(src) > 0 {
		if src, err = nextField(&fc, src); err != nil {
			return r, false, false, err
		}
		switch fc.FieldNum {
		case 1, 2, 3:
			if v, ok := fc.Uint64(); ok {
				names[fc.FieldNum-1] = v != 0
			}
			zero = zero && varintZero(&fc)
			c.index(&fc, functionNames[fc.FieldNum-1], tableString, &r)
		case 4:
			zero = zero && varintZero(&fc)
			negative(&fc, "start_line", &r)
		}
	}
	return r, zero, names[0] || names[1] || names[2], nil
}

var functionNames = [3]string{"name_strindex", "system_name_strindex", "filename_strindex"}

// profileLink checks element idx of the dictionary's link_table; zero
// reports whether it is a zero value.
//
//	message Link {
//	  bytes trace_id = 1;
//	  bytes span_id = 2;
//	}
//
// Element 0 is Link{} with empty ids or, as profiles.proto recommends,
// with ids of 16 and 8 zero bytes. Every other link joins a sample to a
// span, so its ids must have the lengths of trace.proto's ids, "a 16-byte
// array" and "an 8-byte array". All-zero ids are accepted there, as in a
// span's links (CheckTraces).
func profileLink(src []byte, idx int) (r reason, zero bool, err error) {
	var traceID, spanID []byte
	var fc easyproto.FieldContext
	for len(src) > 0 {
		if src, err = nextField(&fc, src); err != nil {
			return r, false, err
		}
		switch fc.FieldNum {
		case 1:
			if b, ok := fc.Bytes(); ok {
				traceID = b
			}
		case 2:
			if b, ok := fc.Bytes(); ok {
				spanID = b
			}
		}
	}
	zero = (len(traceID) == 0 || (len(traceID) == 16 && zeroID16(traceID))) &&
		(len(spanID) == 0 || (len(spanID) == 8 && binary.LittleEndian.Uint64(spanID) == 0))
	if idx == 0 {
		return r, zero, nil
	}
	switch {
	case len(traceID) != 16:
		r = lenReason("trace_id", len(traceID), "16")
	case len(spanID) != 8:
		r = lenReason("span_id", len(spanID), "8")
	}
	return r, zero, nil
}

// keyValueAndUnit checks an entry of the dictionary's attribute_table;
// zero reports whether it is KeyValueAndUnit{} (an empty value counts as
// unset).
//
//	message KeyValueAndUnit {
//	  int32 key_strindex = 1;
//	  opentelemetry.proto.common.v1.AnyValue value = 2;
//	  int32 unit_strindex = 3;
//	}
func (c *checker) keyValueAndUnit(src []byte) (r reason, zero bool, err error) {
	zero = true
	var fc easyproto.FieldContext
	for len(src) > 0 {
		if src, err = nextField(&fc, src); err != nil {
			return r, false, err
		}
		switch fc.FieldNum {
		case 1:
			zero = zero && varintZero(&fc)
			c.index(&fc, "key_strindex", tableString, &r)
		case 2:
			data, ok := fc.MessageData()
			if !ok {
				continue
			}
			zero = zero && len(data) == 0
			v, err := c.anyValue(data, 1)
			if err != nil {
				return r, false, at(err, "value", -1)
			}
			if v != verdictOK && !r.bad() {
				r = v.reason("value", -1)
			}
		case 3:
			zero = zero && varintZero(&fc)
			c.index(&fc, "unit_strindex", tableString, &r)
		}
	}
	return r, zero, nil
}

// stack checks a Stack of the dictionary; zero reports whether it is
// Stack{}.
//
//	message Stack {
//	  repeated int32 location_indices = 1;
//	}
func (c *checker) stack(src []byte) (r reason, zero bool, err error) {
	zero = true
	n := 0
	var fc easyproto.FieldContext
	for len(src) > 0 {
		if src, err = nextField(&fc, src); err != nil {
			return r, false, err
		}
		if fc.FieldNum == 1 {
			zero = zero && emptyRepeated(&fc)
			if err := c.indices(&fc, "location_indices", tableLocation, &n, &r); err != nil {
				return r, false, err
			}
		}
	}
	return r, zero, nil
}

// profile checks a Profile.
//
//	message Profile {
//	  ValueType sample_type = 1;
//	  repeated Sample samples = 2;
//	  fixed64 time_unix_nano = 3;
//	  uint64 duration_nano = 4;
//	  ValueType period_type = 5;
//	  int64 period = 6;
//	  bytes profile_id = 7;
//	  uint32 dropped_attributes_count = 8;
//	  string original_payload_format = 9;
//	  bytes original_payload = 10;
//	  repeated int32 attribute_indices = 11;
//	}
//
// samples is the number of samples of the profile.
func (c *checker) profile(src []byte) (r reason, samples int, err error) {
	var profileID []byte
	formatSet, payloadSet := false, false
	nSamples, nAttrs := 0, 0
	var fc easyproto.FieldContext
	for len(src) > 0 {
		if src, err = nextField(&fc, src); err != nil {
			return r, 0, err
		}
		switch fc.FieldNum {
		case 1, 5:
			data, ok := fc.MessageData()
			if !ok {
				continue
			}
			name := "sample_type"
			if fc.FieldNum == 5 {
				name = "period_type"
			}
			vr, err := c.valueType(data)
			if err != nil {
				return r, 0, at(err, name, -1)
			}
			r.note(&vr, name, -1)
		case 2:
			data, ok := fc.MessageData()
			if !ok {
				continue
			}
			sr, err := c.sample(data)
			if err != nil {
				return r, 0, at(err, "samples", nSamples)
			}
			r.note(&sr, "samples", nSamples)
			nSamples++
		case 7:
			if b, ok := fc.Bytes(); ok {
				profileID = b
			}
		case 9:
			if s, ok := fc.String(); ok {
				formatSet = s != ""
				c.stringField(&fc, "original_payload_format", &r)
			}
		case 10:
			if b, ok := fc.Bytes(); ok {
				payloadSet = len(b) > 0
			}
		case 11:
			if err := c.indices(&fc, "attribute_indices", tableAttribute, &nAttrs, &r); err != nil {
				return r, 0, err
			}
		}
	}
	// The profile's identity and its dictionary come first: without them
	// nothing in it can be used.
	switch {
	case len(profileID) != 0 && len(profileID) != 16:
		return lenReason("profile_id", len(profileID), "empty or 16"), nSamples, nil
	case len(profileID) == 16 && zeroID16(profileID):
		return zeroReason("profile_id"), nSamples, nil
	case c.dict.bad.bad():
		return c.dict.bad, nSamples, nil
	case formatSet != payloadSet && !r.bad():
		if formatSet {
			return textReason("original_payload", -1, "is empty while original_payload_format is set (profiles.proto: they MUST be set together or both left unset)"), nSamples, nil
		}
		return textReason("original_payload_format", -1, "is empty while original_payload is set (profiles.proto: they MUST be set together or both left unset)"), nSamples, nil
	}
	return r, nSamples, nil
}

// valueType checks a ValueType.
//
//	message ValueType {
//	  int32 type_strindex = 1;
//	  int32 unit_strindex = 2;
//	}
func (c *checker) valueType(src []byte) (reason, error) {
	var r reason
	var fc easyproto.FieldContext
	for len(src) > 0 {
		var err error
		if src, err = nextField(&fc, src); err != nil {
			return r, err
		}
		switch fc.FieldNum {
		case 1:
			c.index(&fc, "type_strindex", tableString, &r)
		case 2:
			c.index(&fc, "unit_strindex", tableString, &r)
		}
	}
	return r, nil
}

// sample checks a Sample. It runs once per sample, the hottest loop of a
// profiles request.
//
//	message Sample {
//	  int32 stack_index = 1;
//	  repeated int32 attribute_indices = 2;
//	  int32 link_index = 3;
//	  repeated int64 values = 4;
//	  repeated fixed64 timestamps_unix_nano = 5;
//	}
func (c *checker) sample(src []byte) (reason, error) {
	var r reason
	// Singular indices: the last occurrence wins, so they are checked
	// after the walk.
	var stack, link uint64
	nAttrs, nValues, nTimes := 0, 0, 0
	var fc easyproto.FieldContext
	for len(src) > 0 {
		var err error
		if src, err = nextField(&fc, src); err != nil {
			return r, err
		}
		switch fc.FieldNum {
		case 1:
			if v, ok := fc.Uint64(); ok {
				stack = v
			}
		case 2:
			if err := c.indices(&fc, "attribute_indices", tableAttribute, &nAttrs, &r); err != nil {
				return r, err
			}
		case 3:
			if v, ok := fc.Uint64(); ok {
				link = v
			}
		case 4:
			n, err := countVarints(&fc)
			if err != nil {
				return r, err
			}
			nValues += n
		case 5:
			n, err := countFixed64(&fc)
			if err != nil {
				return r, err
			}
			nTimes += n
		}
	}
	switch {
	case !inRange(stack, c.dict.len[tableStack]):
		return c.indexReason("stack_index", -1, stack, tableStack), nil
	case !inRange(link, c.dict.len[tableLink]):
		return c.indexReason("link_index", -1, link, tableLink), nil
	case nValues == 0 && nTimes == 0:
		return textReason("values", -1, "and timestamps_unix_nano are both empty (profiles.proto: a Sample MUST have at least one entry in either)"), nil
	case nValues != 0 && nTimes != 0 && nValues != nTimes:
		return reason{path: [4]pathElem{{"values", -1}}, got: nValues, n: int32(min(nTimes, math.MaxInt32)), kind: reasonCounts}, nil
	}
	return r, nil
}
