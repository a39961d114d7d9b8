package otlpdecode

import (
	"github.com/otlp-lite/otlp-lite/otlpdecode/internal/pbtest"
)

// The tests write requests with pbtest's builders; these short names keep
// the test tables readable.
type pb = pbtest.PB

var (
	ids     = pbtest.IDs
	strAttr = pbtest.StrAttr
	intAttr = pbtest.IntAttr
	span    = pbtest.Span
	request = pbtest.Request
	golden  = pbtest.Golden
)
