package kafkasource

import (
	"errors"
	"sync/atomic"

	"github.com/VictoriaMetrics/metrics"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/otlp-lite/otlp-lite/internal/kafkaconn"
)

// Decompression of fetched record batches, bounded twice.
//
// A compressed batch is decompressed whole, and every batch of a fetch
// response is decompressed before any of its records reaches Run. Whoever
// can write to a topic chooses what its batches decompress to: zstd turns
// a few kilobytes into gigabytes. franz-go bounds one batch (1 GiB by
// default, kgo.MaxDecompressBatchBytes) but not their sum: a 16 MiB fetch
// of 2 KiB batches that each decompress to just under the bound would
// hold thousands of times the bound. boundedDecompressor replaces
// franz-go's decompressor to bound both:
//
//   - one batch at maxBatch: a batch over it is refused with
//     kgo.ErrMaxDecompress, which stops its partition; Run skips the
//     batch (consume_skip.go);
//   - the decompressed bytes held at budget: past it, a batch is refused
//     with errDecompressBudget, which franz-go treats as the end of the
//     response (the batch is fetched again later; nothing is skipped), or,
//     for a response's first batch, as an error of the fetch, retried.
//     Run calls released with the records it has stored: their keys,
//     values and headers, a little less than the batches they came from
//     (record framing, records of aborted transactions), and drained once
//     it has stored every record fetched, which starts the count again.
//
// So the decompressed bytes held are at most about budget + maxBatch, plus
// as much again if a response was being decompressed when drained reset
// the count.
//
// A batch that does not decompress at all (its codec's data is corrupt:
// the batch's CRC held, so its producer wrote it so) is refused like one
// too large, with an error that wraps kgo.ErrMaxDecompress: franz-go
// otherwise keeps such an error on the partition and fetches the batch
// again for ever ("the client cannot progress"), so one corrupt batch,
// written by anyone who may produce to the topic, would stop its partition
// for good. Run skips it (consume_skip.go) and it is counted in
// otlplite_kafka_consume_corrupt_batches_total. Decompression is
// deterministic: fetching the batch again cannot help.
type boundedDecompressor struct {
	maxBatch  int
	budget    int64
	held      atomic.Int64
	throttled *metrics.Counter
	corrupt   *metrics.Counter
	dec       *kafkaconn.BatchDecompressor
}

// errDecompressBudget refuses a batch while the decompressed batches held
// reach the budget.
var errDecompressBudget = errors.New("the decompressed record batches held reach the consumer's budget; the batch is fetched again once the records before it are stored")

// errCorruptBatch refuses a batch whose compressed records do not
// decompress. It wraps kgo.ErrMaxDecompress so that franz-go reports the
// batch's offsets (kgo.ErrDecompressTooLarge) and Run skips it.
type errCorruptBatch struct{ err error }

func (e *errCorruptBatch) Error() string   { return e.err.Error() + " (the batch is skipped)" }
func (e *errCorruptBatch) Unwrap() []error { return []error{e.err, kgo.ErrMaxDecompress} }

// errBatchTooLarge refuses a batch over maxBatch (wrapping
// kafkaconn.ErrBatchTooLarge). It wraps kgo.ErrMaxDecompress so that
// franz-go reports the batch's offsets and Run skips it.
type errBatchTooLarge struct{ err error }

func (e *errBatchTooLarge) Error() string   { return e.err.Error() }
func (e *errBatchTooLarge) Unwrap() []error { return []error{e.err, kgo.ErrMaxDecompress} }

func newBoundedDecompressor(maxBatch int, budget int64, throttled, corrupt *metrics.Counter) *boundedDecompressor {
	return &boundedDecompressor{maxBatch: maxBatch, budget: budget, throttled: throttled, corrupt: corrupt,
		dec: kafkaconn.NewBatchDecompressor(maxBatch)}
}

// Decompress implements kgo.Decompressor.
func (d *boundedDecompressor) Decompress(src []byte, codec kgo.CompressionCodecType) ([]byte, error) {
	if codec == kgo.CodecNone {
		return src, nil
	}
	if d.held.Load() >= d.budget {
		d.throttled.Inc()
		return nil, errDecompressBudget
	}
	out, err := d.dec.Append(nil, src, codec)
	if err != nil {
		if errors.Is(err, kafkaconn.ErrBatchTooLarge) {
			return nil, &errBatchTooLarge{err}
		}
		d.corrupt.Inc()
		return nil, &errCorruptBatch{err}
	}
	d.held.Add(int64(len(out)))
	return out, nil
}

// drained tells the decompressor that no record it decompressed is held
// any more: Run stored every record fetched and none is buffered.
func (d *boundedDecompressor) drained() { d.held.Store(0) }

// released tells the decompressor that recs are stored: what they hold of
// compressed batches is no longer held. The count never goes below zero
// (drained may have reset it meanwhile).
func (d *boundedDecompressor) released(recs []*kgo.Record) {
	var n int64
	for _, r := range recs {
		if r.Attrs.CompressionType() == 0 {
			continue
		}
		n += int64(len(r.Key) + len(r.Value))
		for _, h := range r.Headers {
			n += int64(len(h.Key) + len(h.Value))
		}
	}
	for {
		held := d.held.Load()
		if d.held.CompareAndSwap(held, max(held-n, 0)) {
			return
		}
	}
}
