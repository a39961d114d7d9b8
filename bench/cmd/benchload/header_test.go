package main

import "testing"

// -header takes "Name: value" (spaces around either trimmed), repeatable;
// a value may hold colons; a missing colon or name is an error.
func TestHeaderList(t *testing.T) {
	var h headerList
	for _, s := range []string{"X-Scope-OrgID: team-a", "x-note:a:b", "Empty:"} {
		if err := h.Set(s); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
	}
	want := headerList{{"X-Scope-OrgID", "team-a"}, {"x-note", "a:b"}, {"Empty", ""}}
	if len(h) != len(want) {
		t.Fatalf("got %v", h)
	}
	for i := range want {
		if h[i] != want[i] {
			t.Errorf("header %d: %q, want %q", i, h[i], want[i])
		}
	}
	for _, bad := range []string{"no-colon", ": value", ""} {
		if err := h.Set(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
