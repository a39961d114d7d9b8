// Package visittest holds an otlpdecode.Visitor to its lifetime contract,
// for the tests of the storage engines that embed the receiver: the views
// a visitor gets alias the request's buffer, which the receiver reuses
// once Export returns, so an engine must copy what it keeps.
package visittest

import (
	"testing"

	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
)

// Poison is the byte Check overwrites the request with after the visit,
// as the receiver's pool reuses the buffer for the next request.
const Poison = 0xa5

// Check runs the visited validation of the request src of signal sig
// (opts may be nil) with visitor v on a private copy of src, then
// overwrites that copy with Poison and returns the Result. A visitor that
// kept a view, or a string or byte slice read from one, instead of a copy,
// now holds poison: compare what the engine stored with what src holds
// after Check returns. Run the test with -race: an engine that hands views
// to another goroutine without waiting for it races with the poisoning.
func Check(tb testing.TB, sig otlp.Signal, src []byte, opts *otlpdecode.Options, v *otlpdecode.Visitor) otlpdecode.Result {
	tb.Helper()
	buf := append([]byte(nil), src...)
	o := otlpdecode.Options{}
	if opts != nil {
		o = *opts
	}
	o.Visit = &otlpdecode.Visit{Visitor: v}
	var res otlpdecode.Result
	var err error
	switch sig {
	case otlp.Traces:
		res, err = otlpdecode.CheckTraces(buf, &o)
	case otlp.Metrics:
		res, err = otlpdecode.CheckMetrics(buf, &o)
	case otlp.Logs:
		res, err = otlpdecode.CheckLogs(buf, &o)
	case otlp.Profiles:
		res, err = otlpdecode.CheckProfiles(buf, &o)
	default:
		tb.Fatalf("visittest: no signal %v", sig)
	}
	if err != nil {
		tb.Fatalf("visittest: %v", err)
	}
	for i := range buf {
		buf[i] = Poison
	}
	return res
}
