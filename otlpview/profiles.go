package otlpview

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/otlp-lite/otlp-lite/otlppb"
)

// The views of the profiles signal (opentelemetry-proto v1.11,
// profiles/v1development, Alpha). A profile refers to the request's
// ProfilesDictionary by index for everything but its own scalars: the
// views resolve those indices, so that a Sample reads as the values,
// timestamps, stack of locations (each with its mapping and its lines'
// functions, names as strings) and attributes it stands for. Index 0 of
// every table is its zero value ("not set"): it resolves to an empty view.
//
// Views read what otlpdecode.CheckProfiles accepts; on other input an index
// out of range resolves to an empty view and reports an error through the
// iterator's Err, never a panic.

// Dictionary is a view of the ProfilesDictionary of a request (several
// occurrences of the dictionary field are merged: their tables are
// concatenated). It keeps the position of every table entry in the
// request, 4 bytes per entry; an entry takes at least 2 bytes of the
// request, so a Dictionary holds at most twice the size of the request it
// reads (TestDictionaryMemoryBound), in buffers it reuses.
type Dictionary struct {
	src  []byte
	offs [otlppb.ProfilesDictionaryStackTable + 1][]uint32 // by table field number: offsets of the entries' tags in src
}

// errIndex reports a dictionary index out of range.
var errIndex = errors.New("dictionary index out of range")

// load indexes the dictionary of the request src.
//
//	message ExportProfilesServiceRequest {
//	  repeated opentelemetry.proto.profiles.v1development.ResourceProfiles resource_profiles = 1;
//	  opentelemetry.proto.profiles.v1development.ProfilesDictionary dictionary = 2;
//	}
func (d *Dictionary) load(src []byte) error {
	if uint64(len(src)) > math.MaxUint32 {
		return errors.New("request larger than 4 GiB")
	}
	d.src = src
	// Two passes, counting then recording, so that every table's buffer
	// is allocated at its size: grown by append, it could take twice the
	// memory of its entries.
	var n [len(Dictionary{}.offs)]int
	for pass := range 2 {
		for i := range d.offs {
			if pass == 1 {
				d.offs[i] = slices.Grow(d.offs[i][:0], n[i])
			}
		}
		var fc otlppb.Field
		for rest := src; len(rest) > 0; {
			var err error
			if rest, err = fc.Read(rest); err != nil {
				return otlppb.ErrorAt(err, "", -1)
			}
			data, ok := fc.MessageData()
			if !ok || fc.FieldNum != otlppb.ExportProfilesServiceRequestDictionary {
				continue
			}
			// The payload ends where the field does.
			if err := d.index(data, len(src)-len(rest)-len(data), &n, pass == 0); err != nil {
				return otlppb.ErrorAt(otlppb.ErrorAt(err, "dictionary", -1), "", -1)
			}
		}
	}
	return nil
}

// index records the entries of one occurrence of the dictionary, whose
// payload dict starts at offset base of d.src.
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
// With count, it only counts the entries of each table into n.
func (d *Dictionary) index(dict []byte, base int, n *[len(Dictionary{}.offs)]int, count bool) error {
	var fc otlppb.Field
	for rest := dict; len(rest) > 0; {
		off := base + len(dict) - len(rest)
		var err error
		if rest, err = fc.Read(rest); err != nil {
			return err
		}
		if _, ok := fc.MessageData(); !ok || fc.FieldNum >= uint32(len(d.offs)) {
			continue
		}
		if count {
			n[fc.FieldNum]++
		} else {
			d.offs[fc.FieldNum] = append(d.offs[fc.FieldNum], uint32(off))
		}
	}
	return nil
}

// entry returns the payload of entry i of table; ok is false when i is out
// of range. Entry 0 of an empty table is the zero value: an empty payload.
func (d *Dictionary) entry(table uint32, i int32) ([]byte, bool) {
	offs := d.offs[table]
	if i < 0 || int(i) >= len(offs) {
		return nil, i == 0
	}
	var fc otlppb.Field
	fc.Read(d.src[offs[i]:]) // read without error by index
	data, _ := fc.MessageData()
	return data, true
}

