package otlpcolumns

// The series table: the attribute runs of data points (node.series) that
// the stream has sent, in the order sent, so that a run sent again (the
// same series in the next request) costs a reference, usually to the
// series after the previous reference (a zero in its column). Encoder and
// decoder add the same runs in the same order, so their tables agree;
// a message sent untransformed adds nothing (the encoder rolls back what
// the failed walk added).

// maxSeriesBytes and maxSeries bound a table: what the decoder holds for
// the stream's life (in DecoderCost). 1 MiB holds the attribute runs of
// the demo data's series and of the spans that repeat theirs (512 KiB
// lost 0.5 % of the bytes on traces, 2 MiB gained nothing); a full table
// adds nothing more (older series keep their ids; new ones are sent in
// full).
const (
	maxSeriesBytes = 1 << 20
	maxSeries      = 1 << 16
)

// seriesRef marks a reference to a run of a node's first series field in
// the structure, seriesRef+8 to its second: tags of field 0 and 1 with wire
// type 7, which no message has.
const seriesRef = 0x07

// markerIndex returns which series field a structure byte refers to, or
// -1.
func markerIndex(b byte) int {
	switch b {
	case seriesRef:
		return 0
	case seriesRef + 8:
		return 1
	}
	return -1
}

// lastValue returns the bytes of the last field of a run (seriesRun's):
// what the field's value would have set (node.byCtx's bucket).
func lastValue(run []byte) []byte {
	var v []byte
	for len(run) > 1 {
		l, m := uvarint(run[1:])
		if m <= 0 || l > uint64(len(run)-1-m) {
			break
		}
		v = run[1+m : 1+m+int(l)]
		run = run[1+m+int(l):]
	}
	return v
}

type seriesTable struct {
	arena []byte
	offs  []int32 // each run's start in arena; the last ends at len(arena)
	// buckets holds each run's keyBucket of its last value (lastValue),
	// found once as the run is added: a reference to a run of names then
	// sets the bucket without walking the run again (a run of 2-byte
	// empty names referenced to the limit cost 30 times its copy:
	// BenchmarkDecodeNameReferences).
	buckets []uint8
	// marks holds each run's mark, mark what the decoder's message
	// so far makes of a run added now (Decoder.Vouched): 0 nothing to
	// say, up to markOff-1 the deepest AnyValue container it walked,
	// markOff not vouched for. A message that copies a run takes its
	// mark, so a run written without the generated walks' rules is not
	// vouched for in any message. (The encoder's are all 0.)
	marks []uint8
	mark  uint8
	// marked: a run with a mark was added (most streams have none: a
	// reference then does not read its mark).
	marked bool
	// last is the id each series column referenced last, plus one (0
	// at first): a reference is written from the one after it, so
	// each kind of series (resources, data points, spans) follows its
	// own order.
	last [maxCols]int32
	// index (the encoder's) maps a run to its id.
	index map[string]int32
}

func (t *seriesTable) get(id int) []byte {
	end := len(t.arena)
	if id+1 < len(t.offs) {
		end = int(t.offs[id+1])
	}
	return t.arena[t.offs[id]:end]
}

// add appends a run, if the table has room; it reports whether it did.
func (t *seriesTable) add(run []byte) bool {
	if len(t.offs) >= maxSeries || len(t.arena)+len(run) > maxSeriesBytes {
		return false
	}
	// Grown by doubling, never past the bounds (DecoderCost counts them).
	if len(t.offs) == cap(t.offs) {
		n := min(maxSeries, max(64, 2*cap(t.offs)))
		t.offs = append(make([]int32, 0, n), t.offs...)
		t.buckets = append(make([]uint8, 0, n), t.buckets...)
		t.marks = append(make([]uint8, 0, n), t.marks...)
	}
	if n := len(t.arena) + len(run); n > cap(t.arena) {
		t.arena = append(make([]byte, 0, min(maxSeriesBytes, max(n, 2*cap(t.arena)))), t.arena...)
	}
	t.offs = append(t.offs, int32(len(t.arena)))
	t.buckets = append(t.buckets, keyBucket(lastValue(run)))
	t.marks = append(t.marks, t.mark)
	t.marked = t.marked || t.mark != 0
	t.arena = append(t.arena, run...)
	if t.index != nil {
		t.index[string(run)] = int32(len(t.offs) - 1)
	}
	return true
}

// truncate drops the runs from id n on and restores the last references
// (the encoder's roll back).
func (t *seriesTable) truncate(n int, last *[maxCols]int32) {
	for id := n; id < len(t.offs); id++ {
		delete(t.index, string(t.get(id)))
	}
	if n < len(t.offs) {
		t.arena = t.arena[:t.offs[n]]
		t.offs, t.buckets, t.marks = t.offs[:n], t.buckets[:n], t.marks[:n]
	}
	t.last = *last
}

// seriesRun returns the length of the run of fields num (length-delimited,
// their tag one byte, as the decoder finds runs) at the start of msg: 0
// when msg does not start with one.
func seriesRun(msg []byte, num uint8) int {
	n := 0
	for n < len(msg) && msg[n] == num<<3|2 {
		l, m := uvarint(msg[n+1:])
		if m <= 0 || l > uint64(len(msg)-n-1-m) {
			break
		}
		n += 1 + m + int(l)
	}
	return n
}
