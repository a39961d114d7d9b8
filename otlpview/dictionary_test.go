package otlpview

import (
	"testing"

	"github.com/otlp-lite/otlp-lite/internal/pbtest"
	"github.com/otlp-lite/otlp-lite/otlppb"
)

// TestDictionaryMemoryBound: the index of a dictionary made of the
// smallest entries (2 bytes each: an empty string) holds at most twice the
// request's size, and a dictionary split in many occurrences no more.
func TestDictionaryMemoryBound(t *testing.T) {
	const entries = 100_000
	var dict pbtest.PB
	for range entries {
		dict = dict.Str(otlppb.ProfilesDictionaryStringTable, "")
	}
	one := pbtest.PB{}.Msg(otlppb.ExportProfilesServiceRequestDictionary, dict)
	var split pbtest.PB
	for range entries / 100 {
		split = split.Msg(otlppb.ExportProfilesServiceRequestDictionary, dict[:200])
	}
	for _, src := range []pbtest.PB{one, split} {
		var d Dictionary
		if err := d.load(src); err != nil {
			t.Fatal(err)
		}
		held := 0
		for _, offs := range d.offs {
			held += 4 * cap(offs)
		}
		// The allocator rounds a large buffer up to its pages (8 KiB).
		if d.Len(otlppb.ProfilesDictionaryStringTable) != entries || held > 2*len(src)+8<<10 {
			t.Fatalf("%d strings indexed in %d bytes for a request of %d bytes, want at most twice", d.Len(otlppb.ProfilesDictionaryStringTable), held, len(src))
		}
	}
}
