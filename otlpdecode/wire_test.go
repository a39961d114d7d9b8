package otlpdecode

import (
	"testing"

	"github.com/otlp-lite/otlp-lite/internal/pbtest"
	"github.com/otlp-lite/otlp-lite/otlppb"
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

// lenField is the length-delimited field num holding data, as read.
func lenField(t testing.TB, num int, data []byte) otlppb.Field {
	t.Helper()
	var f otlppb.Field
	if _, err := f.Read(pb{}.Msg(num, data)); err != nil {
		t.Fatal(err)
	}
	return f
}
