package bench

import (
	"os"
	"testing"

	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/otlp-lite/otlp-lite/otlpdecode"
)

// The profiles payload is otlpdecode's realistic seed, written by the
// interop module's TestWriteProfileSeeds with the official generated types:
// 3 resources, 6 profiles, 420 samples over one shared dictionary (900
// locations, 400 functions, 220 stacks 8 to 96 frames deep).
func profilesPayload(tb testing.TB) []byte {
	tb.Helper()
	src, err := os.ReadFile("../otlpdecode/testdata/profiles/profiles_realistic.pb")
	if err != nil {
		tb.Fatal(err)
	}
	return src
}

// TestProfilesAgree: on the benchmark payload, CheckProfiles accepts every
// profile and counts the profiles and samples pdata counts, so that the
// benchmark compares like with like.
func TestProfilesAgree(t *testing.T) {
	src := profilesPayload(t)
	res, err := otlpdecode.CheckProfiles(src, &otlpdecode.Options{ValidateUTF8: true})
	if err != nil {
		t.Fatal(err)
	}
	pd, err := (&pprofile.ProtoUnmarshaler{}).UnmarshalProfiles(src)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rejected != 0 || res.Items != pd.ProfileCount() || res.Samples != pd.SampleCount() {
		t.Fatalf("CheckProfiles = %+v; pdata counts %d profiles, %d samples", res, pd.ProfileCount(), pd.SampleCount())
	}
	if !raceEnabled {
		if n := testing.AllocsPerRun(20, func() { _, _ = otlpdecode.CheckProfiles(src, nil) }); n != 0 {
			t.Fatalf("CheckProfiles: %v allocations per request, want 0", n)
		}
	}
}

// BenchmarkProfiles compares otlpdecode's validation of a profiles request
// with pdata's pprofile unmarshal of it, the Collector's first step on a
// profiles export, per sample: runPerItem's items are samples here, so
// ns/item and cpu-ns/item read as ns and CPU ns per sample (the
// dictionary's cost included, spread over the samples that use it).
// `benchstat -col /dec` puts them side by side; the target is check's
// cpu-ns/item at most 0.2 of pdata's.
func BenchmarkProfiles(b *testing.B) {
	src := profilesPayload(b)
	pd, err := (&pprofile.ProtoUnmarshaler{}).UnmarshalProfiles(src)
	if err != nil {
		b.Fatal(err)
	}
	s := shape{name: "realistic", items: pd.SampleCount(), src: src}
	check := func(opts *otlpdecode.Options) func([]byte) (int, error) {
		return func(src []byte) (int, error) {
			res, err := otlpdecode.CheckProfiles(src, opts)
			return res.Samples, err
		}
	}
	b.Run("payload="+s.name+"/dec=check", func(b *testing.B) { runPerItem(b, s, check(nil)) })
	b.Run("payload="+s.name+"/dec=check-utf8", func(b *testing.B) {
		runPerItem(b, s, check(&otlpdecode.Options{ValidateUTF8: true}))
	})
	b.Run("payload="+s.name+"/dec=pdata", func(b *testing.B) {
		u := &pprofile.ProtoUnmarshaler{}
		runPerItem(b, s, func(src []byte) (int, error) {
			pd, err := u.UnmarshalProfiles(src)
			return pd.SampleCount(), err
		})
	})
}
