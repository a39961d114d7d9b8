package otlpdecode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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

// addGoldenSeeds adds the repository's real payloads of a signal to the
// fuzz corpus, besides the seeds under testdata/fuzz/<FuzzName>.
func addGoldenSeeds(f *testing.F, prefix string) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "otlp", prefix+"*.pb"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no golden payloads for %s: %v", prefix, err)
	}
	for _, path := range files {
		if strings.Contains(path, "500x10") {
			continue // too large to mutate usefully
		}
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, false)
		f.Add(b, true)
	}
}

func FuzzCheckTraces(f *testing.F) {
	addGoldenSeeds(f, "traces")
	f.Fuzz(func(t *testing.T, src []byte, utf8 bool) {
		consistency(t, signalTraces, src, &Options{ValidateUTF8: utf8, MaxAnyValueDepth: 4})
	})
}

func FuzzCheckMetrics(f *testing.F) {
	addGoldenSeeds(f, "metrics")
	f.Fuzz(func(t *testing.T, src []byte, utf8 bool) {
		consistency(t, signalMetrics, src, &Options{ValidateUTF8: utf8, MaxAnyValueDepth: 4})
	})
}

func FuzzCheckLogs(f *testing.F) {
	addGoldenSeeds(f, "logs")
	f.Fuzz(func(t *testing.T, src []byte, utf8 bool) {
		consistency(t, signalLogs, src, &Options{ValidateUTF8: utf8, MaxAnyValueDepth: 4})
	})
}

// The Decode fuzz targets run the visitors alone, on input Check may
// refuse: iterators must report errors, never panic.

func FuzzDecodeTraces(f *testing.F) {
	addGoldenSeeds(f, "traces")
	var d TracesDecoder
	f.Fuzz(func(t *testing.T, src []byte, _ bool) {
		walkTraces(&d, src) //nolint:errcheck // only panics matter
	})
}

func FuzzDecodeMetrics(f *testing.F) {
	addGoldenSeeds(f, "metrics")
	var d MetricsDecoder
	f.Fuzz(func(t *testing.T, src []byte, _ bool) {
		walkMetrics(&d, src) //nolint:errcheck // only panics matter
	})
}

func FuzzDecodeLogs(f *testing.F) {
	addGoldenSeeds(f, "logs")
	var d LogsDecoder
	f.Fuzz(func(t *testing.T, src []byte, _ bool) {
		walkLogs(&d, src) //nolint:errcheck // only panics matter
	})
}
