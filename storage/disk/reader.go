package disk

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/otlp-lite/otlp-lite/storage"
)

// Record is one stored request.
type Record struct {
	// Time is when the receiver accepted the request.
	Time time.Time
	// Items counts the spans, data points or log records in Data.
	Items int
	// Data is the request's protobuf (an Export*ServiceRequest, which has
	// the wire format of TracesData, MetricsData or LogsData). It is valid
	// only until the callback that received it returns.
	Data []byte
	// Segment and Offset say where the record is, for error messages and
	// cursors.
	Segment string
	Offset  int64
}

// ErrCorrupt is wrapped by errors about records whose CRC or framing is
// wrong before the tail of the last segment.
var ErrCorrupt = errors.New("corrupt record")

// Scan calls fn for every record of signal stored under dataDir, oldest
// first. It stops at the first error fn returns and returns it.
//
// A torn record at the very end of the newest segment (a write in progress,
// or one cut short by a crash) ends the scan silently: it was never
// acknowledged. Damage anywhere else is reported as an error wrapping
// ErrCorrupt, with the segment and offset.
//
// Scan may run while a server writes the same directory; it then sees every
// record that was complete when it reached it.
func Scan(dataDir string, signal storage.Signal, fn func(r Record) error) error {
	dir := filepath.Join(dataDir, signal.String())
	segs, err := listSegments(dir)
	if err != nil {
		return err
	}
	var body []byte
	for i, name := range segs {
		last := i == len(segs)-1
		body, err = scanSegment(filepath.Join(dir, name), uint8(signal), last, body, fn)
		if err != nil {
			return err
		}
	}
	return nil
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
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

func scanSegment(path string, signal uint8, last bool, body []byte, fn func(Record) error) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return body, fmt.Errorf("cannot open segment: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 256<<10)
	var hdr [segmentHeaderSize]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		if last {
			// A segment created just before a crash may have no header yet.
			return body, nil
		}
		return body, fmt.Errorf("%w: segment %s: cannot read header: %v", ErrCorrupt, path, err)
	}
	sig, err := parseSegmentHeader(hdr[:])
	if err != nil {
		return body, fmt.Errorf("%w: segment %s: %v", ErrCorrupt, path, err)
	}
	if sig != signal {
		return body, fmt.Errorf("%w: segment %s holds signal %d, want %d", ErrCorrupt, path, sig, signal)
	}
	offset := int64(segmentHeaderSize)
	name := filepath.Base(path)
	for {
		var rec Record
		var n int64
		rec, body, n, err = readRecord(br, body)
		if err == io.EOF {
			return body, nil
		}
		if err != nil {
			if last {
				// Torn tail: never acknowledged, see Scan.
				return body, nil
			}
			return body, fmt.Errorf("%w: segment %s offset %d: %v", ErrCorrupt, path, offset, err)
		}
		rec.Segment, rec.Offset = name, offset
		if err := fn(rec); err != nil {
			return body, err
		}
		offset += n
	}
}

// readRecord reads one record into buf. It returns io.EOF at a clean end,
// and another error for a partial or corrupt record.
// The returned Record's Data aliases the returned buffer, which the caller
// passes back in to reuse.
func readRecord(br *bufio.Reader, buf []byte) (Record, []byte, int64, error) {
	var h [recordHeaderSize]byte
	n, err := io.ReadFull(br, h[:])
	if err != nil {
		if n == 0 && err == io.EOF {
			return Record{}, buf, 0, io.EOF
		}
		return Record{}, buf, 0, errors.New("truncated record header")
	}
	bodyLen, crc := parseRecordHeader(h[:])
	if bodyLen < recordMetaSize || bodyLen > maxRecordBody {
		return Record{}, buf, 0, fmt.Errorf("record length %d is out of range", bodyLen)
	}
	if cap(buf) < bodyLen {
		buf = make([]byte, bodyLen)
	}
	buf = buf[:bodyLen]
	if _, err := io.ReadFull(br, buf); err != nil {
		return Record{}, buf, 0, errors.New("truncated record body")
	}
	if crc32.Checksum(buf, castagnoli) != crc {
		return Record{}, buf, 0, errors.New("record CRC mismatch")
	}
	meta := buf[:recordMetaSize]
	rec := Record{
		Time:  time.Unix(0, int64(binary.LittleEndian.Uint64(meta[0:8]))),
		Items: int(binary.LittleEndian.Uint32(meta[8:12])),
		Data:  buf[recordMetaSize:],
	}
	return rec, buf, int64(recordHeaderSize + bodyLen), nil
}
