//go:build otelarrow

package arrowreceiver

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	arrowpb "github.com/open-telemetry/otel-arrow/go/api/experimental/arrow/v1"
	common "github.com/open-telemetry/otel-arrow/go/pkg/otel/common/arrow"
	"github.com/open-telemetry/otel-arrow/go/pkg/record_message"

	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// decoder is one stream's Arrow state: an IPC reader per payload type
// (keyed by schema id, as otel-arrow's arrow_record.Consumer keys them,
// a new schema id replacing the reader of its type), reading with the
// stream's budgetAllocator. arrow_record.Consumer makes its own allocator;
// its Consume loop is repeated here (the same reader options) so that the
// allocator is ours, the IPC framing is checked first (checkIPC) and the
// rows are bounded before they are read. The records are then written as
// OTLP protobuf by our encoders (one per signal), which read what the
// Consumer's TracesFrom/MetricsFrom/LogsFrom read, without pdata.
type decoder struct {
	alloc   *budgetAllocator
	readers map[string]*ipcStream
	recs    []*record_message.RecordMessage
	traces  tracesEncoder
	logs    logsEncoder
	metrics metricsEncoder
	arecs   []arrow.Record
	atypes  []arrowpb.ArrowPayloadType
	msgs    []ipcMsg
	maxRows int64
	maxOTLP int
}

type ipcStream struct {
	buf *bytes.Reader
	rd  *ipc.Reader
	typ arrowpb.ArrowPayloadType
}

func newDecoder(ctx context.Context, p *ingest.Pipeline, memLimit uint64, maxRows int64) *decoder {
	return &decoder{
		alloc:   newBudgetAllocator(ctx, p, memLimit),
		readers: make(map[string]*ipcStream),
		maxRows: maxRows,
		maxOTLP: p.MaxRecvMsgSize(),
	}
}

// close releases the readers (their schemas and dictionaries) and the
// stream's state charge.
func (d *decoder) close() {
	for id, s := range d.readers {
		if s.rd != nil {
			s.rd.Release()
		}
		delete(d.readers, id)
	}
	d.alloc.release()
}

// knownType reports whether t is a payload type of the protocol: a
// stream has at most one reader per type, so their number is bounded.
func knownType(t arrowpb.ArrowPayloadType) bool {
	_, ok := arrowpb.ArrowPayloadType_name[int32(t)]
	return ok && t != arrowpb.ArrowPayloadType_UNKNOWN
}

// signalOf returns the signal of a batch's main payload type.
func signalOf(t arrowpb.ArrowPayloadType) (otlp.Signal, bool) {
	switch t {
	case arrowpb.ArrowPayloadType_SPANS:
		return otlp.Traces, true
	case arrowpb.ArrowPayloadType_UNIVARIATE_METRICS:
		return otlp.Metrics, true
	case arrowpb.ArrowPayloadType_LOGS:
		return otlp.Logs, true
	}
	return 0, false
}

// errRows refuses a batch with more rows than maxRows.
type errRows struct{ rows, max int64 }

func (e errRows) Error() string {
	return fmt.Sprintf("batch of %d Arrow rows, more than %d: send smaller batches", e.rows, e.max)
}

// errTooLarge refuses a batch whose OTLP is larger than MaxRecvMsgSize.
type errTooLarge struct{ size, max int }

func (e errTooLarge) Error() string {
	return fmt.Sprintf("batch decodes to %d bytes of OTLP, more than %d: send smaller batches", e.size, e.max)
}

