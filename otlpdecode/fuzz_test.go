package otlpdecode

import (
	"testing"

	"github.com/otlp-lite/otlp-lite/internal/pbtest"
)

// The fuzz targets check that Check and AppendValid agree on every input
// (see consistency), with a Visitor too (visitedConsistency: the views of
// every item Check accepts read in full), and never panic; otlpview's fuzz targets hold its
// decoders to what Check accepts. Run each briefly, e.g.
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
		visitedConsistency(t, signalTraces, src, Options{ValidateUTF8: utf8, MaxAnyValueDepth: 4}, 3)
	})
}

func FuzzCheckMetrics(f *testing.F) {
	pbtest.GoldenSeeds(f, "metrics")
	f.Fuzz(func(t *testing.T, src []byte, utf8 bool) {
		consistency(t, signalMetrics, src, &Options{ValidateUTF8: utf8, MaxAnyValueDepth: 4})
		visitedConsistency(t, signalMetrics, src, Options{ValidateUTF8: utf8, MaxAnyValueDepth: 4}, 3)
	})
}

func FuzzCheckLogs(f *testing.F) {
	pbtest.GoldenSeeds(f, "logs")
	f.Fuzz(func(t *testing.T, src []byte, utf8 bool) {
		consistency(t, signalLogs, src, &Options{ValidateUTF8: utf8, MaxAnyValueDepth: 4})
		visitedConsistency(t, signalLogs, src, Options{ValidateUTF8: utf8, MaxAnyValueDepth: 4}, 3)
	})
}
