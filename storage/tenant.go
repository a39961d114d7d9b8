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

// clientTenant is the context value of WithClientTenant.
type clientTenant string

// WithTenant returns ctx carrying tenant, the name of the tenant the data
// of the request belongs to (already validated by the receiver), one the
// operator named: its quota line, its token, the default tenant, a record
// already stored under it.
func WithTenant(ctx context.Context, tenant string) context.Context {
	return context.WithValue(ctx, tenantKey{}, tenant)
}

// WithClientTenant is WithTenant for a tenant name a client chose (a
// request header, a certificate field) and the operator never listed.
// A sink that creates something per tenant (the Kafka sink's topic per
// tenant) bounds what such names may create, as it bounds every other
// name a client may choose; it never refuses a tenant of WithTenant for
// that.
func WithClientTenant(ctx context.Context, tenant string) context.Context {
	return context.WithValue(ctx, tenantKey{}, clientTenant(tenant))
}

// TenantFrom returns the tenant of the write whose context is ctx, and
// whether the receiver set one (false when tenancy is off; the data then
// belongs to DefaultTenant).
func TenantFrom(ctx context.Context) (string, bool) {
	switch t := ctx.Value(tenantKey{}).(type) {
	case string:
		return t, true
	case clientTenant:
		return string(t), true
	}
	return "", false
}

// TenantFromClient reports whether the tenant of ctx is one a client
// chose (WithClientTenant).
func TenantFromClient(ctx context.Context) bool {
	_, ok := ctx.Value(tenantKey{}).(clientTenant)
	return ok
}
