package disk

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// On-disk format.
//
// A log is a directory of segment files named by a 20-digit sequence number
// ("00000000000000000001.seg"), read in name order. A segment starts with a
// fixed header and holds records back to back:
//
//	segment header (16 bytes):
//	  magic       [8]byte  "OTLPLOG\x00"
//	  version     uint8    formatVersion
//	  signal      uint8    storage.Signal
//	  compression uint8    0 = none (reserved for per-segment compression)
//	  reserved    [5]byte  zero
//
//	record:
//	  length uint32 LE  length of body
//	  crc    uint32 LE  CRC-32C (Castagnoli) of body
//	  body:
//	    time   int64 LE  receive time, Unix nanoseconds
//	    items  uint32 LE spans, data points or log records in payload
//	    payload          the Export*ServiceRequest protobuf
//
// The CRC covers the body, so a torn write (a crash mid-record) and a flipped
// bit are both detected; the length is covered indirectly because a wrong
// length makes the CRC fail.
const (
	segmentHeaderSize = 16
	recordHeaderSize  = 8
	recordMetaSize    = 12
	formatVersion     = 1
	// maxRecordBody bounds what a reader will allocate for one record, so a
	// corrupt length cannot make it reserve gigabytes. Requests are limited
	// to 64 MiB by default; this leaves ample room for larger configured
	// limits.
	maxRecordBody = 1 << 30
)

var segmentMagic = [8]byte{'O', 'T', 'L', 'P', 'L', 'O', 'G', 0}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func appendSegmentHeader(dst []byte, signal uint8) []byte {
	var h [segmentHeaderSize]byte
	copy(h[:], segmentMagic[:])
	h[8] = formatVersion
	h[9] = signal
	return append(dst, h[:]...)
}

func parseSegmentHeader(h []byte) (signal uint8, err error) {
	if len(h) < segmentHeaderSize {
		return 0, errors.New("segment header is truncated")
	}
	if [8]byte(h[:8]) != segmentMagic {
		return 0, errors.New("not an otlp-lite segment (bad magic)")
	}
	if h[8] != formatVersion {
		return 0, fmt.Errorf("segment format version %d is not supported (want %d)", h[8], formatVersion)
	}
	if h[10] != 0 {
		return 0, fmt.Errorf("segment compression %d is not supported", h[10])
	}
	return h[9], nil
}

// appendRecord appends one framed record to dst.
func appendRecord(dst []byte, unixNano int64, items int, payload []byte) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, recordHeaderSize+recordMetaSize)...)
	dst = append(dst, payload...)
	body := dst[start+recordHeaderSize:]
	binary.LittleEndian.PutUint64(body[0:8], uint64(unixNano))
	binary.LittleEndian.PutUint32(body[8:12], uint32(items))
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(body)))
	binary.LittleEndian.PutUint32(dst[start+4:], crc32.Checksum(body, castagnoli))
	return dst
}

// parseRecordHeader returns the body length and CRC of a record header.
func parseRecordHeader(h []byte) (bodyLen int, crc uint32) {
	return int(binary.LittleEndian.Uint32(h[0:4])), binary.LittleEndian.Uint32(h[4:8])
}
