package otlpdecode

import "github.com/otlp-lite/otlp-lite/otlppb"

// at prefixes err's position with name[idx] (idx < 0: just name), on the
// way out of the walk (otlppb.ErrorAt).
func at(err error, name string, idx int) error { return otlppb.ErrorAt(err, name, idx) }

// topLevel wraps an error that has no position yet.
func topLevel(err error) error { return otlppb.ErrorAt(err, "", -1) }
