package otlp

import (
	"strings"
	"testing"
)

func TestCheckTenantName(t *testing.T) {
	for _, ok := range []string{"a", "team-a", "Team_B.prod", strings.Repeat("x", MaxTenantNameLength)} {
		if err := CheckTenantName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for name, want := range map[string]string{
		"": "is empty",
		strings.Repeat("x", MaxTenantNameLength+1): "151 bytes long",
		"..":     "not allowed",
		"a/b":    "byte 2 (0x2f)",
		"a\x00b": "byte 2 (0x00)",
		"tëam":   "byte 2 (0xc3)",
		"a b":    "byte 2 (0x20)",
		"~other": "byte 1 (0x7e)",
	} {
		if err := CheckTenantName(name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", name, err, want)
		}
	}
}

// The receiver's own tenant is a tenant, but not one a client may name.
func TestSelfTenantIsReserved(t *testing.T) {
	if err := CheckTenantName(SelfTenant); err != nil {
		t.Fatalf("CheckTenantName(%q): %v", SelfTenant, err)
	}
	if err := CheckClientTenantName(SelfTenant); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Fatalf("CheckClientTenantName(%q): %v, want reserved", SelfTenant, err)
	}
	if err := CheckClientTenantName("team-a"); err != nil {
		t.Fatalf("CheckClientTenantName(team-a): %v", err)
	}
	if err := CheckClientTenantName("a/b"); err == nil {
		t.Fatal("CheckClientTenantName(a/b): no error")
	}
}
