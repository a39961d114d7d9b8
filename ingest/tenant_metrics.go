package ingest

import (
	"math"
	"sync"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/grpcwire"
)

// Per-tenant metrics, otlplite_tenant_*{tenant="..."}:
//
//	otlplite_tenant_requests_total{tenant,result}  result: accepted, throttled
//	                                               (over quota, retryable), refused
//	                                               (any other refusal)
//	otlplite_tenant_items_total{tenant}            items charged to the quota: stored
//	                                               (spans, points, log records,
//	                                               profile samples)
//	otlplite_tenant_bytes_total{tenant}            request bytes charged: stored
//	otlplite_tenant_bucket_bytes{tenant}           byte bucket level now (+Inf: unlimited)
//	otlplite_tenant_bucket_items{tenant}           item bucket level now (+Inf: unlimited)
//	otlplite_tenant_admission_bytes{tenant}        admission budget held now
//
// MaxTenantLabels bounds the tenant label values of unknown tenants (see
// MaxTenantStates). A client that may name any tenant (a header) could
// otherwise create series without end, and every series costs memory here
// and in every Prometheus that scrapes us. 100 tenants make about 800
// series, the order of the receiver's own metrics. Known tenants (listed
// in the quota file, named by a token) always get labels of their own,
// outside the bound: invented names cannot take them (their number is the
// operator's: the lines of the quota and token files). Unknown tenants get
// labels in the order they are first seen; every other tenant is counted
// under otherTenants, a value no tenant can have ('~' is not allowed in
// names), so the sums stay right.
const MaxTenantLabels = 100

// otherTenants is the label value of the tenants beyond MaxTenantLabels.
const otherTenants = "~other"

type tenantCounters struct {
	accepted, throttled, refused *metrics.Counter
	items, bytes                 *metrics.Counter
}

type tenantMetrics struct {
	set      *metrics.Set
	registry *tenantRegistry
	mu       sync.Mutex
	byLabel  map[string]*tenantCounters
	// unknown counts the labels of unknown tenants, otherTenants's
	// included.
	unknown int
}

func newTenantMetrics(set *metrics.Set) *tenantMetrics {
	return &tenantMetrics{set: set, byLabel: map[string]*tenantCounters{}}
}

// counters returns the counters of tenant name: its own when it is known
// or while labels remain, else the shared otherTenants ones.
func (m *tenantMetrics) counters(name string, known bool) *tenantCounters {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c := m.byLabel[name]; c != nil {
		return c
	}
	if !known {
		if m.unknown >= MaxTenantLabels && name != otherTenants {
			// One label is kept for otherTenants itself.
			if c := m.byLabel[otherTenants]; c != nil {
				return c
			}
			name = otherTenants
		}
		m.unknown++
	}
	// Tenant names are A-Z a-z 0-9 . _ - (otlp.CheckTenantName): no escaping.
	series := func(metric, extra string) string {
		return metric + `{tenant="` + name + `"` + extra + `}`
	}
	c := &tenantCounters{
		accepted:  m.set.GetOrCreateCounter(series("otlplite_tenant_requests_total", `,result="accepted"`)),
		throttled: m.set.GetOrCreateCounter(series("otlplite_tenant_requests_total", `,result="throttled"`)),
		refused:   m.set.GetOrCreateCounter(series("otlplite_tenant_requests_total", `,result="refused"`)),
		items:     m.set.GetOrCreateCounter(series("otlplite_tenant_items_total", "")),
		bytes:     m.set.GetOrCreateCounter(series("otlplite_tenant_bytes_total", "")),
	}
	m.byLabel[name] = c
	if name != otherTenants {
		// Levels of one tenant's state; the folded tenants have many.
		label := name
		level := func(items bool) func() float64 {
			return func() float64 {
				ts := m.registry.lookup(label)
				if ts == nil {
					// Not seen yet, or forgotten because full.
					return m.fullLevel(label, items)
				}
				b, i := ts.levels(m.registry.quotas, m.registry.now())
				if items {
					return i
				}
				return b
			}
		}
		m.set.GetOrCreateGauge(series("otlplite_tenant_bucket_bytes", ""), level(false))
		m.set.GetOrCreateGauge(series("otlplite_tenant_bucket_items", ""), level(true))
		m.set.GetOrCreateGauge(series("otlplite_tenant_admission_bytes", ""), func() float64 {
			if ts := m.registry.lookup(label); ts != nil {
				return float64(ts.held.Load())
			}
			return 0
		})
	}
	return c
}

// fullLevel is the level of a tenant without a state: its bucket's size.
func (m *tenantMetrics) fullLevel(name string, items bool) float64 {
	qf := m.registry.quotas
	if qf == nil {
		return math.Inf(1)
	}
	q := qf.lookup(name)
	if items {
		if q.ItemsPerSecond == 0 {
			return math.Inf(1)
		}
		return q.BurstItems
	}
	if q.BytesPerSecond == 0 {
		return math.Inf(1)
	}
	return q.BurstBytes
}

// count records the outcome of one request of tenant ts: stored items and
// size bytes, or the refusal st, throttled when it was over quota.
func (c *tenantCounters) count(st *grpcwire.Status, throttled bool, items, size int) {
	switch {
	case st == nil:
		c.accepted.Inc()
		c.items.Add(items)
		c.bytes.Add(size)
	case throttled:
		c.throttled.Inc()
	default:
		c.refused.Inc()
	}
}
