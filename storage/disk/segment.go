package disk

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/otlp-lite/otlp-lite/otlp"
)

const (
	segmentSuffix  = ".seg"
	segmentNameLen = 20 + len(segmentSuffix)
	// readWindow is how much of a segment a reader fetches per read(2):
	// large enough that small records cost no syscall each, small enough to
	// keep per-reader memory modest.
	readWindow = 256 << 10
)

func segmentName(seq uint64) string {
	return fmt.Sprintf("%020d%s", seq, segmentSuffix)
}

// listSegments returns the segment file names in dir in order. A missing
// directory has no segments.
func listSegments(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("cannot list segments: %w", err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), segmentSuffix) && len(e.Name()) == segmentNameLen {
			if _, err := strconv.ParseUint(e.Name()[:20], 10, 64); err == nil {
				names = append(names, e.Name())
			}
		}
	}
	sort.Strings(names)
	return names, nil
}

// listSegmentSeqs is listSegments as sequence numbers.
func listSegmentSeqs(dir string) ([]uint64, error) {
	names, err := listSegments(dir)
	if err != nil {
		return nil, err
	}
	seqs := make([]uint64, len(names))
	for i, n := range names {
		seqs[i], _ = strconv.ParseUint(n[:20], 10, 64)
	}
	return seqs, nil
}

// recordStatus classifies what a segmentReader found at an offset.
type recordStatus uint8

const (
	recordOK   recordStatus = iota
	recordEnd               // the offset is the end of the file
	recordTorn              // fewer bytes than the record needs: a write in progress or cut short
	recordBad               // bad length, CRC mismatch or undecodable payload
	// recordZero is a record header of zeros: in the segment being
	// written, the end of its records, before zeros preallocated for
	// the next (direct.go); elsewhere damage, as recordBad.
	recordZero
)

// segmentReader reads records from one segment file at given offsets,
// through a window buffer so that small records cost no system call each.
// It never holds more than the window plus one record in memory.
type segmentReader struct {
	src    io.ReaderAt
	sizeFn func() (int64, error)
	closer io.Closer
	path   string
	seq    uint64
	hdr    segmentHeader
	size   int64 // file size as last seen; see refreshSize
	win    []byte
	winOff int64
	winLen int
	big    []byte // a record larger than the window
	dbuf   []byte // decompressed payload
	reason string // why the last readRecord was not recordOK
	// tenant is the last tenant name read (internTenant).
	tenant string
	// keysOnly leaves compressed payloads compressed: ReadKeys reads
	// records for their keys only.
	keysOnly bool
}

// errShortHeader means a segment has fewer bytes than a header: it is being
// created, or a crash interrupted its creation.
var errShortHeader = errors.New("segment header is truncated")

