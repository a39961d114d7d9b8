package otlp

import (
	"context"
	"fmt"
)

// DefaultTenant is the tenant of data stored without one: everything a
// receiver stored with tenancy off, and records of the disk log written
// before tenants existed. A receiver with tenancy on stores every record
// under an explicit tenant (its -tenant-default, "default" unless set).
const DefaultTenant = "default"

// MaxTenantNameLength bounds a tenant name. It is Grafana Mimir's limit
// (150); a name that long still fits a Kafka topic name (249) with a prefix.
const MaxTenantNameLength = 150

// SelfTenant is the tenant a receiver's own telemetry is stored under when
// tenancy is on (ingest.Pipeline.WithSelf). It is reserved: no client may
// name itself so (CheckClientTenantName), so what is stored under it is
// the receiver's own, and its reserve is not a door for anyone else.
const SelfTenant = "_self"

// CheckClientTenantName is CheckTenantName for a name a client or an
// operator's file gives: SelfTenant is refused too.
func CheckClientTenantName(name string) error {
	if name == SelfTenant {
		return fmt.Errorf("is %q, reserved for the receiver's own telemetry", name)
	}
	return CheckTenantName(name)
}

// CheckTenantName says why name cannot be a tenant, if it cannot. Tenant
// names become label values, Kafka record headers (and topic names), file
// names in exports and the header replay sends on: so they are 1 to
// MaxTenantNameLength bytes of A-Z a-z 0-9 . _ - (the characters a Kafka
// topic allows, a subset of Mimir's), and not "." or ".." (path
// traversal, as Mimir refuses them). The message never quotes the name: it
// comes from a client and may be anything.
func CheckTenantName(name string) error {
	if name == "" {
		return fmt.Errorf("is empty")
	}
	if len(name) > MaxTenantNameLength {
		return fmt.Errorf("is %d bytes long, more than the %d allowed", len(name), MaxTenantNameLength)
	}
	if name == "." || name == ".." {
		return fmt.Errorf("is %q, which is not allowed", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-' {
			continue
		}
		return fmt.Errorf("has byte %d (0x%02x) outside A-Z a-z 0-9 . _ -", i+1, c)
	}
	return nil
}

// The tenant of a request travels in its context: a receiver sets it
// (handler, kafkasource), the pipeline charges its quota, a sink
// (storage.Sink.Write) stores under it and a client (otlpclient) sends it
// on. It lives here, at the bottom, so that each of them can name it
// without importing another. Rather than a new argument to Sink.Write:
// every existing sink (the disk log, Kafka, discard, an embedder's own)
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