// Len returns the number of entries of the table in field table of
// ProfilesDictionary (otlppb.ProfilesDictionaryMappingTable...).
func (d *Dictionary) Len(table uint32) int {
	if table >= uint32(len(d.offs)) {
		return 0
	}
	return len(d.offs[table])
}

// String returns entry i of the string_table ("" for 0 or out of range).
func (d *Dictionary) String(i int32) string {
	s, _ := d.str(i)
	return s
}

func (d *Dictionary) str(i int32) (string, bool) {
	b, ok := d.entry(otlppb.ProfilesDictionaryStringTable, i)
	return bytesToString(b), ok
}

// Function returns entry i of the function_table, its names resolved.
//
//	message Function {
//	  int32 name_strindex = 1;
//	  int32 system_name_strindex = 2;
//	  int32 filename_strindex = 3;
//	  int64 start_line = 4;
//	}
func (d *Dictionary) Function(i int32) (Function, error) {
	src, ok := d.entry(otlppb.ProfilesDictionaryFunctionTable, i)
	if !ok {
		return Function{}, errIndex
	}
	var f Function
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return Function{}, err
		}
		v, ok := fc.Uint64()
		if !ok {
			continue
		}
		switch fc.FieldNum {
		case otlppb.FunctionNameStrindex:
			f.Name = d.String(int32(v))
		case otlppb.FunctionSystemNameStrindex:
			f.SystemName = d.String(int32(v))
		case otlppb.FunctionFilenameStrindex:
			f.Filename = d.String(int32(v))
		case otlppb.FunctionStartLine:
			f.StartLine = int64(v)
		}
	}
	return f, nil
}

// Function is a view of a Function of the dictionary, names resolved.
type Function struct {
	Name, SystemName, Filename string
	StartLine                  int64
}

// Mapping is a view of a Mapping of the dictionary.
//
//	message Mapping {
//	  uint64 memory_start = 1;
//	  uint64 memory_limit = 2;
//	  uint64 file_offset = 3;
//	  int32 filename_strindex = 4;
//	  repeated int32 attribute_indices = 5;
//	}
type Mapping struct {
	MemoryStart, MemoryLimit, FileOffset uint64
	Filename                             string
	Attributes                           Attributes
}

// Mapping returns entry i of the mapping_table.
func (d *Dictionary) Mapping(i int32) (Mapping, error) {
	src, ok := d.entry(otlppb.ProfilesDictionaryMappingTable, i)
	if !ok {
		return Mapping{}, errIndex
	}
	m := Mapping{Attributes: Attributes{src: src, field: otlppb.MappingAttributeIndices, dict: d}}
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return Mapping{}, err
		}
		v, ok := fc.Uint64()
		if !ok {
			continue
		}
		switch fc.FieldNum {
		case otlppb.MappingMemoryStart:
			m.MemoryStart = v
		case otlppb.MappingMemoryLimit:
			m.MemoryLimit = v
		case otlppb.MappingFileOffset:
			m.FileOffset = v
		case otlppb.MappingFilenameStrindex:
			m.Filename = d.String(int32(v))
		}
	}
	return m, nil
}

// Attribute is a view of a KeyValueAndUnit of the dictionary's
// attribute_table, its key and unit resolved.
//
//	message KeyValueAndUnit {
//	  int32 key_strindex = 1;
//	  opentelemetry.proto.common.v1.AnyValue value = 2;
//	  int32 unit_strindex = 3;
//	}
type Attribute struct {
	Key   string
	Value AnyValue
	Unit  string
}

// Attribute returns entry i of the attribute_table. A string value given
// as string_value_strindex reads as the string it indexes.
func (d *Dictionary) Attribute(i int32) (Attribute, error) {
	var a Attribute
	src, ok := d.entry(otlppb.ProfilesDictionaryAttributeTable, i)
	if !ok {
		return a, errIndex
	}
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return Attribute{}, err
		}
		switch fc.FieldNum {
		case otlppb.KeyValueAndUnitKeyStrindex:
			if v, ok := fc.Uint64(); ok {
				a.Key = d.String(int32(v))
			}
		case otlppb.KeyValueAndUnitUnitStrindex:
			if v, ok := fc.Uint64(); ok {
				a.Unit = d.String(int32(v))
			}
		case otlppb.KeyValueAndUnitValue:
			if data, ok := fc.MessageData(); ok {
				if err := a.Value.merge(data); err != nil {
					return Attribute{}, at(err, "value", -1)
				}
				if i, ok := strindexOf(data); ok && a.Value.kind == KindEmpty {
					a.Value = AnyValue{kind: KindString, data: stringToBytes(d.String(i))}
				}
			}
		}
	}
	return a, nil
}

