// Package dataset reads the real OpenTelemetry data of ../shared/datasets
// (its README gives the format) and cuts it into export requests, so that
// benchmarks run on data no one here tuned.
package dataset

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/VictoriaMetrics/easyproto"
	"github.com/klauspost/compress/zstd"
)

// Files are the datasets by signal, under the datasets directory.
var Files = map[string]string{
	"traces":  "hipstershop-oteltraces.zst",
	"metrics": "hipstershop-otelmetrics.zst",
}

// Dir returns the datasets directory: $OTLP_LITE_DATASETS, or the first
// shared/datasets found beside the working directory or a parent of it
// (the checkout's ../shared/datasets), or "" if there is none.
func Dir() string {
	if d := os.Getenv("OTLP_LITE_DATASETS"); d != "" {
		return d
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for d := wd; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(filepath.Join(d, "shared", "datasets")); err == nil && fi.IsDir() {
			return filepath.Join(d, "shared", "datasets")
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// Read returns the records of a dataset file: a zstd stream of records,
// each a 4-byte big-endian length and that many bytes of protobuf (an
// OTLP TracesData or MetricsData).
func Read(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d, err := zstd.NewReader(f)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	var out [][]byte
	for {
		var hdr [4]byte
		if _, err := io.ReadFull(d, hdr[:]); err != nil {
			if err == io.EOF {
				return out, nil
			}
			return nil, fmt.Errorf("cannot read %s: %w", filepath.Base(path), err)
		}
		n := binary.BigEndian.Uint32(hdr[:])
		if n > 1<<30 {
			return nil, fmt.Errorf("cannot read %s: a record of %d bytes", filepath.Base(path), n)
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(d, b); err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", filepath.Base(path), err)
		}
		out = append(out, b)
	}
}

// IsMetrics reports whether a dataset file holds metrics (by its name).
func IsMetrics(path string) bool { return strings.Contains(filepath.Base(path), "metrics") }

// Request is one export request cut from a dataset.
type Request struct {
	// Proto is an ExportTraceServiceRequest or ExportMetricsServiceRequest
	// (the same fields as TracesData and MetricsData).
	Proto []byte
	// Items is its spans or data points.
	Items int
}

// Cut splits TracesData or MetricsData messages (field 1: resources; a
// resource's field 2: scopes; a scope's field 2: spans or metrics) into
// export requests of about items items each (spans, or data points; a
// metric is not split), in order, each resource and scope repeated with
// its own fields in every request it spans. With byResource a request
// also ends with each resource, as an SDK sends one process's items.
func Cut(records [][]byte, metrics bool, items int, byResource bool) ([]Request, error) {
	var reqs []Request
	var cur []byte // the request being built
	count := 0
	var resHead, scopeHead []byte // a resource's and scope's other fields
	var leaves []byte             // the current scope's leaves in cur
	flushScope := func() {
		if len(leaves) == 0 {
			return
		}
		scope := append(append([]byte{}, scopeHead...), leaves...)
		res := append(append([]byte{}, resHead...), tag(2, scope)...)
		cur = append(cur, tag(1, res)...)
		leaves = nil
	}
	flushReq := func() {
		flushScope()
		if len(cur) > 0 {
			reqs = append(reqs, Request{Proto: cur, Items: count})
		}
		cur, count = nil, 0
	}
	var fc easyproto.FieldContext
	for _, rec := range records {
		for src := rec; len(src) > 0; {
			var err error
			if src, err = fc.NextField(src); err != nil {
				return nil, fmt.Errorf("cannot read resource: %w", err)
			}
			rb, ok := fc.MessageData()
			if fc.FieldNum != 1 || !ok {
				continue
			}
			if resHead, err = others(rb, 2); err != nil {
				return nil, err
			}
			for rs := rb; len(rs) > 0; {
				if rs, err = fc.NextField(rs); err != nil {
					return nil, fmt.Errorf("cannot read scope: %w", err)
				}
				sb, ok := fc.MessageData()
				if fc.FieldNum != 2 || !ok {
					continue
				}
				if scopeHead, err = others(sb, 2); err != nil {
					return nil, err
				}
				for ss := sb; len(ss) > 0; {
					if ss, err = fc.NextField(ss); err != nil {
						return nil, fmt.Errorf("cannot read item: %w", err)
					}
					leaf, ok := fc.MessageData()
					if fc.FieldNum != 2 || !ok {
						continue
					}
					n := 1
					if metrics {
						n = points(leaf)
					}
					leaves = append(leaves, tag(2, leaf)...)
					count += n
					if count >= items {
						flushReq()
					}
				}
				flushScope()
			}
			if byResource {
				flushReq()
			}
		}
	}
	flushReq()
	if len(reqs) == 0 {
		return nil, errors.New("the dataset has no items")
	}
	return reqs, nil
}

// others returns msg's fields other than number skip, as they are.
func others(msg []byte, skip uint32) ([]byte, error) {
	var out []byte
	var fc easyproto.FieldContext
	for src := msg; len(src) > 0; {
		rest, err := fc.NextField(src)
		if err != nil {
			return nil, err
		}
		if fc.FieldNum != skip {
			out = append(out, src[:len(src)-len(rest)]...)
		}
		src = rest
	}
	return out, nil
}

// points counts a Metric's data points: field 1 of its gauge (5), sum (7),
// histogram (9), exponential histogram (10) or summary (11).
func points(metric []byte) int {
	n := 0
	var fc, fd easyproto.FieldContext
	for src := metric; len(src) > 0; {
		src, _ = fc.NextField(src)
		switch fc.FieldNum {
		case 5, 7, 9, 10, 11:
			d, _ := fc.MessageData()
			for s := d; len(s) > 0; {
				s, _ = fd.NextField(s)
				if fd.FieldNum == 1 {
					n++
				}
			}
		}
	}
	return max(n, 1)
}

func tag(field uint64, b []byte) []byte {
	out := binary.AppendUvarint(nil, field<<3|2)
	out = binary.AppendUvarint(out, uint64(len(b)))
	return append(out, b...)
}

// Cutting is one way of cutting a dataset into requests (Cut's items and
// byResource), named for the tables.
type Cutting struct {
	Name       string
	Items      int
	ByResource bool
}

// Cuttings are the two request shapes the wirebytes and streamcpu
// tables report, in this order: as an SDK sends them (traces: one
// resource's spans, at most 512, the batch span processor's max export
// batch; metrics: one resource's metrics, every point of an export
// interval, as a periodic reader sends them) and as a Collector's batch
// processor sends them (8,192 items, across resources).
func Cuttings(metrics bool) []Cutting {
	cuts := []Cutting{{"SDK", 512, true}, {"batch processor", 8192, false}}
	if metrics {
		cuts[0] = Cutting{"SDK", 1 << 30, true}
	}
	return cuts
}

// Half returns the requests of one half of a cutting, in order: "all",
// "first" (tune on it) or "second" (report on it: data not tuned on).
func Half(reqs []Request, half string) ([]Request, error) {
	switch half {
	case "first":
		return reqs[:len(reqs)/2], nil
	case "second":
		return reqs[len(reqs)/2:], nil
	case "all":
		return reqs, nil
	}
	return nil, fmt.Errorf("-half %q: want all, first or second", half)
}

// HalfName describes a Half for a table's heading.
func HalfName(half string) string {
	switch half {
	case "first":
		return "the first half of each cutting, in order (tuned on)"
	case "second":
		return "the second half of each cutting, in order (not tuned on)"
	}
	return "all"
}
