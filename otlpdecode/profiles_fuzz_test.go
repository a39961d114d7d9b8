package otlpdecode

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/otlp-lite/otlp-lite/internal/pbtest"
)

// profileSeed reads one of the profiles payloads of testdata/profiles,
// written by the interop module's TestWriteProfileSeeds with the official
// generated types.
func profileSeed(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "profiles", name))
	if err != nil {
		tb.Fatalf("cannot read profiles payload: %v", err)
	}
	return b
}

// FuzzCheckProfiles holds CheckProfiles and AppendValidProfiles to the
// same contract as the other signals' targets (see consistency). Its seeds
// are the small generated payloads of testdata/profiles (the realistic one
// is too large to mutate usefully) and the hand-built requests of the unit
// tests, which break every rule once.
func FuzzCheckProfiles(f *testing.F) {
	for _, name := range []string{"profiles_small.pb", "profiles_invalid.pb"} {
		b := profileSeed(f, name)
		f.Add(b, false)
		f.Add(b, true)
	}
	f.Add([]byte(profilesRequest(testDict, profile(nil), profile(pb{}.Msg(2, pb{})))), false)
	f.Add([]byte(profilesRequest(dictWith(pb{}.Msg(2, pb{}.Msg(3, pb{}.Varint(1, 9)))), profile(nil))), true)
	f.Add([]byte(request(pb{}.Msg(1, pb{}.Varint(3, 2).Msg(2, pb{}.Varint(8, 9))), nil, []pb{profile(nil)}).Msg(2, testDict)), false)
	f.Fuzz(func(t *testing.T, src []byte, utf8 bool) {
		consistency(t, signalProfiles, src, &Options{ValidateUTF8: utf8, MaxAnyValueDepth: 4})
		visitedConsistency(t, signalProfiles, src, Options{ValidateUTF8: utf8, MaxAnyValueDepth: 4}, 3)
	})
}

// TestProfilesTruncationNeverPanics cuts the generated profiles payloads
// at every byte offset (every 7th for the realistic one) and mutates
// single bytes.
func TestProfilesTruncationNeverPanics(t *testing.T) {
	for _, tt := range []struct {
		file   string
		stride int
	}{
		{"profiles_small.pb", 1},
		{"profiles_invalid.pb", 1},
		{"profiles_realistic.pb", 97},
	} {
		src := profileSeed(t, tt.file)
		if pbtest.RaceEnabled {
			tt.stride *= 11
		}
		for n := 0; n <= len(src); n += tt.stride {
			consistency(t, signalProfiles, src[:n:n], utf8Opts)
		}
		buf := make([]byte, len(src))
		for i := 0; i < len(src); i += tt.stride {
			copy(buf, src)
			buf[i] ^= 0xff
			consistency(t, signalProfiles, buf, nil)
			buf[i] = 0x80
			consistency(t, signalProfiles, buf, utf8Opts)
			buf[i] = 0x7f
			consistency(t, signalProfiles, buf, nil)
		}
	}
}

// TestProfilesSeeds: the generated payloads hold what their builders put
// in them.
func TestProfilesSeeds(t *testing.T) {
	for _, tt := range []struct {
		file                     string
		items, rejected, samples int
		firstRejectionPrefix     string
	}{
		{"profiles_realistic.pb", 6, 0, 420, ""},
		{"profiles_small.pb", 4, 0, 12, ""},
		{"profiles_invalid.pb", 4, 3, 12, "resource_profiles[0].scope_profiles[0].profiles[0]: profile_id is 3 bytes"},
	} {
		res, err := CheckProfiles(profileSeed(t, tt.file), utf8Opts)
		if err != nil {
			t.Fatal(err)
		}
		if res.Items != tt.items || res.Rejected != tt.rejected || res.Samples != tt.samples || res.FirstRejection[:min(len(res.FirstRejection), len(tt.firstRejectionPrefix))] != tt.firstRejectionPrefix {
			t.Errorf("%s: %+v", tt.file, res)
		}
	}
}

// TestProfilesZeroAllocs: checking a profile and its samples allocates
// nothing, with or without the UTF-8 check, whatever the request's size.
func TestProfilesZeroAllocs(t *testing.T) {
	for _, name := range []string{"profiles_realistic.pb", "profiles_small.pb"} {
		src := profileSeed(t, name)
		for _, opts := range []*Options{nil, utf8Opts} {
			fn := func() { mustOK(t)(CheckProfiles(src, opts)) }
			fn() // warm-up
			if n := testing.AllocsPerRun(20, fn); n != 0 {
				t.Errorf("CheckProfiles(%s, %+v): %v allocations per run, want 0", name, opts, n)
			}
		}
	}
	// AppendValidProfiles, like the other signals' AppendValid, allocates
	// its checker (it is passed to the item function), once per request:
	// never per profile or sample.
	for _, name := range []string{"profiles_invalid.pb", "profiles_realistic.pb"} {
		src := profileSeed(t, name)
		dst := make([]byte, 0, len(src))
		fn := func() {
			var err error
			if dst, err = AppendValidProfiles(dst[:0], src, nil); err != nil {
				t.Fatal(err)
			}
		}
		fn()
		if n := testing.AllocsPerRun(20, fn); n > 1 {
			t.Errorf("AppendValidProfiles(%s): %v allocations per run, want at most 1", name, n)
		}
	}
}

func BenchmarkCheckProfiles(b *testing.B) {
	src := profileSeed(b, "profiles_realistic.pb")
	res, err := CheckProfiles(src, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, bb := range []struct {
		name string
		opts *Options
	}{{"realistic", nil}, {"realistic-utf8", utf8Opts}} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(src)))
			b.ResetTimer()
			for range b.N {
				if _, err := CheckProfiles(src, bb.opts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(res.Samples), "ns/sample")
		})
	}
}

// FuzzProfilesPacked holds the 8-byte readers of packed runs
// (countShortVarints, and validIndices8 inside checker.indices) to a
// varint-by-varint reading with binary.Uvarint, on any bytes and any table
// size.
func FuzzProfilesPacked(f *testing.F) {
	f.Add([]byte{0x01, 0x85, 0x07, 0x7f, 0x80, 0x01, 0x00, 0x02, 0x03, 0xff, 0x06}, uint16(901))
	f.Add([]byte(packed(-1, 5, 1<<40, 127, 128)), uint16(129))
	f.Fuzz(func(t *testing.T, run []byte, size uint16) {
		// The reference reading.
		var values []uint64
		valid := true
		for rest := run; len(rest) > 0; {
			v, k := binary.Uvarint(rest)
			if k <= 0 {
				valid = false
				break
			}
			values = append(values, v)
			rest = rest[k:]
		}
		if n, ok := countShortVarints(run); ok && (!valid || n != len(values)) {
			t.Fatalf("countShortVarints = %d, true; want %d, valid %v", n, len(values), valid)
		}
		c := checker{profiles: true}
		c.dict.len[tableLocation] = int(size)
		fld := lenField(t, 1, run)
		var r reason
		n := 0
		err := c.indices(&fld, "location_indices", tableLocation, &n, &r)
		if (err == nil) != valid {
			t.Fatalf("indices: %v; the run is valid: %v", err, valid)
		}
		if err != nil {
			return
		}
		bad := -1
		for i, v := range values {
			if !inRange(v, int(size)) {
				bad = i
				break
			}
		}
		if n != len(values) || (bad < 0) == r.bad() || (bad >= 0 && r.path[0].idx != bad) {
			t.Fatalf("indices: %d elements, %q; want %d, first bad %d", n, r, len(values), bad)
		}
	})
}
