package stefreceiver

// maxSpares bounds what a Receiver keeps of ended streams for the next
// ones, of each kind (Receiver.decoders, Receiver.buffers): a stream's zstd
// decoder (StateCostZstd, its 8 MiB window allocated and cleared on a
// stream's first block) and its request buffer (up to MaxRequestBytes and
// a record, grown by doublings over a stream's first requests). Streams
// end and start together when clients rotate them (MaxStreamBytes,
// dictionaries) or reconnect: a client's next stream starts
// milliseconds after its last one ended, so a few spares serve the
// clients that rotate at once, and more would only be memory kept for
// streams that may never come. At most 4 decoders (36 MiB) and 4 buffers
// (about 18 MiB at the default MaxRequestBytes) are kept, each charged to
// the admission budget while it waits (ingest.Spares, whose contract
// they follow: dropped first when anyone finds the budget full).
const maxSpares = 4

// sparesHeld returns what the Receiver's spares are charged.
func (r *Receiver) sparesHeld() int64 {
	_, d := r.decoders.Held()
	_, b := r.buffers.Held()
	return d + b
}
