package quote

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", `""`},
		{"SPAN_KIND_SERVER", `"SPAN_KIND_SERVER"`},
		{"a\x00\n\"", `"a\x00\n\""`},
		{strings.Repeat("a", MaxPrefix), `"` + strings.Repeat("a", MaxPrefix) + `"`},
		{strings.Repeat("a", 32<<20), `"` + strings.Repeat("a", MaxPrefix) + `"... (33554432 bytes)`},
		// Cut at a rune boundary: 'é' is two bytes.
		{"a" + strings.Repeat("é", MaxPrefix), `"a` + strings.Repeat("é", MaxPrefix/2-1) + `"... (129 bytes)`},
	} {
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%.20q) = %s, want %s", tc.in, got, tc.want)
		}
		if got := Bytes([]byte(tc.in)); got != tc.want {
			t.Errorf("Bytes(%.20q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// FuzzString: whatever the input, the quote is short, valid UTF-8, and
// starts with the quoted prefix of the input.
func FuzzString(f *testing.F) {
	for _, s := range []string{"", "x", strings.Repeat("\xff", 100), strings.Repeat("😀", 40), strings.Repeat("\x01", MaxPrefix+1)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := String(s)
		if len(q) > 4*MaxPrefix+32 || !utf8.ValidString(q) {
			t.Fatalf("String(%q) = %q: %d bytes", s, q, len(q))
		}
		if Bytes([]byte(s)) != q {
			t.Fatalf("Bytes and String differ for %q", s)
		}
	})
}
