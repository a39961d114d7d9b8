package otlpdecode

import (
	"github.com/VictoriaMetrics/easyproto"

	"github.com/otlp-lite/otlp-lite/otlppb"
)

// at prefixes err's position with name[idx] (idx < 0: just name), on the
// way out of the walk (otlppb.ErrorAt).
func at(err error, name string, idx int) error { return otlppb.ErrorAt(err, name, idx) }

// topLevel wraps an error that has no position yet.
func topLevel(err error) error { return otlppb.ErrorAt(err, "", -1) }

// ErrorPosition splits an error returned by a Check* or AppendValid*
// function into the position of the bad data inside the request and what
// is wrong there (otlppb.ErrorPosition, which locates the errors of every
// walk).
//
// Deprecated: use otlppb.ErrorPosition.
func ErrorPosition(err error) (field, description string, ok bool) {
	return otlppb.ErrorPosition(err)
}

// NextField is otlppb.NextField.
//
// Deprecated: use otlppb.NextField; kept until otlpjson reads with otlppb.
func NextField(fc *easyproto.FieldContext, src []byte) ([]byte, error) {
	return otlppb.NextField(fc, src)
}
