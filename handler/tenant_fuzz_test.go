package handler

import (
	"strings"
	"testing"

	"github.com/otlp-lite/otlp-lite/otlp"
)

// FuzzParseQuotas: any file parses or is refused with a line-numbered
// error, never a panic; what parses holds only valid tenant names, shares
// in (0, 1], and a bucket for every rate.
func FuzzParseQuotas(f *testing.F) {
	f.Add([]byte("* bytes_per_second=4MiB items_per_second=20000 max_budget_share=0.25\nteam-a bytes_per_second=10MiB burst_bytes=40MiB items_per_second=50k max_request_bytes=8MiB\nteam-b bytes_per_second=0\n"))
	f.Add([]byte("# c\n\nteam-a items_per_second=1M burst_items=2M\n"))
	f.Add([]byte("a bytes_per_second=1.5GB\n* max_request_bytes=unlimited\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		q, err := ParseQuotas(data)
		if err != nil {
			if !strings.Contains(err.Error(), "line ") && !strings.Contains(err.Error(), "no quota lines") && !strings.Contains(err.Error(), "token too long") {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		check := func(name string, x Quota) {
			if x.MaxBudgetShare < 0 || x.MaxBudgetShare > 1 {
				t.Fatalf("%s: share %v", name, x.MaxBudgetShare)
			}
			if x.BytesPerSecond > 0 && x.BurstBytes <= 0 || x.ItemsPerSecond > 0 && x.BurstItems <= 0 {
				t.Fatalf("%s: a rate without a bucket: %+v", name, x)
			}
		}
		check("*", q.Default)
		if len(q.Order) != len(q.Tenants) {
			t.Fatalf("%d in order, %d tenants", len(q.Order), len(q.Tenants))
		}
		for name, x := range q.Tenants {
			if err := otlp.CheckTenantName(name); err != nil {
				t.Fatalf("tenant %q: %v", name, err)
			}
			check(name, x)
		}
	})
}

// FuzzParseTokenFile: any token file parses or is refused naming its
// line; every tenant it yields is a valid name.
func FuzzParseTokenFile(f *testing.F) {
	f.Add([]byte("plain-token\nteam-a-token tenant=team-a\n# comment\n\nteam-b\ttenant=team-b\n"))
	f.Add([]byte("Bearer abc\n"))
	f.Add([]byte("tok tenant=a tenant=b\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sums, tenants, has, err := parseTokenFile("f", data)
		if err != nil {
			if !strings.Contains(err.Error(), "line ") && !strings.Contains(err.Error(), "cannot read") {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		if len(sums) != len(tenants) {
			t.Fatalf("%d tokens, %d tenants", len(sums), len(tenants))
		}
		any := false
		for _, tn := range tenants {
			if tn != "" {
				any = true
				if err := otlp.CheckTenantName(tn); err != nil {
					t.Fatalf("tenant %q: %v", tn, err)
				}
			}
		}
		if any != has {
			t.Fatalf("hasTenants %v, tenants %q", has, tenants)
		}
	})
}
