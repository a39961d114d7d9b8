package otlpdecode

import (
	"testing"

	"github.com/otlp-lite/otlp-lite/otlpdecode/internal/pbtest"
)

// The fuzz targets check that Check, AppendValid and Decode agree on every
// input (see consistency) and never panic. Run each briefly, e.g.
//
//	go test -run '^$' -fuzz '^FuzzCheckTraces$' -fuzztime 20s -fuzzminimizetime 1s
//
// (the golden seeds are kilobytes long, so the default one-minute
// minimisation of each new input would dominate a short run).
//
// The Check targets set MaxAnyValueDepth to 4: the default limit (128
// levels) is out of reach of the small inputs the fuzzer makes, and the
// error path of the limit must be explored too. TestMaxAnyValueDepth
// covers the default and the ceiling.

func FuzzCheckTraces(f *testing.F) {
	pbtest.GoldenSeeds(f, "traces")
	f.Fuzz(func(t *testing.T, src []byte, utf8 bool) {
		consistency(t, signalTraces, src, &Options{ValidateUTF8: utf8, MaxAnyValueDepth: 4})
	})
}

func FuzzCheckMetrics(f *testing.F) {
	pbtest.GoldenSeeds(f, "metrics")
	f.Fuzz(func(t *testing.T, src []byte, utf8 bool) {
		consistency(t, signalMetrics, src, &Options{ValidateUTF8: utf8, MaxAnyValueDepth: 4})
	})
}

func FuzzCheckLogs(f *testing.F) {
	pbtest.GoldenSeeds(f, "logs")
	f.Fuzz(func(t *testing.T, src []byte, utf8 bool) {
		consistency(t, signalLogs, src, &Options{ValidateUTF8: utf8, MaxAnyValueDepth: 4})
	})
}

// The Decode fuzz targets run the visitors alone, on input Check may
// refuse: iterators must report errors, never panic.

func FuzzDecodeTraces(f *testing.F) {
	pbtest.GoldenSeeds(f, "traces")
	var d TracesDecoder
	f.Fuzz(func(t *testing.T, src []byte, _ bool) {
		walkTraces(&d, src) //nolint:errcheck // only panics matter
	})
}

func FuzzDecodeMetrics(f *testing.F) {
	pbtest.GoldenSeeds(f, "metrics")
	var d MetricsDecoder
	f.Fuzz(func(t *testing.T, src []byte, _ bool) {
		walkMetrics(&d, src) //nolint:errcheck // only panics matter
	})
}

func FuzzDecodeLogs(f *testing.F) {
	pbtest.GoldenSeeds(f, "logs")
	var d LogsDecoder
	f.Fuzz(func(t *testing.T, src []byte, _ bool) {
		walkLogs(&d, src) //nolint:errcheck // only panics matter
	})
}
