//go:build otelarrow

package arrowreceiver

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Column readers for the OTLP encoder. OTel-Arrow's schemas are adaptive:
// a column is absent when no row has a value, and may be plain or
// dictionary-encoded (its index widening from batch to batch), so each
// reader is resolved once per record from the column it finds and reads a
// row without allocating. A reader reads what otel-arrow's conversion
// (pkg/arrow from_record.go, from_array.go) reads: an absent column or a
// null row is the zero value; a column of another type is an error.

// errColumn refuses a column whose type OTel-Arrow does not write there.
type errColumn struct {
	name string
	typ  arrow.DataType
}

func (e errColumn) Error() string {
	return fmt.Sprintf("column %q is of type %v, which OTel-Arrow does not write there", e.name, e.typ)
}

// fields looks columns up by name in a record or a struct.
type fields struct {
	names []arrow.Field
	cols  []arrow.Array
}

func recordFields(r arrow.Record) fields {
	return fields{names: r.Schema().Fields(), cols: r.Columns()}
}

func structFields(s *array.Struct) fields {
	if s == nil {
		return fields{}
	}
	st := s.DataType().(*arrow.StructType)
	f := fields{names: st.Fields(), cols: make([]arrow.Array, s.NumField())}
	for i := range f.cols {
		f.cols[i] = s.Field(i)
	}
	return f
}

// get returns the column named name, nil when absent; two of that name
// are an error, as otel-arrow has it.
func (f fields) get(name string) (arrow.Array, error) {
	var found arrow.Array
	for i, fl := range f.names {
		if fl.Name == name {
			if found != nil {
				return nil, fmt.Errorf("two columns named %q", name)
			}
			found = f.cols[i]
		}
	}
	return found, nil
}

// A resolving helper: it reads a column and stores the first error.
type resolver struct {
	f   fields
	err error
}

func (r *resolver) col(name string) arrow.Array {
	a, err := r.f.get(name)
	if err != nil && r.err == nil {
		r.err = err
	}
	return a
}

func (r *resolver) fail(name string, a arrow.Array) {
	if r.err == nil {
		r.err = errColumn{name, a.DataType()}
	}
}

// dictIndex reads a dictionary array's indexes from their buffer (what
// Dictionary.GetValueIndex does, without its per-row type switch);
// validate has checked that the buffer holds them and that each is within
// the dictionary.
type dictIndex struct {
	d   *array.Dictionary
	u8  []uint8
	u16 []uint16
	u32 []uint32
	u64 []uint64
}

func newDictIndex(d *array.Dictionary) dictIndex {
	x := dictIndex{d: d}
	data := d.Data()
	bufs := data.Buffers()
	if len(bufs) < 2 || bufs[1] == nil {
		return x
	}
	raw := bufs[1].Bytes()
	off, n := data.Offset(), data.Len()
	switch d.DataType().(*arrow.DictionaryType).IndexType.ID() {
	case arrow.UINT8, arrow.INT8:
		x.u8 = raw[off : off+n]
	case arrow.UINT16, arrow.INT16:
		x.u16 = arrow.Uint16Traits.CastFromBytes(raw)[off : off+n]
	case arrow.UINT32, arrow.INT32:
		x.u32 = arrow.Uint32Traits.CastFromBytes(raw)[off : off+n]
	case arrow.UINT64, arrow.INT64:
		x.u64 = arrow.Uint64Traits.CastFromBytes(raw)[off : off+n]
	}
	return x
}

func (x *dictIndex) get(i int) int {
	switch {
	case x.u8 != nil:
		return int(x.u8[i])
	case x.u16 != nil:
		return int(x.u16[i])
	case x.u32 != nil:
		return int(x.u32[i])
	case x.u64 != nil:
		return int(x.u64[i])
	}
	return x.d.GetValueIndex(i)
}

// The column readers below are one small type per Arrow type, not one
// generic reader: arrow-go's arrays are pointers, which Go's generics
// share one instantiation for, so a generic reader would call each
// array's Value through a dictionary on every value the encoders read,
// where these inline it.