// consume reads the batch's records into d.recs (the caller releases
// them: releaseRecords).
func (d *decoder) consume(bar *arrowpb.BatchArrowRecords) (err error) {
	defer func() {
		// The allocator panics on its limits; the IPC reader recovers
		// most of it, this the rest. Other panics are the library's on
		// hostile input: the stream's state is then lost, but not the
		// process.
		if v := recover(); v != nil {
			if e, ok := v.(error); ok {
				err = fmt.Errorf("cannot decode Arrow record: %w", e)
			} else {
				err = fmt.Errorf("cannot decode Arrow record: %v", v)
			}
		}
	}()
	var rows int64
	for _, pl := range bar.ArrowPayloads {
		if !knownType(pl.Type) {
			return fmt.Errorf("cannot decode Arrow payload: unknown payload type %d", pl.Type)
		}
		if err := checkIPC(pl.Record); err != nil {
			return err
		}
		s := d.readers[pl.SchemaId]
		if s == nil {
			// A new schema for a type replaces its reader (otel-arrow's
			// schemas only grow: the old one is not used again).
			for id, old := range d.readers {
				if old.typ == pl.Type {
					if old.rd != nil {
						old.rd.Release()
					}
					delete(d.readers, id)
				}
			}
			s = &ipcStream{buf: bytes.NewReader(nil), typ: pl.Type}
			d.readers[cloneKey(pl.SchemaId)] = s
		}
		// zstd bodies are decompressed here (unzstd.go), into memory
		// from the stream's allocator, freed once the reader has read it.
		raw, rewritten, msgs, err := decompressIPC(pl.Record, d.alloc, d.msgs)
		d.msgs = msgs
		if err != nil {
			return fmt.Errorf("cannot decode Arrow record: %w", err)
		}
		free := func() {
			if rewritten {
				d.alloc.Free(raw[:cap(raw)])
				rewritten = false
			}
		}
		defer free()
		if rewritten {
			s.buf.Reset(raw)
		} else {
			s.buf.Reset(pl.Record)
		}
		if s.rd == nil {
			rd, err := ipc.NewReader(s.buf, ipc.WithAllocator(d.alloc), ipc.WithDictionaryDeltas(true), ipc.WithZstd())
			if err != nil {
				return fmt.Errorf("cannot decode Arrow schema: %w", err)
			}
			s.rd = rd
		}
		next := s.rd.Next()
		free() // the reader copied what it read
		if !next {
			if err := s.rd.Err(); err != nil {
				return fmt.Errorf("cannot decode Arrow record: %w", err)
			}
			return errors.New("cannot decode Arrow payload: it holds no record")
		}
		rec := s.rd.RecordBatch()
		rec.Retain()
		d.recs = append(d.recs, record_message.NewRecordMessage(bar.BatchId, pl.Type, rec))
		if rows += rec.NumRows(); rows > d.maxRows {
			return errRows{rows, d.maxRows}
		}
		for _, col := range rec.Columns() {
			if int64(col.Len()) < rec.NumRows() {
				return fmt.Errorf("cannot decode Arrow record: a column of %d values in a record of %d rows", col.Len(), rec.NumRows())
			}
			if err := validate(col.Data(), d.maxRows, 0); err != nil {
				return fmt.Errorf("cannot decode Arrow record: %w", err)
			}
		}
	}
	return nil
}

func (d *decoder) releaseRecords() {
	for i, r := range d.recs {
		r.Record().Release()
		d.recs[i] = nil
	}
	d.recs = d.recs[:0]
}

// decode turns the batch into the OTLP protobuf of sig, appended to dst.
// It returns the items decoded. An error leaves the stream's Arrow state
// as the records read left it.
func (d *decoder) decode(bar *arrowpb.BatchArrowRecords, sig otlp.Signal, dst []byte) (out []byte, items int, err error) {
	defer d.keepScratch()
	defer d.releaseRecords()
	if err := d.consume(bar); err != nil {
		return dst, 0, err
	}
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("cannot convert Arrow records to OTLP: %v", v)
		}
	}()
	// Our own encoders: the records stay d.recs (released by the deferred
	// releaseRecords).
	d.arecs, d.atypes = d.arecs[:0], d.atypes[:0]
	for _, r := range d.recs {
		d.arecs = append(d.arecs, r.Record())
		d.atypes = append(d.atypes, r.PayloadType())
	}
	switch sig {
	case otlp.Traces:
		out, items, err = d.traces.encode(d.arecs, d.atypes, dst, d.maxOTLP)
	case otlp.Logs:
		out, items, err = d.logs.encode(d.arecs, d.atypes, dst, d.maxOTLP)
	default:
		out, items, err = d.metrics.encode(d.arecs, d.atypes, dst, d.maxOTLP)
	}
	clear(d.arecs)
	if err != nil {
		var tl errTooLarge
		if errors.As(err, &tl) {
			return dst, 0, errTooLarge{tl.size - len(dst), d.maxOTLP}
		}
		return dst, 0, fmt.Errorf("cannot convert Arrow records to OTLP: %w", err)
	}
	return out, items, nil
}

// isLimit reports whether err is the stream's memory limit.
func isLimit(err error) bool {
	var le common.LimitError
	return errors.As(err, &le)
}

// isNoRoom reports whether err is the admission budget's refusal.
func isNoRoom(err error) bool {
	var nr errNoRoom
	return errors.As(err, &nr)
}
