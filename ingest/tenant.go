package ingest

import (
	"context"
	"math"

	"github.com/otlp-lite/otlp-lite/otlp"
)

// tenantCtxKey holds the request's *tenantState in its context, beside
// the name otlp.WithTenant puts there for the sink.
type tenantCtxKey struct{}

// tenantOf returns the tenant state of a request context, nil when
// tenancy is off or the request has none (health checks).
func tenantOf(ctx context.Context) *tenantState {
	ts, _ := ctx.Value(tenantCtxKey{}).(*tenantState)
	return ts
}

// WithTenant returns ctx attributing its request to tenant name, which
// the transport has checked (otlp.CheckTenantName): the pipeline charges
// the tenant's quota and counts its requests, and the sink stores under
// it. known says the operator named the tenant (a token's tenant, the
// default tenant, a line of the quota file): known tenants keep their own
// state however many names clients invent, and a sink creates what it
// creates per tenant for them without bound (otlp.WithTenant); a name a
// client chose (a header, a certificate field) is bounded
// (otlp.WithClientTenant). With tenancy off, ctx is returned as it is.
func (p *Pipeline) WithTenant(ctx context.Context, name string, known bool) context.Context {
	if p.ten == nil {
		return ctx
	}
	ts := p.ten.get(name, known)
	if ts.known.Load() {
		ctx = otlp.WithTenant(ctx, name)
	} else {
		ctx = otlp.WithClientTenant(ctx, name)
	}
	return context.WithValue(ctx, tenantCtxKey{}, ts)
}

// TenantMaxRequest is the max_request_bytes of the tenant of ctx, 0 for
// none. A transport gives it its decompressors as their limit, where it
// is below the receiver's: a small compressed body cannot make a tenant's
// request grow past its own limit (only to be refused once it has).
func (p *Pipeline) TenantMaxRequest(ctx context.Context) int {
	if p.ten == nil || p.ten.quotas == nil {
		return 0
	}
	if ts := tenantOf(ctx); ts != nil {
		if m := ts.maxRequest(p.ten.quotas); m > 0 {
			return int(min(m, math.MaxInt32))
		}
	}
	return 0
}

// TenantLevels returns the levels of the quota buckets of tenant name now,
// in bytes and items, and whether the pipeline keeps a state of its own
// for it (false when tenancy is off, the tenant sent nothing yet or was
// forgotten, or it shares the overflow state: MaxTenantStates).
func (p *Pipeline) TenantLevels(name string) (bytes, items float64, ok bool) {
	if p.ten == nil {
		return 0, 0, false
	}
	ts := p.ten.lookup(name)
	if ts == nil {
		return 0, 0, false
	}
	bytes, items = ts.levels(p.ten.quotas, p.ten.now())
	return bytes, items, true
}

// UnknownTenants returns how many tenants the pipeline keeps a state for
// that the operator did not name (at most MaxTenantStates).
func (p *Pipeline) UnknownTenants() int {
	if p.ten == nil {
		return 0
	}
	p.ten.mu.RLock()
	defer p.ten.mu.RUnlock()
	return p.ten.unknown
}

// SelfTenant is the tenant the receiver's own telemetry is stored under
// when tenancy is on (WithSelf); clients cannot name it (otlp.SelfTenant).
const SelfTenant = otlp.SelfTenant

// selfCtxKey marks a request as the receiver's own telemetry.
type selfCtxKey struct{}

// WithSelf returns ctx marking its request as the receiver's own
// telemetry (service's self-telemetry, sent into Export in process):
// charged to AdmissionConfig.Reserve alone, which user requests cannot
// take, so a pipeline full of user requests cannot starve it; subject to
// no tenant quota; stored as tenant SelfTenant when tenancy is on. Only
// code in the process can set it: no header or token leads here.
func (p *Pipeline) WithSelf(ctx context.Context) context.Context {
	if p.ten != nil {
		ctx = otlp.WithTenant(ctx, SelfTenant)
	}
	return context.WithValue(ctx, selfCtxKey{}, true)
}

func isSelf(ctx context.Context) bool { return ctx.Value(selfCtxKey{}) != nil }
