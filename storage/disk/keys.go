package disk

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
)

// Idempotency keys in the log (format version 4, see format.go): a record
// stored with a key (Store.WriteKeyed, issue 24, docs/exactly-once.md)
// sets recordKeyFlag in its item count and carries, after its tenant and
// before its payload, outside any compression:
//
//	key length   uint16 LE, 1 to otlp.MaxIdempotencyKeyLen
//	key          that many bytes
//	fingerprint  uint64 LE, the request body's (ingest)
//	rejected     uint32 LE, items of the request rejected as invalid
//	message len  uint16 LE, at most storage.MaxStoredKeyMessage
//	message      that many bytes: the partial success's message
//
// The key is in the record, under the record's CRC and in the record's
// write and fsync: a record is in the log with its key or not at all, so
// the window of keys rebuilt from the log (ReadKeys) holds exactly the
// keys of the requests acknowledged (and of those whose answer was lost).
// A record without a key carries nothing.
//
// The flag is the item count's second bit from the top: a record's items
// are fewer than its payload's bytes (every item takes at least two), and
// a payload is under maxRecordBody, 2^30 bytes.
const recordKeyFlag = 1 << 30

// recordKeyFixed is the key block's size besides the key and the message.
const recordKeyFixed = 2 + 8 + 4 + 2

// errRecordKey is a record whose key block runs past its body or is out
// of bounds.
var errRecordKey = errors.New("record idempotency key is malformed")

// appendRecordKey appends key's block (its Key, Fingerprint, Rejected and
// Message), which checkRecordKey has accepted.
func appendRecordKey(dst []byte, key *storage.StoredKey) []byte {
	dst = binary.LittleEndian.AppendUint16(dst, uint16(len(key.Key)))
	dst = append(dst, key.Key...)
	dst = binary.LittleEndian.AppendUint64(dst, key.Fingerprint)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(key.Rejected))
	dst = binary.LittleEndian.AppendUint16(dst, uint16(len(key.Message)))
	return append(dst, key.Message...)
}

// checkRecordKey refuses a key the format cannot hold.
func checkRecordKey(key *storage.StoredKey) error {
	switch {
	case key.Key == "" || len(key.Key) > otlp.MaxIdempotencyKeyLen:
		return fmt.Errorf("cannot store an idempotency key of %d bytes (1 to %d): %w", len(key.Key), otlp.MaxIdempotencyKeyLen, storage.ErrRejected)
	case len(key.Message) > storage.MaxStoredKeyMessage:
		return fmt.Errorf("cannot store a %d-byte message with an idempotency key (at most %d): %w", len(key.Message), storage.MaxStoredKeyMessage, storage.ErrRejected)
	case key.Rejected < 0 || int64(key.Rejected) > 1<<32-1:
		return fmt.Errorf("cannot store %d rejected items with an idempotency key: %w", key.Rejected, storage.ErrRejected)
	}
	return nil
}

// splitRecordKey splits the data after a record's tenant, of a record
// with recordKeyFlag, into its key block and the payload.
func splitRecordKey(data []byte) (block, payload []byte, err error) {
	if len(data) < 2 {
		return nil, nil, errRecordKey
	}
	n := int(binary.LittleEndian.Uint16(data))
	if n == 0 || n > otlp.MaxIdempotencyKeyLen || len(data) < recordKeyFixed+n {
		return nil, nil, errRecordKey
	}
	m := int(binary.LittleEndian.Uint16(data[2+n+12:]))
	end := recordKeyFixed + n + m
	if m > storage.MaxStoredKeyMessage || len(data) < end {
		return nil, nil, errRecordKey
	}
	return data[:end], data[end:], nil
}

// parseRecordKey reads a key block splitRecordKey returned.
func parseRecordKey(block []byte) storage.StoredKey {
	n := int(binary.LittleEndian.Uint16(block))
	b := block[2+n:]
	return storage.StoredKey{
		Key:         string(block[2 : 2+n]),
		Fingerprint: binary.LittleEndian.Uint64(b),
		Rejected:    int(binary.LittleEndian.Uint32(b[8:])),
		Message:     string(b[14:]),
	}
}

// recordHasKey reports whether the record body's meta says a key block
// follows its tenant.
func recordHasKey(body []byte) bool {
	return binary.LittleEndian.Uint32(body[8:12])&recordKeyFlag != 0
}

// IdempotencyKey returns the idempotency key the record was stored with
// (its Key, Fingerprint, Rejected and Message), and whether it has one.
// It allocates the key's strings; Data and the rest of the record are
// read without it.
func (r Record) IdempotencyKey() (storage.StoredKey, bool) {
	if r.key == nil {
		return storage.StoredKey{}, false
	}
	return parseRecordKey(r.key), true
}

var _ storage.KeyedSink = (*Store)(nil)

// WriteKeyed implements storage.KeyedSink: Write, with key stored in the
// record (format version 4), in its write and fsync. It does not return
// before its batch is written when ctx ends (at most one write and fsync
// that are under way anyway): its answer says whether the record is
// stored. A key the format cannot hold (empty, longer than
// otlp.MaxIdempotencyKeyLen, a message longer than
// storage.MaxStoredKeyMessage) is refused, not stored.
func (s *Store) WriteKeyed(ctx context.Context, signal storage.Signal, data []byte, items int, key storage.StoredKey) error {
	if err := checkRecordKey(&key); err != nil {
		return storage.NotStored(err)
	}
	if int(signal) >= len(s.logs) || s.logs[signal] == nil {
		return storage.NotStored(fmt.Errorf("cannot store unknown signal %d", signal))
	}
	if len(data)+recordMetaSize+recordKeyFixed+len(key.Key)+len(key.Message) > maxRecordBody {
		return storage.NotStored(fmt.Errorf("cannot store a %d-byte request: records are limited to %d bytes", len(data), maxRecordBody-recordMetaSize))
	}
	return s.logs[signal].writeKeyed(ctx, data, items, &key)
}