// ProfileLink is a view of a Link of the dictionary's link_table: the span
// a sample was recorded in.
//
//	message Link {
//	  bytes trace_id = 1;
//	  bytes span_id = 2;
//	}
type ProfileLink struct {
	TraceID, SpanID []byte
}

// Link returns entry i of the link_table.
func (d *Dictionary) Link(i int32) (ProfileLink, error) {
	src, ok := d.entry(otlppb.ProfilesDictionaryLinkTable, i)
	if !ok {
		return ProfileLink{}, errIndex
	}
	var l ProfileLink
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return ProfileLink{}, err
		}
		switch fc.FieldNum {
		case otlppb.LinkTraceID:
			if b, ok := fc.Bytes(); ok {
				l.TraceID = b
			}
		case otlppb.LinkSpanID:
			if b, ok := fc.Bytes(); ok {
				l.SpanID = b
			}
		}
	}
	return l, nil
}

// Stack returns the locations of entry i of the stack_table, leaf first.
//
//	message Stack {
//	  repeated int32 location_indices = 1;
//	}
func (d *Dictionary) Stack(i int32) (Locations, error) {
	src, ok := d.entry(otlppb.ProfilesDictionaryStackTable, i)
	if !ok {
		return Locations{}, errIndex
	}
	return Locations{indices: indices{src: src, field: otlppb.StackLocationIndices}, dict: d}, nil
}

// Location is a view of a Location of the dictionary.
//
//	message Location {
//	  int32 mapping_index = 1;
//	  uint64 address = 2;
//	  repeated Line lines = 3;
//	  repeated int32 attribute_indices = 4;
//	}
type Location struct {
	// Mapping is the location's mapping; MappingIndex 0 (none) gives
	// Mapping{}.
	Mapping      Mapping
	MappingIndex int32
	Address      uint64
	// Lines are the source lines of the location, inlined callees
	// first.
	Lines      Lines
	Attributes Attributes
}

// Location returns entry i of the location_table.
func (d *Dictionary) Location(i int32) (Location, error) {
	src, ok := d.entry(otlppb.ProfilesDictionaryLocationTable, i)
	if !ok {
		return Location{}, errIndex
	}
	l := Location{
		Lines:      Lines{src: src, dict: d},
		Attributes: Attributes{src: src, field: otlppb.LocationAttributeIndices, dict: d},
	}
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return Location{}, err
		}
		v, ok := fc.Uint64()
		if !ok {
			continue
		}
		switch fc.FieldNum {
		case otlppb.LocationMappingIndex:
			l.MappingIndex = int32(v)
		case otlppb.LocationAddress:
			l.Address = v
		}
	}
	if l.MappingIndex != 0 {
		m, err := d.Mapping(l.MappingIndex)
		if err != nil {
			return Location{}, at(err, "mapping_index", -1)
		}
		l.Mapping = m
	}
	return l, nil
}

// Line is a view of a Line of a Location, its function resolved.
//
//	message Line {
//	  int32 function_index = 1;
//	  int64 line = 2;
//	  int64 column = 3;
//	}
type Line struct {
	Function     Function
	Line, Column int64
}

// Lines is the lines field of a Location, decoded lazily.
type Lines struct {
	src  []byte
	dict *Dictionary
}

// Iter returns an iterator over the lines.
func (ls Lines) Iter() LineIter {
	return LineIter{rawIter: rawIter{src: ls.src, field: otlppb.LocationLines}, dict: ls.dict}
}

// LineIter iterates over Lines.
type LineIter struct {
	rawIter
	dict *Dictionary
	l    Line
}

// Next decodes the next line.
func (it *LineIter) Next() bool {
	data, ok := it.next()
	return ok && it.decoded(it.decode(data), "lines")
}

