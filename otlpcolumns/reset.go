package otlpcolumns

// Reset makes d a decoder for a new stream of its signal, indistinguishable
// from what NewDecoder returns (TestDecoderResetSame, FuzzResetSame), but
// keeping its memory: the series table's arena and indices, the reference
// column's index, the start times and kBack positions, grown over the last
// stream to what the next one will likely need again (a new decoder
// allocates them anew, by doublings: most of a stream's setup garbage, up
// to DecoderCost). Their content is cleared to their capacity (what a
// message cut them back from too), not only cut to nothing: a
// spare decoder is shared by every client (handler's spares), and nothing
// of one client's stream (its attribute runs, ids and times) may stay
// behind for the next, even unreachable. A decoder reset after an error
// decodes again. Reset is not safe for concurrent use with Decode.
func (d *Decoder) Reset() {
	t := &d.sets
	clear(t.arena[:cap(t.arena)])
	clear(t.offs[:cap(t.offs)])
	clear(t.buckets[:cap(t.buckets)])
	clear(t.marks[:cap(t.marks)])
	clear(d.offs[:cap(d.offs)])
	clear(d.loffs[:cap(d.loffs)])
	clear(d.starts[:cap(d.starts)])
	clear(d.traceStarts[:cap(d.traceStarts)])
	clear(d.childStart[:cap(d.childStart)])
	clear(d.backs[:cap(d.backs)])
	clear(d.backLen[:cap(d.backLen)])
	*d = Decoder{
		s:           d.s,
		offs:        d.offs[:0],
		loffs:       d.loffs[:0],
		starts:      d.starts[:0],
		traceStarts: d.traceStarts[:0],
		childStart:  d.childStart[:0],
		backs:       d.backs[:0],
		backLen:     d.backLen[:0],
		sets: seriesTable{
			arena:   t.arena[:0],
			offs:    t.offs[:0],
			buckets: t.buckets[:0],
			marks:   t.marks[:0],
		},
	}
}
