// Package dataset reads the benchmark datasets (../shared/datasets: a
// zstd stream of records, each a 4-byte big-endian length and a
// TracesData or MetricsData message) and cuts them into export requests
// as an SDK or a batch processor sends them, in order, for the commands
// that compare wire formats (streamzstd, wirebytes).
package dataset

import (
	"encoding/binary"
	"io"
	"log"
	"os"

	"github.com/VictoriaMetrics/easyproto"
	"github.com/klauspost/compress/zstd"
)

// ReadRecords returns the records of a dataset file.
func ReadRecords(path string) [][]byte {
	f, err := os.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	d, err := zstd.NewReader(f)
	if err != nil {
		log.Fatal(err)
	}
	var out [][]byte
	for {
		var hdr [4]byte
		if _, err := io.ReadFull(d, hdr[:]); err != nil {
			if err == io.EOF {
				return out
			}
			log.Fatal(err)
		}
		b := make([]byte, binary.BigEndian.Uint32(hdr[:]))
		if _, err := io.ReadFull(d, b); err != nil {
			log.Fatal(err)
		}
		out = append(out, b)
	}
}

// Cut splits TracesData or MetricsData messages (field 1: resources; a
// resource's field 2: scopes; a scope's field 2: spans or metrics) into
// export requests (the same fields) of about items items (spans, or data
// points with whole metrics at a time), in order; with byResource a
// request also ends at the end of each resource, as an SDK sends one
// process's items. It returns the requests and the number of items.
func Cut(records [][]byte, metrics bool, items int, byResource bool) ([][]byte, int) {
	var reqs [][]byte
	var cur []byte // the request being built
	count, total := 0, 0
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
			reqs = append(reqs, cur)
		}
		cur, count = nil, 0
	}
	var fc easyproto.FieldContext
	for _, rec := range records {
		for src := rec; len(src) > 0; {
			var err error
			if src, err = fc.NextField(src); err != nil {
				log.Fatal(err)
			}
			rb, ok := fc.MessageData()
			if fc.FieldNum != 1 || !ok {
				continue
			}
			resHead = others(rb, 2)
			for rs := rb; len(rs) > 0; {
				rs, _ = fc.NextField(rs)
				sb, ok := fc.MessageData()
				if fc.FieldNum != 2 || !ok {
					continue
				}
				scopeHead = others(sb, 2)
				for ss := sb; len(ss) > 0; {
					ss, _ = fc.NextField(ss)
					leaf, ok := fc.MessageData()
					if fc.FieldNum != 2 || !ok {
						continue
					}
					n := 1
					if metrics {
						n = Points(leaf)
					}
					leaves = append(leaves, tag(2, leaf)...)
					count += n
					total += n
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
	return reqs, total
}

// others returns msg's fields other than number skip, as they are.
func others(msg []byte, skip uint32) []byte {
	var out []byte
	var fc easyproto.FieldContext
	for src := msg; len(src) > 0; {
		rest, err := fc.NextField(src)
		if err != nil {
			log.Fatal(err)
		}
		if fc.FieldNum != skip {
			out = append(out, src[:len(src)-len(rest)]...)
		}
		src = rest
	}
	return out
}

// Points counts a Metric's data points: field 1 of its gauge (5), sum (7),
// histogram (9), exponential histogram (10) or summary (11).
func Points(metric []byte) int {
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
