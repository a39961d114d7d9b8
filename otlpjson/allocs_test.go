package otlpjson

import (
	"testing"
)

// TestAllocs proves the steady state of Marshal and Unmarshal allocates
// nothing when dst has room: scratch state comes from a sync.Pool, strings
// without escapes are not copied, and errors are the only fmt users.
func TestAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	for _, tc := range marshalCases() {
		if tc.t == Status {
			continue // error bodies are rare; decodeAny uses closures
		}
		t.Run(tc.name, func(t *testing.T) {
			js := []byte(tc.want)
			dst := make([]byte, 0, 64<<10)
			if n := testing.AllocsPerRun(100, func() {
				var err error
				if dst, err = Marshal(dst[:0], tc.t, tc.src); err != nil {
					t.Fatal(err)
				}
			}); n != 0 {
				t.Errorf("Marshal allocates %v times per run", n)
			}
			if n := testing.AllocsPerRun(100, func() {
				var err error
				if dst, err = Unmarshal(dst[:0], tc.t, js); err != nil {
					t.Fatal(err)
				}
			}); n != 0 {
				t.Errorf("Unmarshal allocates %v times per run", n)
			}
		})
	}
}
