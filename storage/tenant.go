package storage

import (
	"context"

	"github.com/otlp-lite/otlp-lite/otlp"
)

// The tenant facts (the default tenant, the name rule, the context that
// carries a write's tenant) are otlp's (otlp/tenant.go), the bottom of the
// module, so that a client need not import storage to send a tenant on.
// These names stay for the callers not yet moved to otlp.

// DefaultTenant is otlp.DefaultTenant.
//
// Deprecated: use otlp.DefaultTenant.
const DefaultTenant = otlp.DefaultTenant

// MaxTenantNameLength is otlp.MaxTenantNameLength.
//
// Deprecated: use otlp.MaxTenantNameLength.
const MaxTenantNameLength = otlp.MaxTenantNameLength

// CheckTenantName is otlp.CheckTenantName.
//
// Deprecated: use otlp.CheckTenantName.
func CheckTenantName(name string) error { return otlp.CheckTenantName(name) }

// WithTenant is otlp.WithTenant.
//
// Deprecated: use otlp.WithTenant.
func WithTenant(ctx context.Context, tenant string) context.Context {
	return otlp.WithTenant(ctx, tenant)
}

// WithClientTenant is otlp.WithClientTenant.
//
// Deprecated: use otlp.WithClientTenant.
func WithClientTenant(ctx context.Context, tenant string) context.Context {
	return otlp.WithClientTenant(ctx, tenant)
}

// TenantFrom is otlp.TenantFrom.
//
// Deprecated: use otlp.TenantFrom.
func TenantFrom(ctx context.Context) (string, bool) { return otlp.TenantFrom(ctx) }

// TenantFromClient is otlp.TenantFromClient.
//
// Deprecated: use otlp.TenantFromClient.
func TenantFromClient(ctx context.Context) bool { return otlp.TenantFromClient(ctx) }