type u8Col struct{ a *array.Uint8 }

func (r *resolver) u8(name string) (c u8Col) {
	switch a := r.col(name).(type) {
	case nil:
	case *array.Uint8:
		c.a = a
	default:
		r.fail(name, a)
	}
	return
}

func (c u8Col) at(i int) uint8 {
	if c.a == nil || c.a.IsNull(i) {
		return 0
	}
	return c.a.Value(i)
}

type u16Col struct{ a *array.Uint16 }

func (r *resolver) u16(name string) (c u16Col) {
	switch a := r.col(name).(type) {
	case nil:
	case *array.Uint16:
		c.a = a
	default:
		r.fail(name, a)
	}
	return
}

func (c u16Col) at(i int) uint16 {
	if c.a == nil || c.a.IsNull(i) {
		return 0
	}
	return c.a.Value(i)
}

// valid reports whether row i has a value (a present, non-null column).
func (c u16Col) valid(i int) bool { return c.a != nil && c.a.IsValid(i) }

type u32Col struct {
	a    *array.Uint32
	dict *array.Dictionary
	ix   dictIndex
	dv   *array.Uint32
}

func (r *resolver) u32(name string) (c u32Col) {
	switch a := r.col(name).(type) {
	case nil:
	case *array.Uint32:
		c.a = a
	case *array.Dictionary:
		if dv, ok := a.Dictionary().(*array.Uint32); ok {
			c.dict, c.dv, c.ix = a, dv, newDictIndex(a)
		} else {
			r.fail(name, a)
		}
	default:
		r.fail(name, a)
	}
	return
}

func (c u32Col) at(i int) uint32 {
	if c.a != nil {
		if c.a.IsNull(i) {
			return 0
		}
		return c.a.Value(i)
	}
	if c.dict == nil || c.ix.d.IsNull(i) {
		return 0
	}
	return c.dv.Value(c.ix.get(i))
}

// valid reports whether row i has a value (nullable ids; plain only, as
// otel-arrow reads them).
func (c u32Col) valid(i int) bool { return c.a != nil && c.a.IsValid(i) }

// unsignedCol is a parent id column: any unsigned width, or a dictionary
// of uint32 (otel-arrow's UnsignedFromRecord).
type unsignedCol struct {
	u8   *array.Uint8
	u16  *array.Uint16
	u32  u32Col
	u64  *array.Uint64
	none bool
}

func (r *resolver) unsigned(name string) (c unsignedCol) {
	switch a := r.col(name).(type) {
	case nil:
		c.none = true
	case *array.Uint8:
		c.u8 = a
	case *array.Uint16:
		c.u16 = a
	case *array.Uint32:
		c.u32.a = a
	case *array.Uint64:
		c.u64 = a
	case *array.Dictionary:
		if dv, ok := a.Dictionary().(*array.Uint32); ok {
			c.u32.dict, c.u32.dv, c.u32.ix = a, dv, newDictIndex(a)
		} else {
			r.fail(name, a)
		}
	default:
		r.fail(name, a)
	}
	return
}

func (c *unsignedCol) at(i int) uint64 {
	switch {
	case c.u16 != nil:
		if c.u16.IsNull(i) {
			return 0
		}
		return uint64(c.u16.Value(i))
	case c.u8 != nil:
		if c.u8.IsNull(i) {
			return 0
		}
		return uint64(c.u8.Value(i))
	case c.u64 != nil:
		if c.u64.IsNull(i) {
			return 0
		}
		return c.u64.Value(i)
	case c.none:
		return 0
	}
	return uint64(c.u32.at(i))
}

type i32Col struct {
	a    *array.Int32
	dict *array.Dictionary
	ix   dictIndex
	dv   *array.Int32
}

func (r *resolver) i32(name string) (c i32Col) {
	switch a := r.col(name).(type) {
	case nil:
	case *array.Int32:
		c.a = a
	case *array.Dictionary:
		if dv, ok := a.Dictionary().(*array.Int32); ok {
			c.dict, c.dv, c.ix = a, dv, newDictIndex(a)
		} else {
			r.fail(name, a)
		}
	default:
		r.fail(name, a)
	}
	return
}