func (it *LineIter) decode(src []byte) error {
	it.l = Line{}
	var fn uint64
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return err
		}
		v, ok := fc.Uint64()
		if !ok {
			continue
		}
		switch fc.FieldNum {
		case otlppb.LineFunctionIndex:
			fn = v
		case otlppb.LineLine:
			it.l.Line = int64(v)
		case otlppb.LineColumn:
			it.l.Column = int64(v)
		}
	}
	f, err := it.dict.Function(int32(fn))
	if err != nil {
		return at(err, "function_index", -1)
	}
	it.l.Function = f
	return nil
}

// Line returns the current line, valid until Next.
func (it *LineIter) Line() *Line { return &it.l }

// indices yields the elements of a repeated int32 field of indices, packed
// or not, in every occurrence of the field in src.
type indices struct {
	src   []byte
	field uint32
}

// indexIter is the engine of the iterators over dictionary references.
type indexIter struct {
	src   []byte // the message, from the next field on
	field uint32
	run   []byte // the rest of the packed run being read
	err   error
}

// next returns the next index; ok is false at the end or on error.
func (it *indexIter) next() (int32, bool) {
	for {
		if len(it.run) > 0 {
			v, n := binary.Uvarint(it.run)
			if n <= 0 {
				it.fail(fmt.Errorf("cannot read packed varint in field #%d", it.field))
				return 0, false
			}
			it.run = it.run[n:]
			return int32(v), true
		}
		if len(it.src) == 0 {
			return 0, false
		}
		var fc otlppb.Field
		var err error
		if it.src, err = fc.Read(it.src); err != nil {
			it.fail(err)
			return 0, false
		}
		if fc.FieldNum != it.field {
			continue
		}
		if v, ok := fc.Uint64(); ok {
			return int32(v), true
		}
		if data, ok := fc.MessageData(); ok {
			it.run = data
		}
	}
}

func (it *indexIter) fail(err error) {
	it.err = err
	it.src, it.run = nil, nil
}

// Err returns the error that stopped the iteration, if any.
func (it *indexIter) Err() error { return it.err }

// Attributes is a repeated attribute_indices field, resolved lazily
// against the dictionary.
type Attributes struct {
	src   []byte
	field uint32
	dict  *Dictionary
}

// Iter returns an iterator over the attributes.
func (as Attributes) Iter() AttributeIter {
	return AttributeIter{indexIter: indexIter{src: as.src, field: as.field}, dict: as.dict}
}

// AttributeIter iterates over Attributes.
type AttributeIter struct {
	indexIter
	dict *Dictionary
	a    Attribute
}

// Next resolves the next attribute.
func (it *AttributeIter) Next() bool {
	i, ok := it.next()
	if !ok {
		return false
	}
	a, err := it.dict.Attribute(i)
	if err != nil {
		it.fail(at(err, "attribute_indices", -1))
		return false
	}
	it.a = a
	return true
}

// Attribute returns the current attribute, valid until Next.
func (it *AttributeIter) Attribute() *Attribute { return &it.a }

// Locations is a Stack's location_indices, resolved lazily against the
// dictionary.
type Locations struct {
	indices
	dict *Dictionary
}

// Iter returns an iterator over the locations, leaf first.
func (ls Locations) Iter() LocationIter {
	return LocationIter{indexIter: indexIter{src: ls.src, field: ls.field}, dict: ls.dict}
}

// LocationIter iterates over Locations.
type LocationIter struct {
	indexIter
	dict *Dictionary
	l    Location
}

// Next resolves the next location.
func (it *LocationIter) Next() bool {
	i, ok := it.next()
	if !ok {
		return false
	}
	l, err := it.dict.Location(i)
	if err != nil {
		it.fail(at(err, "location_indices", -1))
		return false
	}
	it.l = l
	return true
}

// Location returns the current location, valid until Next.
func (it *LocationIter) Location() *Location { return &it.l }

// ValueType is a view of a ValueType, its strings resolved.
//
//	message ValueType {
//	  int32 type_strindex = 1;
//	  int32 unit_strindex = 2;
//	}
type ValueType struct {
	Type, Unit string
}

func (vt *ValueType) decode(src []byte, d *Dictionary) error {
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return err
		}
		v, ok := fc.Uint64()
		if !ok {
			continue
		}
		switch fc.FieldNum {
		case otlppb.ValueTypeTypeStrindex:
			vt.Type = d.String(int32(v))
		case otlppb.ValueTypeUnitStrindex:
			vt.Unit = d.String(int32(v))
		}
	}
	return nil
}