// openSegment opens the segment at path and checks its header. win, big and
// dbuf are buffers to reuse (any may be nil; a nil win gets readWindow
// bytes).
func openSegment(path string, seq uint64, signal uint8, win, big, dbuf []byte) (*segmentReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := newSegmentReader(f, fileSize(f), f, path, seq, signal, win, big, dbuf)
	if err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

func fileSize(f *os.File) func() (int64, error) {
	return func() (int64, error) {
		st, err := f.Stat()
		if err != nil {
			return 0, fmt.Errorf("cannot stat segment: %w", err)
		}
		return st.Size(), nil
	}
}

// newSegmentReader reads a segment from src, whose current size size
// reports, and checks its header.
func newSegmentReader(src io.ReaderAt, size func() (int64, error), closer io.Closer, path string, seq uint64, signal uint8, win, big, dbuf []byte) (*segmentReader, error) {
	if cap(win) == 0 {
		win = make([]byte, readWindow)
	}
	r := &segmentReader{src: src, sizeFn: size, closer: closer, path: path, seq: seq, win: win[:cap(win)], big: big, dbuf: dbuf, winOff: -1}
	if err := r.refreshSize(); err != nil {
		return nil, err
	}
	if r.size < segmentHeaderSize {
		return nil, errShortHeader
	}
	h, err := r.at(0, segmentHeaderSize)
	if err != nil {
		return nil, err
	}
	if r.hdr, err = parseSegmentHeader(h); err != nil {
		return nil, err
	}
	if r.hdr.signal != signal {
		return nil, fmt.Errorf("segment holds signal %d, want %d", r.hdr.signal, signal)
	}
	return r, nil
}

func (r *segmentReader) close() {
	if r.closer != nil {
		r.closer.Close()
		r.closer = nil
	}
}

// refreshSize re-reads the file size, which grows while a writer appends.
func (r *segmentReader) refreshSize() error {
	size, err := r.sizeFn()
	if err != nil {
		return err
	}
	if size != r.size {
		// The file changed under the window (growth, or a writer cutting
		// back a failed write): drop what the window holds past the end.
		r.winOff = -1
	}
	r.size = size
	return nil
}

// at returns n bytes at off, valid until the next call. off+n must not
// exceed r.size.
func (r *segmentReader) at(off int64, n int) ([]byte, error) {
	if r.winOff >= 0 && off >= r.winOff && off+int64(n) <= r.winOff+int64(r.winLen) {
		i := int(off - r.winOff)
		return r.win[i : i+n], nil
	}
	dst := r.win
	if n > len(r.win) {
		if cap(r.big) < n {
			r.big = make([]byte, n)
		}
		dst = r.big[:n]
	} else if rest := r.size - off; rest < int64(len(dst)) {
		dst = dst[:max(rest, int64(n))]
	}
	m, err := r.src.ReadAt(dst, off)
	if m < n {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		r.winOff = -1
		return nil, err
	}
	if n <= len(r.win) {
		r.winOff, r.winLen = off, m
	} else {
		r.winOff = -1
	}
	return dst[:n], nil
}

// readRecord reads the record at off. With recordOK it returns the record
// (Data valid until the next call) and the offset just past it.
func (r *segmentReader) readRecord(off int64) (Record, int64, recordStatus) {
	r.reason = ""
	if off >= r.size {
		return Record{}, off, recordEnd
	}
	if r.size-off < recordHeaderSize {
		r.reason = "truncated record header"
		return Record{}, off, recordTorn
	}
	h, err := r.at(off, recordHeaderSize)
	if err != nil {
		r.reason = "truncated record header"
		return Record{}, off, recordTorn
	}
	if isZero(h) {
		r.reason = "zero record header"
		return Record{}, off, recordZero
	}
	bodyLen, crc := parseRecordHeader(h)
	if bodyLen < recordMetaSize || bodyLen > maxRecordBody {
		r.reason = fmt.Sprintf("record length %d is out of range", bodyLen)
		return Record{}, off, recordBad
	}
	end := off + recordHeaderSize + int64(bodyLen)
	if end > r.size {
		r.reason = "truncated record body"
		return Record{}, off, recordTorn
	}
	body, err := r.at(off+recordHeaderSize, bodyLen)
	if err != nil {
		r.reason = "truncated record body"
		return Record{}, off, recordTorn
	}
	if crc32.Checksum(body, castagnoli) != crc {
		r.reason = "record CRC mismatch"
		return Record{}, off, recordBad
	}
	ts, items := parseRecordMeta(body)
	rec := Record{
		Time:    time.Unix(0, ts),
		Items:   items,
		Data:    body[recordMetaSize:],
		Tenant:  otlp.DefaultTenant,
		Segment: filepath.Base(r.path),
		Offset:  off,
	}
	if r.hdr.version >= 3 && recordHasTenant(body) {
		tenant, payload, err := splitRecordTenant(rec.Data)
		if err != nil {
			r.reason = err.Error()
			return Record{}, off, recordBad
		}
		rec.Tenant, rec.Data = internTenant(&r.tenant, tenant), payload
	}
	if r.hdr.version >= 4 && recordHasKey(body) {
		block, payload, err := splitRecordKey(rec.Data)
		if err != nil {
			r.reason = err.Error()
			return Record{}, off, recordBad
		}
		rec.key, rec.Data = block, payload
	}
	if r.hdr.compression == CompressionZstd && !r.keysOnly {
		r.dbuf, err = decompressPayload(r.dbuf[:0], rec.Data)
		if err != nil {
			r.reason = err.Error()
			return Record{}, off, recordBad
		}
		rec.Data = r.dbuf
	}
	return rec, end, recordOK
}

// resync looks for the next valid record after a bad one at off: it tries
// every later offset whose bytes look like a record header (see
// plausibleHeader) and checks the candidate's CRC. It returns the offset of
// the first valid record, or false if there is none before the end.
func (r *segmentReader) resync(off int64) (int64, bool) {
	const probe = recordHeaderSize + recordMetaSize
	for p := off + 1; p+probe <= r.size; p++ {
		h, err := r.at(p, probe)
		if err != nil {
			return 0, false
		}
		if isZero(h[:4]) {
			// A record's length is not zero, so none starts in a run
			// of zeros (a preallocated tail, a lost block) but in
			// its last three bytes.
			end, err := r.zeroRunEnd(p)
			if err != nil {
				return 0, false
			}
			if q := end - 3; q > p {
				p = q - 1
			}
			continue
		}
		if !plausibleHeader(h, r.size-p, r.hdr.compression != CompressionNone) {
			continue
		}
		if _, _, st := r.readRecord(p); st == recordOK {
			return p, true
		}
	}
	return 0, false
}

// isZero reports whether b holds only zeros.
func isZero(b []byte) bool {
	return firstNonZero(b) == len(b)
}

// firstNonZero returns the index of b's first non-zero byte, len(b) if
// there is none.
func firstNonZero(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if binary.LittleEndian.Uint64(b[i:]) != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if b[i] != 0 {
			return i
		}
	}
	return len(b)
}

