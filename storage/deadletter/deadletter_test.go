package deadletter

import (
	"testing"

	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// TestBoundOptions: segments are an eighth of the bound, within
// [64 KiB, the disk store's default], so that retention keeps a store
// within 1.5 × its bound.
func TestBoundOptions(t *testing.T) {
	for _, c := range []struct {
		max, seg int64
	}{
		{0, disk.DefaultMaxSegmentSize},
		{1 << 20, 128 << 10},
		{100 << 10, 64 << 10},
		{1 << 40, disk.DefaultMaxSegmentSize},
	} {
		o := Bound{MaxBytes: c.max}.Options(nil)
		if o.MaxSegmentSize != c.seg || o.MaxBytes != c.max {
			t.Errorf("bound %d: segments of %d, max %d; want %d", c.max, o.MaxSegmentSize, o.MaxBytes, c.seg)
		}
	}
}