func (c i32Col) at(i int) int32 {
	if c.a != nil {
		if c.a.IsNull(i) {
			return 0
		}
		return c.a.Value(i)
	}
	if c.dict == nil || c.ix.d.IsNull(i) {
		return 0
	}
	return c.dv.Value(c.ix.get(i))
}

type i64Col struct {
	a    *array.Int64
	dict *array.Dictionary
	ix   dictIndex
	dv   *array.Int64
}

func (r *resolver) i64(name string) (c i64Col) {
	switch a := r.col(name).(type) {
	case nil:
	case *array.Int64:
		c.a = a
	case *array.Dictionary:
		if dv, ok := a.Dictionary().(*array.Int64); ok {
			c.dict, c.dv, c.ix = a, dv, newDictIndex(a)
		} else {
			r.fail(name, a)
		}
	default:
		r.fail(name, a)
	}
	return
}

func (c i64Col) at(i int) int64 {
	if c.a != nil {
		if c.a.IsNull(i) {
			return 0
		}
		return c.a.Value(i)
	}
	if c.dict == nil || c.ix.d.IsNull(i) {
		return 0
	}
	return c.dv.Value(c.ix.get(i))
}

type f64Col struct{ a *array.Float64 }

func (r *resolver) f64(name string) (c f64Col) {
	switch a := r.col(name).(type) {
	case nil:
	case *array.Float64:
		c.a = a
	default:
		r.fail(name, a)
	}
	return
}

func (c f64Col) at(i int) float64 {
	if c.a == nil || c.a.IsNull(i) {
		return 0
	}
	return c.a.Value(i)
}

type boolCol struct{ a *array.Boolean }

func (r *resolver) bool(name string) (c boolCol) {
	switch a := r.col(name).(type) {
	case nil:
	case *array.Boolean:
		c.a = a
	default:
		r.fail(name, a)
	}
	return
}

func (c boolCol) at(i int) bool {
	if c.a == nil || c.a.IsNull(i) {
		return false
	}
	return c.a.Value(i)
}

type timestampCol struct{ a *array.Timestamp }

func (r *resolver) timestamp(name string) (c timestampCol) {
	switch a := r.col(name).(type) {
	case nil:
	case *array.Timestamp:
		c.a = a
	default:
		r.fail(name, a)
	}
	return
}

func (c timestampCol) at(i int) int64 {
	if c.a == nil || c.a.IsNull(i) {
		return 0
	}
	return int64(c.a.Value(i))
}

type durationCol struct {
	a    *array.Duration
	dict *array.Dictionary
	ix   dictIndex
	dv   *array.Duration
}

func (r *resolver) duration(name string) (c durationCol) {
	switch a := r.col(name).(type) {
	case nil:
	case *array.Duration:
		c.a = a
	case *array.Dictionary:
		if dv, ok := a.Dictionary().(*array.Duration); ok {
			c.dict, c.dv, c.ix = a, dv, newDictIndex(a)
		} else {
			r.fail(name, a)
		}
	default:
		r.fail(name, a)
	}
	return
}

func (c durationCol) at(i int) int64 {
	if c.a != nil {
		if c.a.IsNull(i) {
			return 0
		}
		return int64(c.a.Value(i))
	}
	if c.dict == nil || c.ix.d.IsNull(i) {
		return 0
	}
	return int64(c.dv.Value(c.ix.get(i)))
}

// strCol reads a string or dictionary-of-strings column.
type strCol struct {
	a    *array.String
	dict *array.Dictionary
	ix   dictIndex
	dv   *array.String
}

func (r *resolver) str(name string) (c strCol) {
	switch a := r.col(name).(type) {
	case nil:
	case *array.String:
		c.a = a
	case *array.Dictionary:
		if dv, ok := a.Dictionary().(*array.String); ok {
			c.dict, c.dv, c.ix = a, dv, newDictIndex(a)
		} else {
			r.fail(name, a)
		}
	default:
		r.fail(name, a)
	}
	return
}