// zeroRunEnd returns the offset of the first non-zero byte at or after
// off, r.size if there is none, or the error that stopped it reading.
func (r *segmentReader) zeroRunEnd(off int64) (int64, error) {
	for off < r.size {
		w, err := r.at(off, int(min(int64(len(r.win)), r.size-off)))
		if err != nil {
			return off, err
		}
		i := firstNonZero(w)
		if i < len(w) {
			return off + int64(i), nil
		}
		off += int64(len(w))
	}
	return r.size, nil
}

// zeroFrom reports whether the segment holds only zeros from off to its
// end: a preallocated tail, where its records end. What cannot be read
// (an I/O error, a file cut meanwhile) is not known to be zeros: the
// callers then take the region for damage, which readers report, rather
// than for an end, which they would pass in silence.
func (r *segmentReader) zeroFrom(off int64) bool {
	end, err := r.zeroRunEnd(off)
	return err == nil && end == r.size
}

// lostBlock reports whether a whole block of zeros (blockSize-aligned in
// the file) overlaps the bad record at off, as far as its length
// reaches: the trace of a direct write that a power loss cut short, one
// of whose blocks never landed and reads as the zeros preallocated there
// (recover). A length out of range explains nothing (damage): a sector
// is written whole or not at all, so a lost write leaves a header as it
// was written or as zeros, never garbage.
//
// Only in a compressed segment: there a record is a few hundred bytes of
// header and key around a zstd frame, which holds no block of zeros (it
// encodes a run of zeros as a match). An uncompressed record holds the
// client's bytes, and a request may carry a run of zeros a block long:
// a flipped bit in that acknowledged record would then read as a lost
// write, and recovery would cut the acknowledged records after it
// (TestDamageInZeroRecordKept). There a bad record is damage, skipped
// and reported, and the records after it kept, even those of a commit
// that a power loss tore (never acknowledged: the client retries, and
// OTLP delivers at least once).
func (r *segmentReader) lostBlock(off int64) bool {
	if r.hdr.compression == CompressionNone {
		return false
	}
	h, err := r.at(off, recordHeaderSize)
	if err != nil {
		return false
	}
	bodyLen, _ := parseRecordHeader(h)
	if bodyLen < recordMetaSize || bodyLen > maxRecordBody {
		return false
	}
	end := min(off+recordHeaderSize+int64(bodyLen), r.size)
	// The block holding the header is not zeros; the next ones may be.
	for blk := off&^(blockSize-1) + blockSize; blk < end; blk += blockSize {
		b, err := r.at(blk, int(min(blockSize, r.size-blk)))
		if err != nil {
			return false
		}
		if isZero(b) {
			return true
		}
	}
	return false
}

// zeroToBlockEnd reports whether the file holds zeros from off to the
// end of off's block (or of the file): what a commit torn by a power loss
// leaves where a record header should be (recover). Its blocks are lost
// whole, and the first of them, lost, holds the acknowledged head it had
// and the zeros preallocated after it. A zero header with data after it
// in its block is a sector gone bad in acknowledged data: damage.
func (r *segmentReader) zeroToBlockEnd(off int64) bool {
	end := min(off|(blockSize-1)+1, r.size)
	if end <= off {
		return true
	}
	b, err := r.at(off, int(end-off))
	return err == nil && isZero(b)
}

// zeroAt reports whether the record header at off reads as zeros in the
// file now, bypassing the window (a preallocated segment is written in
// place: the window may be older than the file).
func (r *segmentReader) zeroAt(off int64) bool {
	var h [recordHeaderSize]byte
	n, _ := r.src.ReadAt(h[:], off)
	return n == len(h) && isZero(h[:])
}

// writtenInPlace reports whether the segment, the newest, looks
// preallocated for direct writes (direct.go): its size is a whole number
// of blocks, where a segment written through the page cache, or closed,
// ends at its last record (at a block's end once in blockSize closes: a
// reader of that one waits for the next segment before it reports damage
// at its end).
func (r *segmentReader) writtenInPlace() bool {
	return r.size > segmentHeaderSize && r.size%blockSize == 0
}

// dropWindow forgets what the window holds, so that the next read sees
// the file as it is now.
func (r *segmentReader) dropWindow() { r.winOff = -1 }
