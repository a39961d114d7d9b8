package disk

import (
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// One encoder and one decoder serve the whole process: EncodeAll and
// DecodeAll are safe for concurrent use and keep their own pools of block
// state, so a record costs no encoder set-up.
var (
	zstdOnce sync.Once
	zstdEnc  *zstd.Encoder
	zstdDec  *zstd.Decoder
)

func initZstd() {
	var err error
	// SpeedFastest: compression runs on the write path of every request;
	// the fastest level still removes most of OTLP's redundancy (repeated
	// keys and resources) at several hundred MB/s per core.
	zstdEnc, err = zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstd.SpeedFastest),
		zstd.WithEncoderConcurrency(1),
		zstd.WithZeroFrames(true),
		zstd.WithEncoderCRC(false), // the record CRC covers the frame
	)
	if err != nil {
		panic(fmt.Sprintf("BUG: cannot create zstd encoder: %v", err))
	}
	zstdDec, err = zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(0),
		// A corrupt or hostile frame must not make a reader allocate more
		// than a record may hold.
		zstd.WithDecoderMaxMemory(maxRecordBody),
	)
	if err != nil {
		panic(fmt.Sprintf("BUG: cannot create zstd decoder: %v", err))
	}
}

// compressPayload appends the zstd frame of src to dst.
func compressPayload(dst, src []byte) []byte {
	zstdOnce.Do(initZstd)
	return zstdEnc.EncodeAll(src, dst)
}

// decompressPayload appends the payload held in the zstd frame src to dst.
func decompressPayload(dst, src []byte) ([]byte, error) {
	zstdOnce.Do(initZstd)
	out, err := zstdDec.DecodeAll(src, dst)
	if err != nil {
		return dst, fmt.Errorf("cannot decompress record: %w", err)
	}
	return out, nil
}