// Profile is a view of a Profile. Byte slices and strings alias the
// request; samples are decoded lazily, against the request's dictionary.
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
type Profile struct {
	// Raw is the profile's protobuf encoding, as it came (it aliases the
	// request).
	Raw []byte
	// SampleType is what every sample's values measure (v1.11: one
	// sample type per profile).
	SampleType             ValueType
	TimeUnixNano           uint64
	DurationNano           uint64
	PeriodType             ValueType
	Period                 int64
	ProfileID              []byte
	DroppedAttributesCount uint32
	OriginalPayloadFormat  string
	OriginalPayload        []byte
	Attributes             Attributes
	Samples                Samples
	// Dictionary is the request's dictionary, which the profile's
	// indices refer to.
	Dictionary *Dictionary
}

func (p *Profile) decode(src []byte) error {
	p.reset(src)
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return err
		}
		if err := p.ReadField(&fc); err != nil {
			return err
		}
	}
	return nil
}

// reset empties p for the profile src, keeping its dictionary and
// buffers.
func (p *Profile) reset(src []byte) {
	d := p.Dictionary
	bufs := p.Samples.bufs
	*p = Profile{} // in place: see LogRecord.reset
	p.Raw = src
	p.Attributes = Attributes{src: src, field: otlppb.ProfileAttributeIndices, dict: d}
	p.Samples = Samples{src: src, dict: d, bufs: bufs}
	p.Dictionary = d
}

// ReadField reads the field fc of the profile p.Raw into p, as decoding
// the profile does (the last occurrence of a field wins): for a walk that
// reads the profile's fields itself and fills the view as it goes
// (otlpdecode's validation, from ItemViews.ProfileOf), instead of a second
// walk. Every field of the profile goes through it, in wire order. Its
// error is a malformed sample_type or period_type.
func (p *Profile) ReadField(fc *otlppb.Field) error {
	d := p.Dictionary
	switch fc.FieldNum {
	case otlppb.ProfileSampleType, otlppb.ProfilePeriodType:
		data, ok := fc.MessageData()
		if !ok {
			return nil
		}
		vt, name := &p.SampleType, "sample_type"
		if fc.FieldNum == otlppb.ProfilePeriodType {
			vt, name = &p.PeriodType, "period_type"
		}
		if err := vt.decode(data, d); err != nil {
			return at(err, name, -1)
		}
	case otlppb.ProfileTimeUnixNano:
		if n, ok := fc.Fixed64(); ok {
			p.TimeUnixNano = n
		}
	case otlppb.ProfileDurationNano:
		if n, ok := fc.Uint64(); ok {
			p.DurationNano = n
		}
	case otlppb.ProfilePeriod:
		if n, ok := fc.Uint64(); ok {
			p.Period = int64(n)
		}
	case otlppb.ProfileProfileID:
		if b, ok := fc.Bytes(); ok {
			p.ProfileID = b
		}
	case otlppb.ProfileDroppedAttributesCount:
		if n, ok := readUint32(fc); ok {
			p.DroppedAttributesCount = n
		}
	case otlppb.ProfileOriginalPayloadFormat:
		if s, ok := fc.String(); ok {
			p.OriginalPayloadFormat = s
		}
	case otlppb.ProfileOriginalPayload:
		if b, ok := fc.Bytes(); ok {
			p.OriginalPayload = b
		}
	}
	return nil
}

// sampleBufs are the buffers a sample's packed values and timestamps are
// unpacked into; they belong to the decoder and are reused.
type sampleBufs struct {
	values     []uint64
	timestamps []uint64
}

// Samples is the samples field of a Profile, decoded lazily.
type Samples struct {
	src  []byte
	dict *Dictionary
	bufs *sampleBufs
}

// Iter returns an iterator over the samples.
func (ss Samples) Iter() SampleIter {
	bufs := ss.bufs
	if bufs == nil {
		bufs = new(sampleBufs)
	}
	return SampleIter{rawIter: rawIter{src: ss.src, field: otlppb.ProfileSamples}, dict: ss.dict, bufs: bufs}
}

