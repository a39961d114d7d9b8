package otlppb

import (
	"errors"
	"fmt"
	"strings"
)

// posError is a decoding error and the position, inside the request, of the
// message that could not be decoded. Positions are prepended on the way out
// of the recursion, so the happy path never formats anything.
type posError struct {
	path  string
	elems int  // elements in path
	cut   bool // inner elements were dropped (see maxPathElems)
	err   error
}

// maxPathElems caps the elements a posError keeps: the outermost ones,
// which locate the item (the deepest envelope, resource_metrics down to an
// exemplar's filtered attribute value, has 9). Without the cap, an error
// from AnyValue nested to the depth limit would name every level, and
// building that path one level at a time would cost time and memory
// quadratic in the depth.
const maxPathElems = 16

func (e *posError) Error() string {
	if e.path == "" {
		return "cannot decode request: " + e.err.Error()
	}
	if e.cut {
		return "cannot decode " + e.path + "...: " + e.err.Error()
	}
	return "cannot decode " + e.path + ": " + e.err.Error()
}

func (e *posError) Unwrap() error { return e.err }

// at prefixes err's position with name[idx] (idx < 0: just name).
func at(err error, name string, idx int) error {
	var elem string
	if idx >= 0 {
		elem = fmt.Sprintf("%s[%d]", name, idx)
	} else {
		elem = name
	}
	if pe, ok := err.(*posError); ok {
		switch {
		case pe.path == "":
			pe.path = elem
		case pe.elems == maxPathElems:
			// Drop the innermost element; names hold no dots.
			pe.path = elem + "." + pe.path[:strings.LastIndexByte(pe.path, '.')]
			pe.cut = true
			return pe
		default:
			pe.path = elem + "." + pe.path
		}
		pe.elems++
		return pe
	}
	return &posError{path: elem, elems: 1, err: err}
}

// topLevel wraps an error that has no position yet.
func topLevel(err error) error {
	if _, ok := err.(*posError); ok {
		return err
	}
	return &posError{err: err}
}

// ErrorAt locates err in element idx of the repeated field name (idx < 0:
// in the singular field name) of the message being decoded, for every walk
// that decodes OTLP requests (otlpdecode's checks, otlpview): each
// enclosing message adds its own field on the way out, the request itself
// with name "", and ErrorPosition then splits the result. Call it on the
// error path only: it formats the position.
func ErrorAt(err error, name string, idx int) error {
	if name == "" {
		return topLevel(err)
	}
	return at(err, name, idx)
}

// ErrorPosition splits an error located with ErrorAt (an error returned
// by otlpdecode's Check* or AppendValid* functions, or by otlpview's
// decoders and iterators) into the position of
// the bad data inside the request (e.g.
// "resource_spans[0].scope_spans[0].spans[5].attributes[3]", with "..."
// appended when inner levels were cut) and what is wrong there. ok is
// false for errors that carry no position. The handler sends both as a
// google.rpc.BadRequest field violation.
func ErrorPosition(err error) (field, description string, ok bool) {
	pe, isPos := errors.AsType[*posError](err)
	if !isPos || pe.path == "" {
		return "", "", false
	}
	field = pe.path
	if pe.cut {
		field += "..."
	}
	return field, pe.err.Error(), true
}
