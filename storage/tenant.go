package storage

import "context"

// DefaultTenant is the tenant of data stored without one: everything a
// receiver stored with tenancy off, and records of the disk log written
// before tenants existed. A receiver with tenancy on stores every record
// under an explicit tenant (its -tenant-default, "default" unless set).
const DefaultTenant = "default"

// The tenant of a write travels in the context given to Sink.Write rather
// than as a new argument: the Sink interface stays as it is, so every
// existing implementation (the disk log, Kafka, discard, an embedder's own)
// keeps compiling and working, and a sink that cares asks with TenantFrom.
// It costs nothing when tenancy is off: no value is set, and a sink that
// does not ask pays nothing.

type tenantKey struct{}

// WithTenant returns ctx carrying tenant, the name of the tenant the data
// of the request belongs to (already validated by the receiver).
func WithTenant(ctx context.Context, tenant string) context.Context {
	return context.WithValue(ctx, tenantKey{}, tenant)
}

// TenantFrom returns the tenant of the write whose context is ctx, and
// whether the receiver set one (false when tenancy is off; the data then
// belongs to DefaultTenant).
func TenantFrom(ctx context.Context) (string, bool) {
	t, ok := ctx.Value(tenantKey{}).(string)
	return t, ok
}
