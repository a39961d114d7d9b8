package handler

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/otlp-lite/otlp-lite/compression"
)

// BenchmarkExportGRPC500x10Tenant is BenchmarkExportGRPC500x10 with
// tenancy on: the tenant from X-Scope-OrgID, a quota file whose buckets
// (bytes and items) and budget share are charged on every request but
// never run out. The difference is tenancy's cost per span.
func BenchmarkExportGRPC500x10Tenant(b *testing.B) {
	path := filepath.Join(b.TempDir(), "quotas")
	if err := os.WriteFile(path, []byte("* bytes_per_second=1000GiB items_per_second=1000000000000 max_budget_share=0.5\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	qf, err := NewQuotaFile(path)
	if err != nil {
		b.Fatal(err)
	}
	cfg := Config{Tenants: &TenantConfig{Quotas: qf}}
	benchmarkExportWith(b, cfg, map[string]string{"X-Scope-OrgID": "team-a"}, traceExport, "application/grpc", compression.Identity, loadPayload(b, "traces_500x10.pb"), 0)
}

// BenchmarkExportHTTPProtobuf500x10Tenant is the same over OTLP/HTTP.
func BenchmarkExportHTTPProtobuf500x10Tenant(b *testing.B) {
	benchmarkExportWith(b, Config{Tenants: &TenantConfig{Quotas: benchQuotas(b)}}, map[string]string{"X-Scope-OrgID": "team-a"}, "/v1/traces", "application/x-protobuf", compression.Identity, loadPayload(b, "traces_500x10.pb"), 0)
}

// benchQuotas is a quota file whose buckets and budget share are charged
// on every request but never run out.
func benchQuotas(b *testing.B) *QuotaFile {
	path := filepath.Join(b.TempDir(), "quotas")
	if err := os.WriteFile(path, []byte("* bytes_per_second=1000GiB items_per_second=1000000000000 max_budget_share=0.5 max_request_bytes=32MiB\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	qf, err := NewQuotaFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return qf
}
