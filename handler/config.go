package handler

import "github.com/otlp-lite/otlp-lite/ingest"

// The admission budget, the quotas and the metrics' buckets are the
// pipeline's (package ingest); these names stay so that a Config reads as
// it did.

// AdmissionConfig is ingest.AdmissionConfig.
type AdmissionConfig = ingest.AdmissionConfig

// Admission defaults (ingest's).
const (
	DefaultAdmissionRequestLimit = ingest.DefaultAdmissionRequestLimit
	DefaultAdmissionWaitingLimit = ingest.DefaultAdmissionWaitingLimit
	DefaultAdmissionMaxWait      = ingest.DefaultAdmissionMaxWait
	DefaultMaxStreams            = ingest.DefaultMaxStreams
	DefaultStreamWindow          = ingest.DefaultStreamWindow
	StreamUnitCost               = ingest.StreamUnitCost
	QuotaTenantsDefault          = ingest.QuotaTenantsDefault
)

// Quota, Quotas and QuotaFile are ingest's per-tenant limits.
type (
	Quota     = ingest.Quota
	Quotas    = ingest.Quotas
	QuotaFile = ingest.QuotaFile
)

// NewQuotaFile is ingest.NewQuotaFile.
func NewQuotaFile(path string) (*QuotaFile, error) { return ingest.NewQuotaFile(path) }

// ParseQuotas is ingest.ParseQuotas.
func ParseQuotas(data []byte) (*Quotas, error) { return ingest.ParseQuotas(data) }

// DedupConfig is ingest.DedupConfig: the window of idempotency keys.
type DedupConfig = ingest.DedupConfig

// The window's defaults (ingest's).
const (
	DefaultDedupKeys   = ingest.DefaultDedupKeys
	DefaultDedupMaxAge = ingest.DefaultDedupMaxAge
)

// MaxDedupBytes is ingest.MaxDedupBytes.
func MaxDedupBytes(cfg DedupConfig) int64 { return ingest.MaxDedupBytes(cfg) }

// LatencyBuckets is ingest.LatencyBuckets.
var LatencyBuckets = ingest.LatencyBuckets
