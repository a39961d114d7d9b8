package otlpdecode

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/otlp-lite/otlp-lite/otlppb"
	"github.com/otlp-lite/otlp-lite/otlpview"
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
// it, e.g. for differences of profiles). v1.11 declares one sample_type per
// profile (earlier versions had one value per sample type), so what ties
// the number of a sample's values is its timestamps, as checked above.
//
// Errors and allocations are as for CheckTraces: malformed protobuf
// anywhere, dictionary included, refuses the request, e.g.
// `cannot decode dictionary.location_table[7].lines[0]: ...`.
func CheckProfiles(src []byte, opts *Options) (Result, error) {
	c := newChecker(opts)
	if err := c.loadDictionary(src); err != nil {
		return Result{}, err
	}
	if c.visit != nil && !c.dict.bad.bad() {
		if _, err := c.visit.views.Dictionary(src); err != nil {
			return Result{}, err
		}
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
	n := c.countItem()
	r, _, err := c.profile(src, nil)
	return c.keepValid(dst, src, n, &r, err)
}

// The tables of ProfilesDictionary, by field number.
const (
	tableMapping   = otlppb.ProfilesDictionaryMappingTable
	tableLocation  = otlppb.ProfilesDictionaryLocationTable
	tableFunction  = otlppb.ProfilesDictionaryFunctionTable
	tableLink      = otlppb.ProfilesDictionaryLinkTable
	tableString    = otlppb.ProfilesDictionaryStringTable
	tableAttribute = otlppb.ProfilesDictionaryAttributeTable
	tableStack     = otlppb.ProfilesDictionaryStackTable
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
func (c *checker) index(f *otlppb.Field, field string, table int, r *reason) {
	if v, ok := f.Uint64(); ok && !inRange(v, c.dict.len[table]) {
		c.badIndex(field, -1, v, table, r)
	}
}

// indices checks an occurrence of a repeated int32 field of indices into
// table (one varint, or a packed run, which protobuf parsers must both
// accept); *n counts the elements across occurrences, for positions.
func (c *checker) indices(f *otlppb.Field, field string, table int, n *int, r *reason) error {
	size := c.dict.len[table]
	if v, ok := f.Uint64(); ok {
		if !inRange(v, size) {
			c.badIndex(field, *n, v, table, r)
		}
		*n++
		return nil
	}
	data, ok := f.MessageData()
	if !ok {
		return nil // another wire type: an unknown field
	}
	// A stack is a packed run of indices, one or two bytes each in all
	// but huge tables: those are read here, where a value below 2^14 is
	// valid exactly when it is below limit (0, "not set", always is).
	limit := uint64(max(size, 1))
	i := *n
	for len(data) > 0 {
		if len(data) >= 8 && limit > 0x80 {
			if adv, cnt := validIndices8(binary.LittleEndian.Uint64(data), limit); adv > 0 {
				data = data[adv:]
				i += cnt
				continue
			}
		}
		v := uint64(data[0])
		switch {
		case v < 0x80:
			data = data[1:]
			if v >= limit {
				c.badIndex(field, i, v, table, r)
			}
		case len(data) >= 2 && data[1] < 0x80:
			v = v&0x7f | uint64(data[1])<<7
			data = data[2:]
			if v >= limit {
				c.badIndex(field, i, v, table, r)
			}
		default:
			var k int
			if v, k = binary.Uvarint(data); k <= 0 {
				return fmt.Errorf("cannot read packed varint in field #%d", f.FieldNum)
			}
			data = data[k:]
			if !inRange(v, size) {
				c.badIndex(field, i, v, table, r)
			}
		}
		i++
	}
	*n = i
	return nil
}

// validIndices8 checks the next 8 bytes x (little-endian) of a packed run
// of indices into a table of limit > 128 entries at once, for the deep
// stacks of real profiles. When they hold only one- and two-byte varints
// that are all below limit, it returns how many bytes those varints take
// (7 or 8: a varint that starts in the last byte and goes on is left for
// the next call) and how many varints there are. Otherwise, adv is 0 and
// the caller reads one varint the slow way.
//
// A one-byte varint is below 128, so below limit. A two-byte varint is a
// continuation byte (high bit set) followed by hi, its bits 7..13: it is
// certainly below limit when hi < (limit-1)>>7, and is left to the exact
// check when hi is that or more.
func validIndices8(x, limit uint64) (adv, cnt int) {
	const high = 0x8080808080808080
	cont := x & high
	second := cont << 8 // the byte after each continuation byte
	if x&second != 0 {
		return 0, 0 // a varint of three bytes or more
	}
	if limit <= 1<<14 {
		// Per byte, (b | 0x80) - h keeps its high bit iff b&0x7f >= h,
		// without borrowing from the next byte (h <= 127).
		h := (limit - 1) >> 7
		if ((x|high)-h*0x0101010101010101)&high&second != 0 {
			return 0, 0
		}
	}
	return 8 - int(x>>63), bits.OnesCount64(^x & high)
}

// badIndex records in *r, unless it holds a reason already, that element
// idx of field, v, is out of range of table.
//
//go:noinline
func (c *checker) badIndex(field string, idx int, v uint64, table int, r *reason) {
	if !r.bad() {
		*r = c.indexReason(field, idx, v, table)
	}
}

// countFixed64s returns how many elements an occurrence of a repeated
// fixed64 field holds (one fixed64, or a packed run).
func countFixed64s(f *otlppb.Field) (int, error) {
	if f.WireType() == otlppb.WireI64 {
		return 1, nil
	}
	data, ok := f.MessageData()
	if !ok {
		return 0, nil
	}
	if len(data)%8 != 0 {
		return 0, fmt.Errorf("packed field #%d is %d bytes, not a multiple of 8", f.FieldNum, len(data))
	}
	return len(data) / 8, nil
}

// countVarints returns how many elements an occurrence of a repeated
// varint field holds (one varint, or a packed run).
func countVarints(f *otlppb.Field) (int, error) {
	if _, ok := f.Uint64(); ok {
		return 1, nil
	}
	data, ok := f.MessageData()
	if !ok {
		return 0, nil
	}
	if n, ok := countShortVarints(data); ok {
		return n, nil
	}
	n := 0
	for len(data) > 0 {
		if data[0] < 0x80 {
			data = data[1:]
		} else {
			_, k := binary.Uvarint(data)
			if k <= 0 {
				return 0, fmt.Errorf("cannot read packed varint in field #%d", f.FieldNum)
			}
			data = data[k:]
		}
		n++
	}
	return n, nil
}

// countShortVarints counts the varints of a packed run 8 bytes at a time:
// each ends with a byte whose high bit is clear. ok is false unless every
// varint is 9 bytes or shorter (63 bits: none can overflow) and the run
// ends with a complete one; the caller then reads the run one varint at a
// time, which finds the longer and the malformed ones.
func countShortVarints(data []byte) (n int, ok bool) {
	const high = 0x8080808080808080
	carry := 0 // continuation bytes of the varint the last chunk ended in
	for ; len(data) >= 8; data = data[8:] {
		ends := ^binary.LittleEndian.Uint64(data) & high
		if ends == 0 {
			return 0, false // 8 continuation bytes in a row, at least
		}
		if carry+bits.TrailingZeros64(ends)/8 > 8 {
			return 0, false
		}
		// Between two ends of varints in one chunk lie at most 6
		// continuation bytes; the chunk's last varint may go on.
		n += bits.OnesCount64(ends)
		carry = bits.LeadingZeros64(ends) / 8
	}
	for _, b := range data {
		if b < 0x80 {
			n++
			carry = 0
		} else if carry++; carry > 8 {
			return 0, false
		}
	}
	return n, carry == 0
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
	var f otlppb.Field
	for rest := src; len(rest) > 0; {
		var err error
		if rest, err = f.Read(rest); err != nil {
			return topLevel(err)
		}
		if data, ok := f.MessageData(); ok && f.FieldNum == otlppb.ExportProfilesServiceRequestDictionary {
			if err := c.countTables(data); err != nil {
				return topLevel(at(err, "dictionary", -1))
			}
		}
	}
	var seen [numTables]int // entries checked so far, by table
	for rest := src; len(rest) > 0; {
		rest, _ = f.Read(rest) // read without error above
		if data, ok := f.MessageData(); ok && f.FieldNum == otlppb.ExportProfilesServiceRequestDictionary {
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
	var f otlppb.Field
	for len(src) > 0 {
		// What encoders write, a one-byte tag and a length below 128, is
		// read inline.
		if num, end, ok := otlppb.ShortLen(src); ok {
			if num < numTables {
				c.dict.len[num]++
			}
			src = src[end:]
			continue
		}
		var err error
		if src, err = f.Read(src); err != nil {
			return err
		}
		if _, ok := f.MessageData(); ok && f.FieldNum < numTables {
			c.dict.len[f.FieldNum]++
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
//
// The entry checks record what they find in a reason passed by pointer,
// which stays zero on the happy path: a dictionary has thousands of
// entries, and a reason returned by value would be zeroed and copied for
// each.
func (c *checker) checkDictionary(src []byte, seen *[numTables]int) error {
	var r reason // what the current entry breaks, relative to it
	var f otlppb.Field
	for len(src) > 0 {
		var err error
		// Most entries are short: a one-byte tag and length, read
		// inline.
		var data []byte
		table, end, ok := otlppb.ShortLen(src)
		if ok {
			data, src = src[2:end], src[end:]
		} else {
			if src, err = f.Read(src); err != nil {
				return err
			}
			if data, ok = f.MessageData(); !ok {
				continue
			}
			table = f.FieldNum
		}
		if table >= numTables || table == 0 {
			continue
		}
		idx := seen[table]
		seen[table] = idx + 1
		zero, named := false, true
		switch table {
		case tableMapping:
			zero, err = c.mapping(data, &r)
		case tableLocation:
			zero, err = c.location(data, &r)
		case tableFunction:
			zero, named, err = c.function(data, &r)
		case tableLink:
			zero, err = profileLink(data, idx, &r)
		case tableString:
			zero = len(data) == 0
			if c.utf8 && !validUTF8(data) {
				r = utf8Reason(tableNames[table], idx)
				c.noteDict(&r, "", 0)
			}
		case tableAttribute:
			zero, err = c.keyValueAndUnit(data, &r)
		case tableStack:
			zero, err = c.stack(data, &r)
		}
		if err != nil {
			return at(err, tableNames[table], idx)
		}
		switch {
		case idx == 0 && !zero:
			r = textReason(tableNames[table], idx, "is not the zero value (profiles.proto: element 0 of every dictionary table MUST be the zero value)")
			c.noteDict(&r, "", 0)
		case idx > 0 && !named:
			r = textReason(tableNames[table], idx, "has none of name_strindex, system_name_strindex, filename_strindex (profiles.proto: at least one MUST be present)")
			c.noteDict(&r, "", 0)
		case r.bad():
			c.noteDict(&r, tableNames[table], idx)
		}
	}
	return nil
}

// noteDict keeps *r, found in element idx of the dictionary table name
// (name "": r already names it), as the dictionary's first problem unless
// it has one, and resets *r for the next entry.
func (c *checker) noteDict(r *reason, name string, idx int) {
	if !c.dict.bad.bad() {
		if name != "" {
			c.dict.bad = r.in(name, idx)
		} else {
			c.dict.bad = *r
		}
	}
	*r = reason{}
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
func (c *checker) mapping(src []byte, r *reason) (zero bool, err error) {
	zero = true
	nAttrs := 0
	var f otlppb.Field
	for len(src) > 0 {
		if src, err = f.Read(src); err != nil {
			return false, err
		}
		switch f.FieldNum {
		case otlppb.MappingMemoryStart, otlppb.MappingMemoryLimit, otlppb.MappingFileOffset:
			zero = zero && varintZero(&f)
		case otlppb.MappingFilenameStrindex:
			zero = zero && varintZero(&f)
			c.index(&f, "filename_strindex", tableString, r)
		case otlppb.MappingAttributeIndices:
			zero = zero && emptyRepeated(&f)
			if err := c.indices(&f, "attribute_indices", tableAttribute, &nAttrs, r); err != nil {
				return false, err
			}
		}
	}
	return zero, nil
}

// varintZero reports whether f is not a varint set to something other
// than 0 (a field of another wire type is unknown, and does not count).
func varintZero(f *otlppb.Field) bool {
	v, ok := f.Uint64()
	return !ok || v == 0
}

// emptyRepeated reports whether an occurrence of a repeated int32 field
// adds no element: an empty packed run, or a field of another wire type
// than varint or LEN, which is unknown.
func emptyRepeated(f *otlppb.Field) bool {
	switch f.WireType() {
	case otlppb.WireVarint:
		return false
	case otlppb.WireLen:
		data, _ := f.MessageData()
		return len(data) == 0
	}
	return true
}

// tagLines is the one-byte tag of Location.lines, which location's fast
// path compares first: most of a location's other fields are not
// length-delimited.
const tagLines = otlppb.LocationLines<<3 | otlppb.WireLen

// location checks a Location of the dictionary; zero reports whether it is
// Location{}.
//
//	message Location {
//	  int32 mapping_index = 1;
//	  uint64 address = 2;
//	  repeated Line lines = 3;
//	  repeated int32 attribute_indices = 4;
//	}
func (c *checker) location(src []byte, r *reason) (zero bool, err error) {
	zero = true
	nLines, nAttrs := 0, 0
	var f otlppb.Field
	for len(src) > 0 {
		// A line with a one-byte length, the commonest field, is read
		// inline.
		if _, end, ok := otlppb.ShortLen(src); ok && src[0] == tagLines {
			zero = false
			wasBad := r.bad()
			if err := c.line(src[2:end], r); err != nil {
				return false, at(err, "lines", nLines)
			}
			if !wasBad && r.bad() {
				*r = r.in("lines", nLines)
			}
			nLines++
			src = src[end:]
			continue
		}
		if src, err = f.Read(src); err != nil {
			return false, err
		}
		switch f.FieldNum {
		case otlppb.LocationMappingIndex:
			zero = zero && varintZero(&f)
			c.index(&f, "mapping_index", tableMapping, r)
		case otlppb.LocationAddress:
			zero = zero && varintZero(&f)
		case otlppb.LocationLines:
			data, ok := f.MessageData()
			if !ok {
				continue
			}
			zero = false
			wasBad := r.bad()
			if err := c.line(data, r); err != nil {
				return false, at(err, "lines", nLines)
			}
			if !wasBad && r.bad() {
				*r = r.in("lines", nLines)
			}
			nLines++
		case otlppb.LocationAttributeIndices:
			zero = zero && emptyRepeated(&f)
			if err := c.indices(&f, "attribute_indices", tableAttribute, &nAttrs, r); err != nil {
				return false, err
			}
		}
	}
	return zero, nil
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
func (c *checker) line(src []byte, r *reason) error {
	functions := uint64(c.dict.len[tableFunction])
	var f otlppb.Field
	for len(src) > 0 {
		// A line is a few small varints, read inline: a value below
		// 2^14 is not negative, and the exact check of a function_index
		// runs only when it is not obviously valid.
		if num, v, n, ok := otlppb.SmallVarint(src); ok {
			if num == otlppb.LineFunctionIndex && v >= functions && v != 0 {
				c.badIndex("function_index", -1, v, tableFunction, r)
			}
			src = src[n:]
			continue
		}
		var err error
		if src, err = f.Read(src); err != nil {
			return err
		}
		switch f.FieldNum {
		case otlppb.LineFunctionIndex:
			c.index(&f, "function_index", tableFunction, r)
		case otlppb.LineLine:
			negative(&f, "line", r)
		case otlppb.LineColumn:
			negative(&f, "column", r)
		}
	}
	return nil
}

// negative records in *r that the int64 field f, a 1-based line or
// column number, is negative.
func negative(f *otlppb.Field, field string, r *reason) {
	if v, ok := f.Uint64(); ok && int64(v) < 0 && !r.bad() {
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
func (c *checker) function(src []byte, r *reason) (zero, named bool, err error) {
	// Last occurrence wins for each of the three names.
	var names [3]bool
	zero = true
	var f otlppb.Field
	for len(src) > 0 {
		if src, err = f.Read(src); err != nil {
			return false, false, err
		}
		switch f.FieldNum {
		case otlppb.FunctionNameStrindex, otlppb.FunctionSystemNameStrindex, otlppb.FunctionFilenameStrindex:
			i := f.FieldNum - otlppb.FunctionNameStrindex // the three are consecutive
			if v, ok := f.Uint64(); ok {
				names[i] = v != 0
			}
			zero = zero && varintZero(&f)
			c.index(&f, functionNames[i], tableString, r)
		case otlppb.FunctionStartLine:
			zero = zero && varintZero(&f)
			negative(&f, "start_line", r)
		}
	}
	return zero, names[0] || names[1] || names[2], nil
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
func profileLink(src []byte, idx int, r *reason) (zero bool, err error) {
	var traceID, spanID []byte
	var f otlppb.Field
	for len(src) > 0 {
		if src, err = f.Read(src); err != nil {
			return false, err
		}
		switch f.FieldNum {
		case otlppb.LinkTraceID:
			if b, ok := f.MessageData(); ok {
				traceID = b
			}
		case otlppb.LinkSpanID:
			if b, ok := f.MessageData(); ok {
				spanID = b
			}
		}
	}
	zero = (len(traceID) == 0 || (len(traceID) == 16 && zeroID16(traceID))) &&
		(len(spanID) == 0 || (len(spanID) == 8 && binary.LittleEndian.Uint64(spanID) == 0))
	switch {
	case idx == 0:
	case len(traceID) != 16:
		*r = lenReason("trace_id", len(traceID), "16")
	case len(spanID) != 8:
		*r = lenReason("span_id", len(spanID), "8")
	}
	return zero, nil
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
func (c *checker) keyValueAndUnit(src []byte, r *reason) (zero bool, err error) {
	zero = true
	var f otlppb.Field
	for len(src) > 0 {
		if src, err = f.Read(src); err != nil {
			return false, err
		}
		switch f.FieldNum {
		case otlppb.KeyValueAndUnitKeyStrindex:
			zero = zero && varintZero(&f)
			c.index(&f, "key_strindex", tableString, r)
		case otlppb.KeyValueAndUnitValue:
			data, ok := f.MessageData()
			if !ok {
				continue
			}
			zero = zero && len(data) == 0
			v, err := c.anyValue(data, 1)
			if err != nil {
				return false, at(err, "value", -1)
			}
			if v != verdictOK && !r.bad() {
				*r = v.reason("value", -1)
			}
		case otlppb.KeyValueAndUnitUnitStrindex:
			zero = zero && varintZero(&f)
			c.index(&f, "unit_strindex", tableString, r)
		}
	}
	return zero, nil
}

// stack checks a Stack of the dictionary; zero reports whether it is
// Stack{}.
//
//	message Stack {
//	  repeated int32 location_indices = 1;
//	}
func (c *checker) stack(src []byte, r *reason) (zero bool, err error) {
	zero = true
	n := 0
	var f otlppb.Field
	for len(src) > 0 {
		if src, err = f.Read(src); err != nil {
			return false, err
		}
		if f.FieldNum == otlppb.StackLocationIndices {
			zero = zero && emptyRepeated(&f)
			if err := c.indices(&f, "location_indices", tableLocation, &n, r); err != nil {
				return false, err
			}
		}
	}
	return zero, nil
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
//
// pv, when not nil, is the view of the profile a visitor gets
// (otlpview.ItemViews.ProfileOf): the walk hands it every field it reads,
// so that visiting a profile costs no walk of its own.
func (c *checker) profile(src []byte, pv *otlpview.Profile) (r reason, samples int, err error) {
	var profileID []byte
	formatSet, payloadSet := false, false
	nSamples, nAttrs := 0, 0
	var f otlppb.Field
	for len(src) > 0 {
		if src, err = f.Read(src); err != nil {
			return r, 0, err
		}
		// A view (pv) gets every field it reads in its case, not in
		// samples' (its lazy iterator, as attribute_indices): the plain
		// walk's test of pv is not made once per sample.
		switch f.FieldNum {
		default: // the scalars
			if pv != nil {
				_ = pv.ReadField(&f)
			}
		case otlppb.ProfileSampleType, otlppb.ProfilePeriodType:
			if pv != nil {
				// Its one error, a malformed ValueType, is c.valueType's.
				_ = pv.ReadField(&f)
			}
			data, ok := f.MessageData()
			if !ok {
				continue
			}
			name := "sample_type"
			if f.FieldNum == otlppb.ProfilePeriodType {
				name = "period_type"
			}
			wasBad := r.bad()
			if err := c.valueType(data, &r); err != nil {
				return r, 0, at(err, name, -1)
			}
			if !wasBad && r.bad() {
				r = r.in(name, -1)
			}
		case otlppb.ProfileSamples:
			data, ok := f.MessageData()
			if !ok {
				continue
			}
			wasBad := r.bad()
			if err := c.sample(data, &r); err != nil {
				return r, 0, at(err, "samples", nSamples)
			}
			if !wasBad && r.bad() {
				r = r.in("samples", nSamples)
			}
			nSamples++
		case otlppb.ProfileProfileID:
			if b, ok := f.MessageData(); ok {
				profileID = b
				if pv != nil {
					pv.ProfileID = b
				}
			}
		case otlppb.ProfileOriginalPayloadFormat:
			if pv != nil {
				_ = pv.ReadField(&f)
			}
			if b, ok := f.MessageData(); ok {
				formatSet = len(b) > 0
				if c.utf8 && !validUTF8(b) && !r.bad() {
					r = utf8Reason("original_payload_format", -1)
				}
			}
		case otlppb.ProfileOriginalPayload:
			if b, ok := f.MessageData(); ok {
				payloadSet = len(b) > 0
				if pv != nil {
					pv.OriginalPayload = b
				}
			}
		case otlppb.ProfileAttributeIndices:
			if err := c.indices(&f, "attribute_indices", tableAttribute, &nAttrs, &r); err != nil {
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
func (c *checker) valueType(src []byte, r *reason) error {
	var f otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = f.Read(src); err != nil {
			return err
		}
		switch f.FieldNum {
		case otlppb.ValueTypeTypeStrindex:
			c.index(&f, "type_strindex", tableString, r)
		case otlppb.ValueTypeUnitStrindex:
			c.index(&f, "unit_strindex", tableString, r)
		}
	}
	return nil
}

// sample checks a Sample and records what it breaks in *r, unless *r
// already holds a reason. It runs once per sample, the hottest loop of a
// profiles request.
//
//	message Sample {
//	  int32 stack_index = 1;
//	  repeated int32 attribute_indices = 2;
//	  int32 link_index = 3;
//	  repeated int64 values = 4;
//	  repeated fixed64 timestamps_unix_nano = 5;
//	}
func (c *checker) sample(src []byte, r *reason) error {
	// Singular indices: the last occurrence wins, so they are checked
	// after the walk.
	var stack, link uint64
	nAttrs, nValues, nTimes := 0, 0, 0
	var f otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = f.Read(src); err != nil {
			return err
		}
		switch f.FieldNum {
		case otlppb.SampleStackIndex:
			if v, ok := f.Uint64(); ok {
				stack = v
			}
		case otlppb.SampleAttributeIndices:
			if err := c.indices(&f, "attribute_indices", tableAttribute, &nAttrs, r); err != nil {
				return err
			}
		case otlppb.SampleLinkIndex:
			if v, ok := f.Uint64(); ok {
				link = v
			}
		case otlppb.SampleValues:
			n, err := countVarints(&f)
			if err != nil {
				return err
			}
			nValues += n
		case otlppb.SampleTimestampsUnixNano:
			n, err := countFixed64s(&f)
			if err != nil {
				return err
			}
			nTimes += n
		}
	}
	if r.bad() {
		return nil
	}
	switch {
	case !inRange(stack, c.dict.len[tableStack]):
		*r = c.indexReason("stack_index", -1, stack, tableStack)
	case !inRange(link, c.dict.len[tableLink]):
		*r = c.indexReason("link_index", -1, link, tableLink)
	case nValues == 0 && nTimes == 0:
		*r = textReason("values", -1, "and timestamps_unix_nano are both empty (profiles.proto: a Sample MUST have at least one entry in either)")
	case nValues != 0 && nTimes != 0 && nValues != nTimes:
		*r = reason{path: [4]pathElem{{"values", -1}}, got: nValues, n: int32(min(nTimes, math.MaxInt32)), kind: reasonCounts}
	}
	return nil
}
