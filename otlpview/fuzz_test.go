package otlpview_test

import (
	"testing"

	"github.com/otlp-lite/otlp-lite/internal/pbtest"
	"github.com/otlp-lite/otlp-lite/internal/viewwalk"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
	. "github.com/otlp-lite/otlp-lite/otlpview"
)

// The fuzz targets run the decoders with every iterator walked on any
// input: iterators must report errors, never panic, and whatever
// otlpdecode's Check accepts must decode. Run each briefly, e.g.
//
//	go test -run '^$' -fuzz '^FuzzDecodeTraces$' -fuzztime 20s -fuzzminimizetime 1s
//
// (the golden seeds are kilobytes long, so the default one-minute
// minimisation of each new input would dominate a short run). The bool
// argument is unused: it keeps the seeds' format that of otlpdecode's
// targets.

func FuzzDecodeTraces(f *testing.F) {
	pbtest.GoldenSeeds(f, "traces")
	var d TracesDecoder
	f.Fuzz(func(t *testing.T, src []byte, _ bool) {
		_, _, err := viewwalk.Traces(&d, src)
		decodesWhatCheckAccepts(t, src, err, otlpdecode.CheckTraces)
	})
}

func FuzzDecodeMetrics(f *testing.F) {
	pbtest.GoldenSeeds(f, "metrics")
	var d MetricsDecoder
	f.Fuzz(func(t *testing.T, src []byte, _ bool) {
		_, err := viewwalk.Metrics(&d, src)
		decodesWhatCheckAccepts(t, src, err, otlpdecode.CheckMetrics)
	})
}

func FuzzDecodeLogs(f *testing.F) {
	pbtest.GoldenSeeds(f, "logs")
	var d LogsDecoder
	f.Fuzz(func(t *testing.T, src []byte, _ bool) {
		_, err := viewwalk.Logs(&d, src)
		decodesWhatCheckAccepts(t, src, err, otlpdecode.CheckLogs)
	})
}
