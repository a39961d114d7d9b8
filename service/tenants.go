package service

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// quotaReloadInterval is how often the quota file is checked for changes,
// as the token file is.
const quotaReloadInterval = 5 * time.Second

// tenancy is the handler's tenancy the tenant flags configure: nil when
// off. The quota file is checked, not yet loaded (tenantConfig loads it).
func (c Config) tenancy() (*handler.TenantConfig, error) {
	f := c.Tenants
	srcs, err := handler.ParseTenantSources(f.Sources)
	if err != nil {
		return nil, fmt.Errorf("bad -tenant-sources: %w", err)
	}
	if len(srcs) == 0 {
		return nil, errors.New("bad -tenant-sources: empty; want some of token, header, cert")
	}
	if f.Header != "" {
		// Refused by name only: the value is the operator's, not a
		// secret, but a credential header must not become a label.
		if err := handler.CheckTenantHeader(f.Header); err != nil {
			return nil, fmt.Errorf("bad -tenant-header %q: %w", f.Header, err)
		}
	}
	var certField handler.CertField
	if f.FromCert != "" {
		if certField, err = handler.ParseCertField(f.FromCert); err != nil {
			return nil, fmt.Errorf("bad -tenant-from-cert: %w", err)
		}
		if c.TLSClientCA == "" {
			return nil, errors.New("-tenant-from-cert needs -tls-client-ca: only a certificate verified against it can name a tenant")
		}
	}
	if err := otlp.CheckTenantName(f.Default); err != nil {
		return nil, fmt.Errorf("bad -tenant-default: the tenant name %w", err)
	}
	tokenHas := false
	if c.AuthTokenFile != "" {
		if tf, err := handler.NewTokenFile(c.AuthTokenFile); err == nil {
			tokenHas = tf.HasTenants()
		}
	}
	var list []handler.TenantSource
	for _, s := range srcs {
		switch {
		// The token source is on with any token file, so that tenants
		// added to it later count at its reload; whether tenancy is on
		// at all is decided at start (tokenHas).
		case s == handler.TenantFromToken && c.AuthTokenFile != "",
			s == handler.TenantFromHeader && f.Header != "",
			s == handler.TenantFromCert && f.FromCert != "":
			list = append(list, s)
		}
	}
	if f.Header == "" && f.FromCert == "" && !tokenHas {
		if f.QuotaFile != "" || f.Required {
			return nil, errors.New("-tenant-quota-file and -tenant-required need a tenant source: -tenant-header, tenants in -auth-token-file, or -tenant-from-cert")
		}
		return nil, nil
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("bad -tenant-sources %q: it lists none of the configured tenant sources", f.Sources)
	}
	if f.QuotaFile != "" {
		if _, err := handler.NewQuotaFile(f.QuotaFile); err != nil {
			return nil, fmt.Errorf("bad -tenant-quota-file: %w", err)
		}
	}
	return &handler.TenantConfig{Sources: list, Header: f.Header, CertField: certField, Default: f.Default, Required: f.Required}, nil
}

// tenantConfig returns the handler's tenancy, nil when off; it starts
// watching the quota file until stop is closed.
func (c Config) tenantConfig(logger *slog.Logger, reg *metrics.Set, stop <-chan struct{}) (*handler.TenantConfig, error) {
	tc, err := c.tenancy()
	if tc == nil || err != nil {
		return nil, err
	}
	f := c.Tenants
	logger.Info("tenancy on", "sources", fmt.Sprint(tc.Sources), "header", f.Header, "cert_field", f.FromCert, "default", f.Default, "required", f.Required)
	if f.QuotaFile == "" {
		return tc, nil
	}
	qf, err := handler.NewQuotaFile(f.QuotaFile)
	if err != nil {
		return nil, err
	}
	q, _ := qf.Quotas()
	logger.Info("tenant quota file loaded", "path", f.QuotaFile, "tenants", len(q.Tenants))
	go qf.Watch(quotaReloadInterval, stop, func(n int, err error) {
		if err != nil {
			logger.Error("cannot reload the tenant quota file; keeping the quotas loaded before", "err", err)
			return
		}
		logger.Info("tenant quota file reloaded", "path", f.QuotaFile, "tenants", n)
	})
	// As otlplite_auth_token_file_last_reload_success_timestamp_seconds:
	// an alert on its age finds a quota file that stopped loading.
	reg.NewGauge("otlplite_tenant_quota_file_last_reload_success_timestamp_seconds", func() float64 {
		_, at := qf.Quotas()
		return float64(at.UnixNano()) / 1e9
	})
	tc.Quotas = qf
	return tc, nil
}