func (c *strCol) at(i int) string {
	if c.a != nil {
		if c.a.IsNull(i) {
			return ""
		}
		return c.a.Value(i)
	}
	if c.dict == nil || c.ix.d.IsNull(i) {
		return ""
	}
	return c.dv.Value(c.ix.get(i))
}

// binCol reads a binary or dictionary-of-binaries column.
type binCol struct {
	a    *array.Binary
	dict *array.Dictionary
	ix   dictIndex
	dv   *array.Binary
}

func (r *resolver) bin(name string) (c binCol) {
	switch a := r.col(name).(type) {
	case nil:
	case *array.Binary:
		c.a = a
	case *array.Dictionary:
		if dv, ok := a.Dictionary().(*array.Binary); ok {
			c.dict, c.dv, c.ix = a, dv, newDictIndex(a)
		} else {
			r.fail(name, a)
		}
	default:
		r.fail(name, a)
	}
	return
}

// at returns nil for an absent or null value.
func (c *binCol) at(i int) []byte {
	if c.a != nil {
		if c.a.IsNull(i) {
			return nil
		}
		return c.a.Value(i)
	}
	if c.dict == nil || c.ix.d.IsNull(i) {
		return nil
	}
	return c.dv.Value(c.ix.get(i))
}

// fsbCol reads a fixed-size binary or dictionary of them (ids).
type fsbCol struct {
	a    *array.FixedSizeBinary
	dict *array.Dictionary
	ix   dictIndex
	dv   *array.FixedSizeBinary
}

func (r *resolver) fsb(name string) (c fsbCol) {
	switch a := r.col(name).(type) {
	case nil:
	case *array.FixedSizeBinary:
		c.a = a
	case *array.Dictionary:
		if dv, ok := a.Dictionary().(*array.FixedSizeBinary); ok {
			c.dict, c.dv, c.ix = a, dv, newDictIndex(a)
		} else {
			r.fail(name, a)
		}
	default:
		r.fail(name, a)
	}
	return
}

// at returns nil for an absent or null value.
func (c *fsbCol) at(i int) []byte {
	if c.a != nil {
		if c.a.IsNull(i) {
			return nil
		}
		return c.a.Value(i)
	}
	if c.dict == nil || c.ix.d.IsNull(i) {
		return nil
	}
	return c.dv.Value(c.ix.get(i))
}

// structCol is a struct column; a null row has no struct (nil).
type structCol struct{ a *array.Struct }

func (r *resolver) strct(name string) (c structCol) {
	switch a := r.col(name).(type) {
	case nil:
	case *array.Struct:
		c.a = a
	default:
		r.fail(name, a)
	}
	return
}

func (c structCol) present(i int) bool { return c.a != nil && c.a.IsValid(i) }

// has reports whether row i has a value (a present column, not null).
func (c i64Col) has(i int) bool {
	if c.a != nil {
		return c.a.IsValid(i)
	}
	return c.dict != nil && c.dict.IsValid(i)
}

// has reports whether row i has a value (a present column, not null).
func (c f64Col) has(i int) bool { return c.a != nil && c.a.IsValid(i) }

type u64Col struct{ a *array.Uint64 }

func (r *resolver) u64(name string) (c u64Col) {
	switch a := r.col(name).(type) {
	case nil:
	case *array.Uint64:
		c.a = a
	default:
		r.fail(name, a)
	}
	return
}

func (c u64Col) at(i int) uint64 {
	if c.a == nil || c.a.IsNull(i) {
		return 0
	}
	return c.a.Value(i)
}

// listCol is a list column; its values are read by the caller.
type listCol struct{ a *array.List }

func (r *resolver) list(name string) (c listCol) {
	switch a := r.col(name).(type) {
	case nil:
	case *array.List:
		c.a = a
	default:
		r.fail(name, a)
	}
	return
}

// span returns the values of row i (none when absent or null).
func (c listCol) span(i int) (start, end int) {
	if c.a == nil || c.a.IsNull(i) {
		return 0, 0
	}
	s, e := c.a.ValueOffsets(i)
	return int(s), int(e)
}
