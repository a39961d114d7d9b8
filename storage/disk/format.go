package disk

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/otlp-lite/otlp-lite/storage"
)

// On-disk format.
//
// The data directory holds one log per signal, in a directory named after it
// (traces, metrics, logs, profiles); a directory written before profiles
// existed has no profiles directory, and Open creates it: the other logs
// and their format are unchanged.
//
// A log is a directory of segment files named by a 20-digit sequence number
// ("00000000000000000001.seg"), read in name order. A segment starts with a
// fixed header and holds records back to back:
//
//	segment header (16 bytes):
//	  magic       [8]byte  "OTLPLOG\x00"
//	  version     uint8    1, 2 or 3 (formatVersion); see below
//	  signal      uint8    storage.Signal
//	  compression uint8    0 = none, 1 = zstd (version 2 only)
//	  reserved    [5]byte  zero
//
//	record:
//	  length uint32 LE  length of body
//	  crc    uint32 LE  CRC-32C (Castagnoli) of body
//	  body:
//	    time   int64 LE  receive time, Unix nanoseconds
//	    items  uint32 LE spans, data points, log records or profiles in
//	                     payload; the top bit (recordTenantFlag, version 3)
//	                     says a tenant follows
//	    tenant           (only with recordTenantFlag) length uint8, then
//	                     that many bytes: the tenant's name (tenant.go)
//	    key              (only with recordKeyFlag, version 4) the request's
//	                     idempotency key and its answer (keys.go)
//	    payload          the Export*ServiceRequest protobuf; in a zstd
//	                     segment, one zstd frame holding it
//
// The CRC covers the body, so a torn write (a crash mid-record) and a flipped
// bit are both detected; the length is covered indirectly because a wrong
// length makes the CRC fail.
//
// Versions: version 1 segments (written before compression existed) have a
// zero compression byte and are read as they always were; version 2 adds the
// compression byte. Compression is chosen per segment, so changing
// -storage-compression affects only segments created afterwards and every
// old segment stays readable. Version 3 adds the tenant of a record
// (tenant.go): its records may set recordTenantFlag; a record without it
// belongs to otlp.DefaultTenant, as does every record of versions 1
// and 2, so existing data directories open unchanged and read as the
// default tenant. A binary older than version 3 refuses version 3
// segments rather than misreading them. Version 4 adds a record's
// idempotency key (keys.go, recordKeyFlag); a binary older than version 4
// refuses version 4 segments, and every older segment reads as before
// (records without keys).
const (
	segmentHeaderSize = 16
	recordHeaderSize  = 8
	recordMetaSize    = 12
	formatVersion     = 4
	// maxRecordBody bounds what a reader will allocate for one record, so a
	// corrupt length cannot make it reserve gigabytes. Requests are limited
	// to 64 MiB by default; this leaves ample room for larger configured
	// limits.
	maxRecordBody = 1 << 30
)

// Compression is the per-segment record compression, stored in the segment
// header.
type Compression uint8

const (
	// CompressionNone stores payloads as received.
	CompressionNone Compression = 0
	// CompressionZstd stores each payload as one zstd frame. OTLP payloads
	// (repeated attribute keys, resource blocks, ids) typically shrink 4–10x.
	CompressionZstd Compression = 1
)

// String returns "none" or "zstd".
func (c Compression) String() string {
	switch c {
	case CompressionNone:
		return "none"
	case CompressionZstd:
		return "zstd"
	}
	return fmt.Sprintf("compression(%d)", uint8(c))
}

// ParseCompression is the inverse of Compression.String.
func ParseCompression(name string) (Compression, error) {
	switch name {
	case "none", "":
		return CompressionNone, nil
	case "zstd":
		return CompressionZstd, nil
	}
	return 0, fmt.Errorf("unknown compression %q: want zstd or none", name)
}

var segmentMagic = [8]byte{'O', 'T', 'L', 'P', 'L', 'O', 'G', 0}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// segmentHeader is the decoded fixed header of a segment.
type segmentHeader struct {
	version     uint8
	signal      uint8
	compression Compression
}

func appendSegmentHeader(dst []byte, signal uint8, c Compression) []byte {
	var h [segmentHeaderSize]byte
	copy(h[:], segmentMagic[:])
	h[8] = formatVersion
	h[9] = signal
	h[10] = uint8(c)
	return append(dst, h[:]...)
}

