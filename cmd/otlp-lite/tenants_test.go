package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The tenancy flags are checked at parse time: one line, exit 2.
func TestTenantFlagsCheckedAtParseTime(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badQuotas := write("quotas", "team-a bytes_per_second=10MiB\nteam-b burst=3\n")
	goodQuotas := write("good-quotas", "* items_per_second=1000\n")
	tenantTokens := write("tokens", "tok tenant=team/a\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-tenant-header", "X-Scope-OrgID", "-tenant-quota-file", badQuotas}, `line 2: unknown key "burst"`},
		{[]string{"-tenant-header", "X-Scope-OrgID", "-tenant-quota-file", filepath.Join(dir, "missing")}, "-tenant-quota-file"},
		{[]string{"-tenant-quota-file", goodQuotas}, "need a tenant source"},
		{[]string{"-tenant-required"}, "need a tenant source"},
		{[]string{"-tenant-header", "X Scope"}, "-tenant-header"},
		{[]string{"-tenant-header", "X-Scope-OrgID", "-tenant-sources", "header,cookie"}, `unknown tenant source "cookie"`},
		{[]string{"-tenant-header", "X-Scope-OrgID", "-tenant-sources", "token,cert"}, "lists none of the configured tenant sources"},
		{[]string{"-tenant-header", "X-Scope-OrgID", "-tenant-default", "a b"}, "-tenant-default"},
		{[]string{"-tenant-from-cert", "email"}, "want cn, san-dns or ou"},
		{[]string{"-tenant-from-cert", "cn"}, "needs -tls-client-ca"},
		{[]string{"-auth-token-file", tenantTokens}, "line 1: the tenant name has byte 5"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"serve", "-data-dir", dir}, tc.args...), &stdout, &stderr)
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		if code != 2 || len(lines) != 1 || !strings.Contains(lines[0], tc.want) {
			t.Errorf("serve %v: exit %d, stderr %q; want exit 2 and one line mentioning %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}
