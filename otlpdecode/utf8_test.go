package otlpdecode

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestValidUTF8 compares validUTF8 with utf8.Valid on every length from 0
// to 40 with a non-ASCII or invalid byte sequence at every position, so each
// word, overlap and tail case of the fast path is exercised.
func TestValidUTF8(t *testing.T) {
	inserts := []string{"", "é", "\xff", "\xc3", "日本", "\xed\xa0\x80", "\x80"}
	for n := 0; n <= 40; n++ {
		base := strings.Repeat("a", n)
		for pos := 0; pos <= n; pos++ {
			for _, ins := range inserts {
				s := base[:pos] + ins + base[pos:]
				if got, want := validUTF8([]byte(s)), utf8.ValidString(s); got != want {
					t.Fatalf("validUTF8(%q) = %v, want %v", s, got, want)
				}
				if got, want := validUTF8String(s), utf8.ValidString(s); got != want {
					t.Fatalf("validUTF8String(%q) = %v, want %v", s, got, want)
				}
			}
		}
	}
}

func FuzzValidUTF8(f *testing.F) {
	for _, s := range []string{"", "a", "abcdefgh", "abcdefghi\xff", "日本語テキスト", "\xed\xa0\x80abc"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validUTF8(b), utf8.Valid(b); got != want {
			t.Fatalf("validUTF8(%q) = %v, want %v", b, got, want)
		}
	})
}