// Sample is a view of a Sample. Values and TimestampsUnixNano are unpacked
// into buffers of the decoder: they are valid until the iterator moves.
//
//	message Sample {
//	  int32 stack_index = 1;
//	  repeated int32 attribute_indices = 2;
//	  int32 link_index = 3;
//	  repeated int64 values = 4;
//	  repeated fixed64 timestamps_unix_nano = 5;
//	}
type Sample struct {
	// Stack is the sample's call stack, leaf first.
	Stack Locations
	// Values measure the profile's SampleType, one per timestamp when
	// both are set.
	Values             []int64
	TimestampsUnixNano []uint64
	Attributes         Attributes
	// Link is the span the sample was recorded in (LinkIndex 0: none).
	Link      ProfileLink
	LinkIndex int32
}

// SampleIter iterates over Samples.
type SampleIter struct {
	rawIter
	dict *Dictionary
	bufs *sampleBufs
	s    Sample
}

// Next decodes the next sample.
func (it *SampleIter) Next() bool {
	data, ok := it.next()
	return ok && it.decoded(it.decode(data), "samples")
}

// Sample returns the current sample, valid until Next.
func (it *SampleIter) Sample() *Sample { return &it.s }

func (it *SampleIter) decode(src []byte) error {
	d := it.dict
	values, times := it.bufs.values[:0], it.bufs.timestamps[:0]
	defer func() { it.bufs.values, it.bufs.timestamps = values, times }()
	it.s = Sample{Attributes: Attributes{src: src, field: otlppb.SampleAttributeIndices, dict: d}}
	var stack int32
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return err
		}
		switch fc.FieldNum {
		case otlppb.SampleStackIndex:
			if v, ok := fc.Uint64(); ok {
				stack = int32(v)
			}
		case otlppb.SampleLinkIndex:
			if v, ok := fc.Uint64(); ok {
				it.s.LinkIndex = int32(v)
			}
		case otlppb.SampleValues:
			if values, err = appendVarints(values, &fc); err != nil {
				return at(err, "values", -1)
			}
		case otlppb.SampleTimestampsUnixNano:
			if times, err = appendFixed64s(times, &fc); err != nil {
				return at(err, "timestamps_unix_nano", -1)
			}
		}
	}
	it.s.Values = int64s(values)
	it.s.TimestampsUnixNano = times
	locs, err := d.Stack(stack)
	if err != nil {
		return at(err, "stack_index", -1)
	}
	it.s.Stack = locs
	if it.s.LinkIndex != 0 {
		if it.s.Link, err = d.Link(it.s.LinkIndex); err != nil {
			return at(err, "link_index", -1)
		}
	}
	return nil
}

// ProfilesDecoder visits the profiles of ExportProfilesServiceRequest (or
// ProfilesData) messages. The zero value is ready to use. It is not safe
// for concurrent use; reuse it so that its buffers stop growing.
type ProfilesDecoder struct {
	c       containers
	profile Profile
	dict    Dictionary
	bufs    sampleBufs
}

// Decode reads the request's dictionary, then calls fn for every profile
// of src, in wire order, with its resource and scope. The contract is that
// of TracesDecoder.Decode; the resource's and scope's attributes are read
// as in the other signals (their key_strindex and string_value_strindex
// are not resolved). Sample values are valid until the sample iterator
// moves.
//
// It is kept out of line: see decodeRequest.
//
//go:noinline
func (d *ProfilesDecoder) Decode(src []byte, fn func(res *Resource, scope *Scope, p *Profile) error) error {
	if err := d.dict.load(src); err != nil {
		return err
	}
	d.profile.Dictionary, d.profile.Samples.bufs = &d.dict, &d.bufs
	return decodeRequest(&d.c, &d.profile, &profileLevels, src, fn)
}

// strindexOf returns the string_value_strindex of the AnyValue src, if it
// was given (common.proto: in the Profiling signal a string value may be
// an index into the string_table).
func strindexOf(src []byte) (int32, bool) {
	var i int32
	set := false
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return 0, false
		}
		if fc.FieldNum == otlppb.AnyValueStringValueStrindex {
			if v, ok := fc.Uint64(); ok {
				i, set = int32(v), true
			}
		}
	}
	return i, set
}
