package stefreceiver

import (
	"reflect"
	"strings"
)

// dictMeter measures what a STEF reader's dictionaries hold.
//
// The library's reader (otelstef.MetricsReader, SpansReader, v0.1.1) keeps
// its dictionaries in unexported fields and says nothing of their size,
// yet they are what a stream makes us hold for its life: every new string,
// resource, scope or metric a writer sends stays until the writer restarts
// its dictionaries (a frame flagged RestartDictionaries) or the stream
// ends. A writer is told to keep them under Config.MaxDictBytes
// (capabilities), which a hostile one ignores. So the meter reads them
// with reflect: each dictionary is a slice that only grows between
// restarts, so only the entries added since the last measure are walked,
// and a slice shorter than last time was restarted and is measured anew.
//
// An entry's size is what it makes the heap hold: a string's bytes and
// header; a struct's own size and, deeply, the slices, strings and
// structs it points to (its attributes, their values), but not the
// modified-fields bookkeeping, whose parent pointers lead out of the entry.
// The measure errs high against the writer's own, shallow, count
// (pkg.SizeLimiter), which is what the limit must be: an upper bound.
//
// A reader whose layout the meter does not know (a newer library) makes
// newDictMeter return nil; TestDictMeterKnowsTheReaders keeps it known.
type dictMeter struct {
	dicts []meteredDict
	total int64
	// restarts counts the dictionaries found restarted.
	restarts int
}

type meteredDict struct {
	slice reflect.Value // the dictionary's entries
	seen  int           // entries measured
	bytes int64         // what they hold
}

// newDictMeter returns the meter of a *otelstef.MetricsReader or
// *otelstef.SpansReader, or nil if its dictionaries cannot be found.
func newDictMeter(reader any) *dictMeter {
	v := reflect.ValueOf(reader)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	state := v.Elem().FieldByName("state")
	if !state.IsValid() || state.Kind() != reflect.Struct {
		return nil
	}
	m := &dictMeter{}
	for i := range state.NumField() {
		f := state.Field(i)
		if f.Kind() != reflect.Struct || !strings.HasSuffix(f.Type().Name(), "DecoderDict") {
			continue
		}
		s := f.FieldByName("dict")
		if !s.IsValid() || s.Kind() != reflect.Slice {
			return nil
		}
		m.dicts = append(m.dicts, meteredDict{slice: s})
	}
	if len(m.dicts) == 0 {
		return nil
	}
	return m
}

// measure returns what the dictionaries hold now, walking only the entries
// added since the last call.
func (m *dictMeter) measure() int64 {
	for i := range m.dicts {
		d := &m.dicts[i]
		n := d.slice.Len()
		if n < d.seen {
			// Restarted (RestartDictionaries): measured anew.
			m.total -= d.bytes
			d.seen, d.bytes = 0, 0
			m.restarts++
		}
		if n == d.seen {
			continue
		}
		var added int64
		for j := d.seen; j < n; j++ {
			added += entrySize(d.slice.Index(j))
		}
		// The slice's own backing array, as it grew.
		added += int64(n-d.seen) * int64(d.slice.Type().Elem().Size())
		d.seen = n
		d.bytes += added
		m.total += added
	}
	return m.total
}

// entrySize is what a dictionary entry makes the heap hold beyond the
// slot it takes in the dictionary's slice.
func entrySize(v reflect.Value) int64 {
	return deepSize(v, 0)
}

// maxDepth bounds the walk: the otelstef values nest (an AnyValue holds
// arrays and key-value lists of AnyValues) only as deep as the reader
// decoded them, and the reader bounds its own recursion; this bound keeps
// the walk itself from being the thing a hostile value exhausts.
const maxDepth = 64

// deepSize is what v references beyond its own inline size.
func deepSize(v reflect.Value, depth int) int64 {
	if depth > maxDepth {
		return 0
	}
	switch v.Kind() {
	case reflect.String:
		return int64(v.Len())
	case reflect.Pointer:
		if v.IsNil() || isBookkeeping(v.Type().Elem()) {
			return 0
		}
		e := v.Elem()
		return int64(e.Type().Size()) + deepSize(e, depth+1)
	case reflect.Slice:
		if v.IsNil() {
			return 0
		}
		n := int64(v.Cap()) * int64(v.Type().Elem().Size())
		for i := range v.Len() {
			n += deepSize(v.Index(i), depth+1)
		}
		return n
	case reflect.Struct:
		if isBookkeeping(v.Type()) {
			return 0
		}
		var n int64
		for i := range v.NumField() {
			n += deepSize(v.Field(i), depth+1)
		}
		return n
	case reflect.Array:
		var n int64
		for i := range v.Len() {
			n += deepSize(v.Index(i), depth+1)
		}
		return n
	case reflect.Interface:
		if v.IsNil() {
			return 0
		}
		e := v.Elem()
		return int64(e.Type().Size()) + deepSize(e, depth+1)
	}
	return 0
}

// isBookkeeping reports the generated modified-fields trackers, whose
// parent pointers lead out of the entry being measured.
func isBookkeeping(t reflect.Type) bool {
	return strings.HasPrefix(t.Name(), "modifiedFields")
}
