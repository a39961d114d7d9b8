package disk

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
)

// Position file format, shared by consumer cursors
// (dataDir/cursors/<signal>/<name>.cursor) and retention marks
// (dataDir/<signal>/retention.mark): two slots of 40 bytes, 80 bytes in all.
//
//	slot:
//	  magic   [8]byte  "OTLPCUR\x02"
//	  segment uint64 LE
//	  offset  int64 LE
//	  ordinal int64 LE  records of the log before this position, counted
//	                    from retention's origin (see retentionMark); -1 unknown
//	  gen     uint32 LE incremented by every write
//	  crc     uint32 LE CRC-32C of the 36 bytes before it
//
// The file is created whole (temporary file, fsync, rename, directory fsync)
// and from then on rewritten in place: each write goes to the slot not
// holding the newest value, followed by one fsync, and a reader takes the
// valid slot with the newer gen. A crash mid-write can tear only the slot
// being written, so the file still holds the previous value; and since
// rewriting 40 bytes of an allocated block allocates nothing, a commit never
// fails because the disk is full (on filesystems that overwrite in place:
// ext4, xfs, tmpfs; a copy-on-write filesystem such as btrfs or zfs may still
// need a free block).
//
// Version 1 cursors (32 bytes: magic "OTLPCUR\x01", segment, offset, CRC-32C
// of those 24 bytes, 4 zero bytes) are read as a slot 0 of gen 0 with an
// unknown ordinal; the first write goes to slot 1, which upgrades the file in
// place. A binary that knows only version 1 refuses the 80-byte form as
// damaged rather than misreading it.
const (
	posSlotSize = 40
	posFileSize = 2 * posSlotSize
	v1CursorLen = 32
)

var (
	posMagic      = [8]byte{'O', 'T', 'L', 'P', 'C', 'U', 'R', 2}
	v1CursorMagic = [8]byte{'O', 'T', 'L', 'P', 'C', 'U', 'R', 1}
)

// posValue is what a position file holds.
type posValue struct {
	pos     Position
	ordinal int64 // -1: unknown
}

// posFile is an open position file, rewritten in place.
type posFile struct {
	f    *os.File
	slot int    // the slot holding the newest value
	gen  uint32 // its gen
}

func encodeSlot(b []byte, v posValue, gen uint32) {
	copy(b[:8], posMagic[:])
	binary.LittleEndian.PutUint64(b[8:16], v.pos.Segment)
	binary.LittleEndian.PutUint64(b[16:24], uint64(v.pos.Offset))
	binary.LittleEndian.PutUint64(b[24:32], uint64(v.ordinal))
	binary.LittleEndian.PutUint32(b[32:36], gen)
	binary.LittleEndian.PutUint32(b[36:40], crc32.Checksum(b[:36], castagnoli))
}

// decodePos returns the newest valid value of a position file's contents,
// the slot holding it and its gen. ok is false if no slot is valid.
func decodePos(b []byte) (v posValue, slot int, gen uint32, ok bool) {
	if len(b) >= v1CursorLen && [8]byte(b[:8]) == v1CursorMagic &&
		crc32.Checksum(b[:24], castagnoli) == binary.LittleEndian.Uint32(b[24:28]) {
		v = posValue{pos: Position{Segment: binary.LittleEndian.Uint64(b[8:16]), Offset: int64(binary.LittleEndian.Uint64(b[16:24]))}, ordinal: -1}
		ok = true
	}
	for i := range 2 {
		if len(b) < (i+1)*posSlotSize {
			break
		}
		s := b[i*posSlotSize : (i+1)*posSlotSize]
		if [8]byte(s[:8]) != posMagic || crc32.Checksum(s[:36], castagnoli) != binary.LittleEndian.Uint32(s[36:40]) {
			continue
		}
		g := binary.LittleEndian.Uint32(s[32:36])
		// Serial-number comparison: the two slots' gens differ by one, so
		// this orders them correctly across the wrap at 2^32.
		if ok && int32(g-gen) <= 0 {
			continue
		}
		v = posValue{
			pos:     Position{Segment: binary.LittleEndian.Uint64(s[8:16]), Offset: int64(binary.LittleEndian.Uint64(s[16:24]))},
			ordinal: int64(binary.LittleEndian.Uint64(s[24:32])),
		}
		slot, gen, ok = i, g, true
	}
	return v, slot, gen, ok
}

// readPosFile reads the position file at path. A missing file is the zero
// Position with exists false.
func readPosFile(path string) (v posValue, exists bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return posValue{ordinal: -1}, false, nil
	}
	if err != nil {
		return posValue{ordinal: -1}, false, err
	}
	v, _, _, ok := decodePos(b)
	if !ok {
		return posValue{ordinal: -1}, true, fmt.Errorf("%w: position file %s is damaged", ErrCorrupt, path)
	}
	return v, true, nil
}

// createPosFile writes a new position file holding v atomically (it
// replaces any file at path) and returns it open for in-place writes. This
// is the only write of a position file that needs free space.
func createPosFile(path string, v posValue) (*posFile, error) {
	var b [posFileSize]byte
	encodeSlot(b[:posSlotSize], v, 0)
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*posFile, error) {
		f.Close()
		os.Remove(tmp)
		return nil, err
	}
	if err := writeAt(f, b[:], 0); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail(err)
	}
	if err := syncDir(dir); err != nil {
		// The file is complete; only its name may not survive a power
		// loss, which leaves the previous file (or none) in its place.
		f.Close()
		return nil, err
	}
	return &posFile{f: f, slot: 0, gen: 0}, nil
}

// openPosFile opens an existing position file for in-place writes. ok is
// false if there is none.
func openPosFile(path string) (pf *posFile, v posValue, ok bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, posValue{ordinal: -1}, false, nil
	}
	if err != nil {
		return nil, posValue{ordinal: -1}, false, err
	}
	var b [posFileSize]byte
	n, err := f.ReadAt(b[:], 0)
	if n == 0 && err != nil {
		f.Close()
		return nil, posValue{ordinal: -1}, false, err
	}
	v, slot, gen, valid := decodePos(b[:n])
	if !valid {
		f.Close()
		return nil, posValue{ordinal: -1}, false, fmt.Errorf("%w: position file %s is damaged", ErrCorrupt, path)
	}
	return &posFile{f: f, slot: slot, gen: gen}, v, true, nil
}

// write durably replaces the file's value: it writes the other slot and
// fsyncs. On failure the file still holds the previous value (the slot
// written may be torn, and readers ignore it).
func (p *posFile) write(v posValue) error {
	var b [posSlotSize]byte
	slot := 1 - p.slot
	encodeSlot(b[:], v, p.gen+1)
	if err := writeAt(p.f, b[:], int64(slot*posSlotSize)); err != nil {
		return err
	}
	if err := p.f.Sync(); err != nil {
		return err
	}
	p.slot, p.gen = slot, p.gen+1
	return nil
}

func (p *posFile) close() error {
	if p == nil {
		return nil
	}
	return p.f.Close()
}
