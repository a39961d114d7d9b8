//go:build otelarrow

package arrowreceiver

import (
	"bytes"
	"cmp"
	"fmt"
	"github.com/otlp-lite/otlp-lite/internal/pbappend"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/open-telemetry/otel-arrow/go/pkg/otel/common"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Value types of the attribute tables' type column (pcommon.ValueType's
// numbers, as otel-arrow writes them).
const (
	vEmpty  = uint8(pcommon.ValueTypeEmpty)
	vStr    = uint8(pcommon.ValueTypeStr)
	vInt    = uint8(pcommon.ValueTypeInt)
	vDouble = uint8(pcommon.ValueTypeDouble)
	vBool   = uint8(pcommon.ValueTypeBool)
	vMap    = uint8(pcommon.ValueTypeMap)
	vSlice  = uint8(pcommon.ValueTypeSlice)
	vBytes  = uint8(pcommon.ValueTypeBytes)
)

// maxDenseParents bounds the dense index of an attribute table: parent
// ids up to 4 per row (plus a constant) are indexed by an array of
// offsets; sparser ids (possible only in the 32-bit tables, and only from
// a hostile sender) are sorted instead, so what an id declares costs
// nothing beyond the rows that carry it.
func maxDenseParents(rows int) uint64 { return 4*uint64(rows) + 1024 }

// attrTable is one attribute record of a batch (resource, scope, span,
// event or link attributes), indexed by parent id: the rows of a parent,
// in record order, as otel-arrow's AttributesStoreFrom gathers them into a
// pcommon.Map per parent, here without building any map. Its slices are
// reused from batch to batch.
type attrTable struct {
	present bool
	mask    uint64 // the width of the parent ids: 16 or 32 bits

	key  strCol
	typ  u8Col
	str  strCol
	i64  i64Col
	f64  f64Col
	bl   boolCol
	bin  binCol
	ser  binCol
	serV map[int32]pcommon.Value // the maps and slices (CBOR), decoded

	groups
	keyID []int32 // each row's key, as a small integer (duplicate keys)
	nKeys int

	lastID uint32 // the running id of AttributesByDeltaID
	used   []bool // scratch of write: the keys seen in a group (by keyID)
	last   []int32

	keyIDs map[string]int32    // scratch: keys of a plain key column
	seen   map[string]struct{} // scratch of distinct
	// The most entries each map held (their buckets stay when cleared).
	keyIDsMax, seenMax int
}

// reset forgets the previous batch's record (keeping the memory, but
// for the map-valued attributes: pdata values).
func (t *attrTable) reset() {
	t.present, t.n, t.lastID = false, 0, 0
	t.serV = nil
}

// load indexes rec's rows; mask is the parent ids' width (0xffff or
// 0xffffffff).
func (t *attrTable) load(rec arrow.Record, mask uint64) error {
	if t.present {
		return fmt.Errorf("two attribute records of one type in a batch")
	}
	t.present, t.mask = true, mask
	n := int(rec.NumRows())
	r := resolver{f: recordFields(rec)}
	for _, name := range []string{"parent_id", "key", "type"} {
		if a := r.col(name); a == nil && r.err == nil {
			return fmt.Errorf("attribute record without its column %q", name)
		}
	}
	pcol := r.unsigned("parent_id")
	t.key = r.str("key")
	t.typ = r.u8("type")
	t.str = r.str("str")
	t.i64 = r.i64("int")
	t.f64 = r.f64("double")
	t.bl = r.bool("bool")
	t.bin = r.bin("bytes")
	t.ser = r.bin("ser")
	if r.err != nil {
		return r.err
	}
	if err := t.loadKeys(n); err != nil {
		return err
	}
	// Parent ids: an id is a delta from the previous row's when both
	// rows have the same key and an equal value (otel-arrow's
	// AttrsParentIDDecoder, whose equality is pcommon's for scalars and
	// never for maps, slices or empty values).
	t.parent = slices.Grow(t.parent[:0], n)[:n]
	var prev uint64
	var prevV, cur scalar
	prevKey := int32(-1)
	maxP := uint64(0)
	for i := range n {
		cur = scalar{typ: t.typ.at(i)}
		switch cur.typ {
		case vStr:
			cur.s = t.str.at(i)
		case vInt:
			cur.u = uint64(t.i64.at(i))
		case vDouble:
			cur.u = math.Float64bits(t.f64.at(i))
		case vBool:
			if t.bl.at(i) {
				cur.u = 1
			}
		case vBytes:
			cur.bs = t.bin.at(i)
		case vMap, vSlice:
			v := pcommon.NewValueEmpty()
			if err := common.Deserialize(t.ser.at(i), v); err != nil {
				return fmt.Errorf("cannot decode attribute value: %w", err)
			}
			if t.serV == nil {
				t.serV = make(map[int32]pcommon.Value)
			}
			t.serV[int32(i)] = v
		}
		p := pcol.at(i) & mask
		if k := t.keyID[i]; k == prevKey && cur.equal(&prevV) {
			p = (prev + p) & mask
		}
		prev, prevKey, prevV = p, t.keyID[i], cur
		t.parent[i] = uint32(p)
		maxP = max(maxP, p)
	}
	t.index(n, maxP)
	return nil
}

// loadKeys gives each row's key a small integer: the dictionary index
// when the keys are a dictionary of distinct strings (what otel-arrow
// writes), else an index of distinct keys made here.
func (t *attrTable) loadKeys(n int) error {
	t.keyID = slices.Grow(t.keyID[:0], n)[:n]
	if t.key.dict != nil && t.distinct(t.key.dv) {
		// A null key reads as "": the id of "" when the dictionary has
		// it, else one of its own (nKeys).
		null := int32(t.key.dv.Len())
		for i := range t.key.dv.Len() {
			if t.key.dv.Value(i) == "" {
				null = int32(i)
				break
			}
		}
		for i := range n {
			if t.key.dict.IsNull(i) {
				t.keyID[i] = null
				continue
			}
			t.keyID[i] = int32(t.key.ix.get(i))
		}
		t.nKeys = t.key.dv.Len()
	} else {
		if t.keyIDs == nil {
			t.keyIDs = make(map[string]int32)
		}
		clear(t.keyIDs)
		defer clear(t.keyIDs) // its strings alias the record's buffers
		for i := range n {
			k := t.key.at(i)
			id, ok := t.keyIDs[k]
			if !ok {
				id = int32(len(t.keyIDs))
				t.keyIDs[k] = id
			}
			t.keyID[i] = id
		}
		t.nKeys = len(t.keyIDs)
		t.keyIDsMax = max(t.keyIDsMax, t.nKeys)
	}
	// A null key is the empty string, as otel-arrow reads it: one id.
	for i, id := range t.keyID {
		if id < 0 {
			t.keyID[i] = int32(t.nKeys)
		}
	}
	t.nKeys++
	if cap(t.used) < t.nKeys {
		t.used = make([]bool, t.nKeys)
		t.last = make([]int32, t.nKeys)
	}
	t.used, t.last = t.used[:t.nKeys], t.last[:t.nKeys]
	clear(t.used)
	return nil
}

// distinct reports whether a dictionary's strings are distinct (the
// builder's always are; one that is not is read by string, as the
// conversion reads it). One map insert per dictionary entry, in a map
// kept from batch to batch.
func (t *attrTable) distinct(dv *array.String) bool {
	if t.seen == nil {
		t.seen = make(map[string]struct{})
	}
	defer clear(t.seen)
	t.seenMax = max(t.seenMax, dv.Len())
	for i := range dv.Len() {
		s := dv.Value(i)
		if _, ok := t.seen[s]; ok {
			return false
		}
		t.seen[s] = struct{}{}
	}
	return true
}

// equal reports whether two values are equal as otel-arrow's parent id
// decoder compares them (pcommon's equality for scalars, a double's by
// ==; never for maps, slices or empty values).
func (v *scalar) equal(w *scalar) bool {
	if v.typ != w.typ {
		return false
	}
	switch v.typ {
	case vStr:
		return v.s == w.s
	case vInt, vBool:
		return v.u == w.u
	case vDouble:
		return math.Float64frombits(v.u) == math.Float64frombits(w.u)
	case vBytes:
		return bytes.Equal(v.bs, w.bs)
	}
	return false
}

// groups indexes the rows of a record by a parent id: the rows of a
// parent in record order. Its slices are reused from batch to batch.
type groups struct {
	n      int      // rows indexed; 0: none (no record)
	parent []uint32 // each row's parent id, decoded
	order  []int32  // the rows by parent, stable
	off    []int32  // dense: the rows of parent p are order[off[p]:off[p+1]]
	sorted []uint64 // sparse: parent<<32 | row, sorted
	dense  bool
	taken  []bool // by slot: the parents whose rows were moved (metrics)
}

// index groups the rows by parent, keeping the record's order within a
// parent.
func (t *groups) index(n int, maxP uint64) {
	t.n = n
	t.order = slices.Grow(t.order[:0], n)[:n]
	if maxP+2 <= maxDenseParents(n) {
		t.dense = true
		m := int(maxP) + 2
		t.off = slices.Grow(t.off[:0], m)[:m]
		clear(t.off)
		for _, p := range t.parent[:n] {
			t.off[p+1]++
		}
		for i := 1; i < m; i++ {
			t.off[i] += t.off[i-1]
		}
		// Fill with a cursor per parent: off[p] advances, then is
		// restored by shifting.
		for i, p := range t.parent[:n] {
			t.order[t.off[p]] = int32(i)
			t.off[p]++
		}
		copy(t.off[1:], t.off[:m-1])
		t.off[0] = 0
		return
	}
	t.dense = false
	t.sorted = slices.Grow(t.sorted[:0], n)[:n]
	for i, p := range t.parent[:n] {
		t.sorted[i] = uint64(p)<<32 | uint64(i)
	}
	slices.Sort(t.sorted)
	for i, s := range t.sorted {
		t.order[i] = int32(uint32(s))
	}
}

// slot returns a number of its own for parent p among 0..slots()-1, or -1
// when p has no rows (to mark a parent's rows as taken).
func (t *groups) slot(p uint32) int {
	if t.n == 0 {
		return -1
	}
	if t.dense {
		if uint64(p)+1 >= uint64(len(t.off)) || t.off[p] == t.off[p+1] {
			return -1
		}
		return int(p)
	}
	lo, found := slices.BinarySearchFunc(t.sorted, p, func(s uint64, p uint32) int {
		return cmp.Compare(uint32(s>>32), p)
	})
	if !found {
		return -1
	}
	return lo
}

// slots is the number of slots (see slot).
func (t *groups) slots() int {
	if t.dense {
		return len(t.off)
	}
	return t.n
}

// rows returns the rows of parent p, in record order.
func (t *groups) rows(p uint32) []int32 {
	if t.n == 0 {
		return nil
	}
	if t.dense {
		if uint64(p)+1 >= uint64(len(t.off)) {
			return nil
		}
		return t.order[t.off[p]:t.off[p+1]]
	}
	lo, _ := slices.BinarySearch(t.sorted, uint64(p)<<32)
	hi, _ := slices.BinarySearch(t.sorted, uint64(p+1)<<32)
	if p == math.MaxUint32 {
		hi = len(t.sorted)
	}
	return t.order[lo:hi]
}

// byDelta is otel-arrow's AttributesByDeltaID: the parent id runs from
// one call to the next.
func (t *attrTable) byDelta(delta uint32) []int32 {
	t.lastID = uint32((uint64(t.lastID) + uint64(delta)) & t.mask)
	return t.rows(t.lastID)
}

// appendAttrs writes the KeyValues of rows as field num, a key given
// twice keeping its first place and its last value (pcommon.Map's Put).
// It fails once the output passes limit.
func (t *attrTable) appendAttrs(b []byte, num int, rows []int32, limit int) ([]byte, error) {
	if len(rows) == 0 {
		return b, nil
	}
	dup := false
	for _, r := range rows {
		k := t.keyID[r]
		if t.used[k] {
			dup = true
		}
		t.used[k] = true
		t.last[k] = r
	}
	if !dup {
		for _, r := range rows {
			t.used[t.keyID[r]] = false
			b = t.appendKeyValue(b, num, int(r))
			if len(b) > limit {
				return b, errTooLarge{len(b), limit}
			}
		}
		return b, nil
	}
	// Duplicate keys: the first occurrence's place, the last one's value.
	for _, r := range rows {
		k := t.keyID[r]
		if !t.used[k] {
			continue
		}
		t.used[k] = false
		b = t.appendKeyValue(b, num, int(t.last[k]))
		if len(b) > limit {
			return b, errTooLarge{len(b), limit}
		}
	}
	return b, nil
}

// appendKeyValue writes row r as a KeyValue (key 1, value 2).
func (t *attrTable) appendKeyValue(b []byte, num int, r int) []byte {
	key := t.key.at(r)
	typ := t.typ.at(r)
	if typ == vMap || typ == vSlice {
		b, at := pbappend.OpenLen(b, num)
		b = pbappend.StringNonEmpty(b, 1, key)
		b = appendValue(b, 2, t.serV[int32(r)])
		return pbappend.CloseLen(b, at)
	}
	// A scalar: its sizes are known, so it is written in one pass.
	var v scalar
	switch typ {
	case vStr:
		v.s = t.str.at(r)
	case vInt:
		v.u = uint64(t.i64.at(r))
	case vDouble:
		v.u = math.Float64bits(t.f64.at(r))
	case vBool:
		if t.bl.at(r) {
			v.u = 1
		}
	case vBytes:
		v.bs = t.bin.at(r)
	default:
		// An empty or unknown type: an empty value (the conversion
		// ignores unknown types).
		typ = vEmpty
	}
	v.typ = typ
	vs := v.size()
	kv := 1 + pbappend.UvarintLen(uint64(vs)) + vs
	if key != "" {
		kv += 1 + pbappend.UvarintLen(uint64(len(key))) + len(key)
	}
	b = pbappend.Varint(pbappend.Tag(b, num, 2), uint64(kv))
	b = pbappend.StringNonEmpty(b, 1, key)
	b = pbappend.Varint(pbappend.Tag(b, 2, 2), uint64(vs))
	return v.append(b)
}

// scalar is a scalar AnyValue: its type (vStr, vInt, vDouble, vBool,
// vBytes; anything else is empty) and value (u: an int's or a double's
// bits, or a bool).
type scalar struct {
	typ uint8
	s   string
	bs  []byte
	u   uint64
}

// size is the AnyValue's encoded size (without its tag and length).
func (v *scalar) size() int {
	switch v.typ {
	case vStr:
		return 1 + pbappend.UvarintLen(uint64(len(v.s))) + len(v.s)
	case vInt:
		return 1 + pbappend.UvarintLen(v.u)
	case vDouble:
		return 9
	case vBool:
		return 2
	case vBytes:
		return 1 + pbappend.UvarintLen(uint64(len(v.bs))) + len(v.bs)
	}
	return 0
}

// append writes the AnyValue's fields (string 1, bool 2, int 3, double 4,
// bytes 7; a oneof: written even when zero).
func (v *scalar) append(b []byte) []byte {
	switch v.typ {
	case vStr:
		b = pbappend.StringField(b, 1, v.s)
	case vInt:
		b = pbappend.VarintField(b, 3, v.u)
	case vDouble:
		b = pbappend.Fixed64Field(b, 4, v.u)
	case vBool:
		b = pbappend.VarintField(b, 2, v.u)
	case vBytes:
		b = pbappend.BytesField(b, 7, v.bs)
	}
	return b
}

// appendValue writes a pcommon.Value (a map or slice attribute, decoded
// from CBOR) as AnyValue field num.
func appendValue(b []byte, num int, v pcommon.Value) []byte {
	b, at := pbappend.OpenLen(b, num)
	switch v.Type() {
	case pcommon.ValueTypeStr:
		b = pbappend.StringField(b, 1, v.Str())
	case pcommon.ValueTypeBool:
		u := uint64(0)
		if v.Bool() {
			u = 1
		}
		b = pbappend.VarintField(b, 2, u)
	case pcommon.ValueTypeInt:
		b = pbappend.VarintField(b, 3, uint64(v.Int()))
	case pcommon.ValueTypeDouble:
		b = pbappend.Fixed64Field(b, 4, math.Float64bits(v.Double()))
	case pcommon.ValueTypeSlice:
		var at2 int
		b, at2 = pbappend.OpenLen(b, 5)
		s := v.Slice()
		for i := range s.Len() {
			b = appendValue(b, 1, s.At(i))
		}
		b = pbappend.CloseLen(b, at2)
	case pcommon.ValueTypeMap:
		var at2 int
		b, at2 = pbappend.OpenLen(b, 6)
		v.Map().Range(func(k string, v pcommon.Value) bool {
			var at3 int
			b, at3 = pbappend.OpenLen(b, 1)
			b = pbappend.StringNonEmpty(b, 1, k)
			b = appendValue(b, 2, v)
			b = pbappend.CloseLen(b, at3)
			return true
		})
		b = pbappend.CloseLen(b, at2)
	case pcommon.ValueTypeBytes:
		b = pbappend.BytesField(b, 7, v.Bytes().AsRaw())
	}
	return pbappend.CloseLen(b, at)
}
