package otlpview_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/otlp-lite/otlp-lite/internal/viewwalk"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
	. "github.com/otlp-lite/otlp-lite/otlpview"
)

// profilesPayload reads one of otlpdecode's profiles payloads, written by
// the interop module with the official generated types.
func profilesPayload(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("..", "otlpdecode", "testdata", "profiles", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// walkProfiles decodes src and reads every field of every profile, its
// samples resolved against the dictionary.
func walkProfiles(d *ProfilesDecoder, src []byte) (viewwalk.Sink, int, error) {
	var sink viewwalk.Sink
	samples := 0
	err := d.Decode(src, func(res *Resource, scope *Scope, p *Profile) error {
		if err := sink.Resource(res); err != nil {
			return err
		}
		it := p.Samples.Iter()
		for it.Next() {
			samples++
		}
		if err := it.Err(); err != nil {
			return err
		}
		return sink.Profile(p)
	})
	return sink, samples, err
}

// TestProfilesDecoder reads the realistic profiles request in full: as
// many profiles and samples as CheckProfiles counts, every stack resolved
// to functions with names.
func TestProfilesDecoder(t *testing.T) {
	src := profilesPayload(t, "profiles_realistic.pb")
	res, err := otlpdecode.CheckProfiles(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	var d ProfilesDecoder
	sink, samples, err := walkProfiles(&d, src)
	if err != nil || sink.N != res.Items || samples != res.Samples || sink.Bytes == 0 {
		t.Fatalf("%d profiles, %d samples, %d bytes of strings, %v; CheckProfiles %+v", sink.N, samples, sink.Bytes, err, res)
	}
	named := 0
	if err := d.Decode(src, func(_ *Resource, _ *Scope, p *Profile) error {
		if p.SampleType.Type == "" {
			t.Errorf("a profile without its sample type's name")
		}
		it := p.Samples.Iter()
		for it.Next() {
			li := it.Sample().Stack.Iter()
			for li.Next() {
				lines := li.Location().Lines.Iter()
				for lines.Next() {
					if lines.Line().Function.Name != "" {
						named++
					}
				}
			}
		}
		return it.Err()
	}); err != nil {
		t.Fatal(err)
	}
	if named == 0 {
		t.Fatal("no function name resolved")
	}
}

// FuzzDecodeProfiles: the profiles decoder and every resolving iterator
// never panic, and decode whatever CheckProfiles accepts.
func FuzzDecodeProfiles(f *testing.F) {
	for _, name := range []string{"profiles_small.pb", "profiles_invalid.pb"} {
		b := profilesPayload(f, name)
		f.Add(b, false)
	}
	var d ProfilesDecoder
	f.Fuzz(func(t *testing.T, src []byte, _ bool) {
		_, _, err := walkProfiles(&d, src)
		if err == nil {
			return
		}
		// An index out of range is an error of the views only on what
		// CheckProfiles rejects; anything else it must refuse too.
		if res, cerr := otlpdecode.CheckProfiles(src, nil); cerr == nil && res.Rejected == 0 {
			t.Fatalf("Decode refuses what CheckProfiles accepts: %v", err)
		}
	})
}