// ReadKeys implements storage.KeyedSink: it reads the records of every
// signal received at or after since, in the segments whose newest record
// is that recent, and calls fn with each record's key. It reads the
// records' frames, tenants and key blocks only, not their payloads (a
// small read per record, or the segment's bytes when records are small):
// a window of keys is rebuilt in the time it takes to read those, not the
// whole log of its age. The newest segment (the one a crash may have torn
// in the middle), and a segment whose frames do not walk to its end
// (damage), are read in full instead, checking every record's CRC and
// skipping the damaged ones, as Scan does.
func (s *Store) ReadKeys(since time.Time, fn func(storage.StoredKey) error) error {
	cut := since.UnixNano()
	for _, sig := range storage.Signals {
		l := s.logs[sig]
		if l == nil {
			continue
		}
		l.statMu.Lock()
		var seqs []uint64
		for _, si := range l.segs {
			if si.records > 0 && si.maxT >= cut {
				seqs = append(seqs, si.seq)
			}
		}
		l.statMu.Unlock()
		for i, seq := range seqs {
			// The newest segment is read in full, every record's CRC
			// checked: it is the one a crash may have torn in the
			// middle (a record's frame and key on disk, its payload
			// not, and a later record whole), damage that recovery
			// keeps and readers skip. Its key must be skipped too:
			// read, it would answer the never acknowledged request's
			// resend as a duplicate, and the data would be lost. Older
			// segments were fsynced whole before the next was begun.
			newest := i == len(seqs)-1
			if err := readSegmentKeys(filepath.Join(l.dir, segmentName(seq)), seq, sig, cut, newest, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// maxKeyPrefix is the most of a record's data before its payload: a
// tenant and a key block at their longest.
const maxKeyPrefix = 1 + maxRecordTenant + recordKeyFixed + otlp.MaxIdempotencyKeyLen + storage.MaxStoredKeyMessage

// readSegmentKeys calls fn with the key of every keyed record of a
// segment received at or after cut (Unix nanoseconds); checkAll reads
// every record whole and checks its CRC, as for a damaged segment.
func readSegmentKeys(path string, seq uint64, sig storage.Signal, cut int64, checkAll bool, fn func(storage.StoredKey) error) error {
	seg, err := openSegment(path, seq, uint8(sig), make([]byte, 64<<10), nil, nil)
	if err != nil {
		if errors.Is(err, errShortHeader) || errors.Is(err, os.ErrNotExist) {
			return nil // being created, or deleted by retention since listed
		}
		return fmt.Errorf("cannot read the keys of %s: %w", path, err)
	}
	defer seg.close()
	if seg.hdr.version < 4 {
		return nil // no keys before version 4
	}
	var keys []storage.StoredKey
	ok := false
	if !checkAll {
		keys, ok = walkKeys(seg, sig, cut)
	}
	if !ok {
		// Damage: every record read whole, its CRC checked.
		keys = keys[:0]
		seg.keysOnly = true
		walkSegment(seg, func(r Record) {
			if r.key == nil || r.Time.UnixNano() < cut {
				return
			}
			k := parseRecordKey(r.key)
			k.Signal, k.Tenant, k.Items, k.Time = sig, r.Tenant, r.Items, r.Time
			keys = append(keys, k)
		})
	}
	for _, k := range keys {
		if err := fn(k); err != nil {
			return err
		}
	}
	return nil
}

// walkKeys reads the keys of seg's records from their frames, without
// their payloads; ok is false when the frames do not walk to the end of
// the segment or a key block is malformed.
func walkKeys(seg *segmentReader, sig storage.Signal, cut int64) (keys []storage.StoredKey, ok bool) {
	off := int64(segmentHeaderSize)
	tenant := otlp.DefaultTenant
	for off+recordHeaderSize+recordMetaSize <= seg.size {
		h, err := seg.at(off, recordHeaderSize+recordMetaSize)
		if err != nil {
			return keys, false
		}
		bodyLen, _ := parseRecordHeader(h)
		if bodyLen < recordMetaSize || off+recordHeaderSize+int64(bodyLen) > seg.size {
			return keys, false
		}
		body := h[recordHeaderSize:]
		ts, items := parseRecordMeta(body)
		if recordHasKey(body) && ts >= cut {
			hasTenant := recordHasTenant(body)
			n := min(bodyLen-recordMetaSize, maxKeyPrefix)
			data, err := seg.at(off+recordHeaderSize+recordMetaSize, n)
			if err != nil {
				return keys, false
			}
			k := storage.StoredKey{Signal: sig, Tenant: otlp.DefaultTenant, Items: items, Time: time.Unix(0, ts)}
			if hasTenant {
				name, rest, err := splitRecordTenant(data)
				if err != nil {
					return keys, false
				}
				tenant = internTenant(&tenant, name)
				k.Tenant, data = tenant, rest
			}
			block, _, err := splitRecordKey(data)
			if err != nil {
				return keys, false
			}
			pk := parseRecordKey(block)
			k.Key, k.Fingerprint, k.Rejected, k.Message = pk.Key, pk.Fingerprint, pk.Rejected, pk.Message
			keys = append(keys, k)
		}
		off += recordHeaderSize + int64(bodyLen)
	}
	return keys, off == seg.size || seg.zeroFrom(off)
}