func parseSegmentHeader(h []byte) (segmentHeader, error) {
	if len(h) < segmentHeaderSize {
		return segmentHeader{}, errors.New("segment header is truncated")
	}
	if [8]byte(h[:8]) != segmentMagic {
		return segmentHeader{}, errors.New("not an otlp-lite segment (bad magic)")
	}
	sh := segmentHeader{version: h[8], signal: h[9], compression: Compression(h[10])}
	switch sh.version {
	case 1:
		if sh.compression != CompressionNone {
			return segmentHeader{}, fmt.Errorf("segment format version 1 with compression %d is not valid", h[10])
		}
	case 2, 3, 4:
		if sh.compression != CompressionNone && sh.compression != CompressionZstd {
			return segmentHeader{}, fmt.Errorf("segment compression %d is not supported", h[10])
		}
	default:
		return segmentHeader{}, fmt.Errorf("segment format version %d is not supported (want 1 to %d)", h[8], formatVersion)
	}
	return sh, nil
}

// appendRecord appends one framed record to dst; payload is stored as given
// (already compressed, in a zstd segment).
func appendRecord(dst []byte, unixNano int64, items int, payload []byte) []byte {
	return appendTenantRecord(dst, unixNano, items, "", payload)
}

// appendTenantRecord is appendRecord for a record of tenant ("": none).
func appendTenantRecord(dst []byte, unixNano int64, items int, tenant string, payload []byte) []byte {
	return appendKeyedRecord(dst, unixNano, items, tenant, nil, payload)
}

// appendKeyedRecord is appendTenantRecord for a record with an idempotency
// key (nil: none; keys.go). items must be below recordKeyFlag.
func appendKeyedRecord(dst []byte, unixNano int64, items int, tenant string, key *storage.StoredKey, payload []byte) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, recordHeaderSize+recordMetaSize)...)
	meta := uint32(items)
	if tenant != "" {
		meta |= recordTenantFlag
		dst = append(dst, byte(len(tenant)))
		dst = append(dst, tenant...)
	}
	if key != nil {
		meta |= recordKeyFlag
		dst = appendRecordKey(dst, key)
	}
	dst = append(dst, payload...)
	body := dst[start+recordHeaderSize:]
	binary.LittleEndian.PutUint64(body[0:8], uint64(unixNano))
	binary.LittleEndian.PutUint32(body[8:12], meta)
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(body)))
	binary.LittleEndian.PutUint32(dst[start+4:], crc32.Checksum(body, castagnoli))
	return dst
}

// parseRecordHeader returns the body length and CRC of a record header.
func parseRecordHeader(h []byte) (bodyLen int, crc uint32) {
	return int(binary.LittleEndian.Uint32(h[0:4])), binary.LittleEndian.Uint32(h[4:8])
}

// parseRecordMeta returns the receive time and item count at the start of a
// record body.
func parseRecordMeta(body []byte) (unixNano int64, items int) {
	return int64(binary.LittleEndian.Uint64(body[0:8])), int(binary.LittleEndian.Uint32(body[8:12]) &^ (recordTenantFlag | recordKeyFlag))
}

// recordHasTenant reports whether the record body's meta says a tenant
// follows it.
func recordHasTenant(body []byte) bool {
	return binary.LittleEndian.Uint32(body[8:12])&recordTenantFlag != 0
}

// plausibleHeader is the cheap pre-check used when resynchronising after
// corruption (see segmentReader.resync): before paying for a CRC over a
// candidate body, the candidate's length must fit in the segment, its item
// count must not exceed its payload bytes (every OTLP item takes at least one
// byte; not checked for compressed payloads), and its time must lie within a century of now. Random bytes pass
// all three about once in 10^5 offsets, so a resync over a damaged region
// computes few CRCs; a real record always passes.
func plausibleHeader(h []byte, remaining int64, compressed bool) bool {
	bodyLen, _ := parseRecordHeader(h)
	if bodyLen < recordMetaSize || int64(bodyLen) > remaining-recordHeaderSize || bodyLen > maxRecordBody {
		return false
	}
	ts, items := parseRecordMeta(h[recordHeaderSize:])
	if !compressed && items > bodyLen-recordMetaSize {
		return false
	}
	now := time.Now().UnixNano()
	const century = int64(100 * 365 * 24 * time.Hour)
	return ts > now-century && ts < now+century
}
