package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/otlpclient"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// tenantFlags are serve's tenancy flags (the "Tenants" help section).
// Tenancy is off unless a source is configured: -tenant-header, tenants in
// the token file, or -tenant-from-cert.
type tenantFlags struct {
	header    string
	fromCert  string
	sources   string
	def       string
	required  bool
	quotaFile string

	// Derived by validate.
	sourceList []handler.TenantSource
	certField  handler.CertField
	tokenHas   bool // the token file names tenants
}

// quotaReloadInterval is how often the quota file is checked for changes,
// as the token file is.
const quotaReloadInterval = 5 * time.Second

func registerTenantFlags(s *flagSections, f *tenantFlags) {
	s.add("Tenants", func(fs *flag.FlagSet) {
		fs.StringVar(&f.header, "tenant-header", "", "request header that names the tenant, such as "+handler.DefaultTenantHeader+" (the header Tempo, Mimir and Loki use); setting it turns tenancy on. The header is the client's word: put an authenticating proxy in front, or prefer token tenants. Headers that carry credentials (Authorization, Proxy-Authorization, Cookie, X-Api-Key: any name the secrets rule calls secret) are refused")
		fs.StringVar(&f.fromCert, "tenant-from-cert", "", "field of the verified mTLS client certificate (-tls-client-ca) that names the tenant: cn, san-dns or ou; setting it turns tenancy on")
		fs.StringVar(&f.sources, "tenant-sources", "token,header,cert", "order in which the tenant sources are tried; the first that names a tenant wins (token: the token file's 'TOKEN tenant=NAME' lines, which turn tenancy on); sources not configured are skipped")
		fs.StringVar(&f.def, "tenant-default", storage.DefaultTenant, "tenant of a request no source names (ignored with -tenant-required); data stored without tenancy reads as "+storage.DefaultTenant)
		fs.BoolVar(&f.required, "tenant-required", false, "refuse a request no source names a tenant for, with UNAUTHENTICATED (HTTP 401), instead of using -tenant-default")
		fs.StringVar(&f.quotaFile, "tenant-quota-file", "", "per-tenant quotas, re-read when it changes (a bad file keeps the quotas in force): one line per tenant, '* ...' for the others, e.g. 'team-a bytes_per_second=10MiB burst_bytes=40MiB items_per_second=50000 max_budget_share=0.25 max_request_bytes=8MiB'; over quota, clients are told when to retry (gRPC UNAVAILABLE with RetryInfo, HTTP 429 with Retry-After); see the README")
	})
}

// on reports whether a tenant source is configured.
func (f *tenantFlags) on() bool {
	return f.header != "" || f.fromCert != "" || f.tokenHas
}

// validate checks the tenancy flags; authTokenFile is -auth-token-file.
func (f *tenantFlags) validate(authTokenFile, clientCAFile string) error {
	srcs, err := handler.ParseTenantSources(f.sources)
	if err != nil {
		return fmt.Errorf("bad -tenant-sources: %w", err)
	}
	if len(srcs) == 0 {
		return errors.New("bad -tenant-sources: empty; want some of token, header, cert")
	}
	if f.header != "" {
		// Refused by name only: the value is the operator's, not a
		// secret, but a credential header must not become a label.
		if err := handler.CheckTenantHeader(f.header); err != nil {
			return fmt.Errorf("bad -tenant-header %q: %w", f.header, err)
		}
	}
	if f.fromCert != "" {
		if f.certField, err = handler.ParseCertField(f.fromCert); err != nil {
			return fmt.Errorf("bad -tenant-from-cert: %w", err)
		}
		if clientCAFile == "" {
			return errors.New("-tenant-from-cert needs -tls-client-ca: only a certificate verified against it can name a tenant")
		}
	}
	if err := storage.CheckTenantName(f.def); err != nil {
		return fmt.Errorf("bad -tenant-default: the tenant name %w", err)
	}
	f.tokenHas = false
	if authTokenFile != "" {
		if tf, err := handler.NewTokenFile(authTokenFile); err == nil {
			f.tokenHas = tf.HasTenants()
		}
	}
	f.sourceList = f.sourceList[:0]
	for _, s := range srcs {
		switch {
		// The token source is on with any token file, so that tenants
		// added to it later count at its reload; whether tenancy is on
		// at all is decided at start (tokenHas).
		case s == handler.TenantFromToken && authTokenFile != "",
			s == handler.TenantFromHeader && f.header != "",
			s == handler.TenantFromCert && f.fromCert != "":
			f.sourceList = append(f.sourceList, s)
		}
	}
	if !f.on() {
		if f.quotaFile != "" || f.required {
			return errors.New("-tenant-quota-file and -tenant-required need a tenant source: -tenant-header, tenants in -auth-token-file, or -tenant-from-cert")
		}
		return nil
	}
	if len(f.sourceList) == 0 {
		return fmt.Errorf("bad -tenant-sources %q: it lists none of the configured tenant sources", f.sources)
	}
	if f.quotaFile != "" {
		if _, err := handler.NewQuotaFile(f.quotaFile); err != nil {
			return fmt.Errorf("bad -tenant-quota-file: %w", err)
		}
	}
	return nil
}

// config returns the handler's tenancy, nil when off; it starts watching
// the quota file until stop is closed.
func (f *tenantFlags) config(logger *slog.Logger, reg *metrics.Set, stop <-chan struct{}) (*handler.TenantConfig, error) {
	if !f.on() {
		return nil, nil
	}
	tc := &handler.TenantConfig{Sources: f.sourceList, Header: f.header, CertField: f.certField, Default: f.def, Required: f.required}
	logger.Info("tenancy on", "sources", fmt.Sprint(f.sourceList), "header", f.header, "cert_field", f.fromCert, "default", f.def, "required", f.required)
	if f.quotaFile == "" {
		return tc, nil
	}
	qf, err := handler.NewQuotaFile(f.quotaFile)
	if err != nil {
		return nil, err
	}
	q, _ := qf.Quotas()
	logger.Info("tenant quota file loaded", "path", f.quotaFile, "tenants", len(q.Tenants))
	go qf.Watch(quotaReloadInterval, stop, func(n int, err error) {
		if err != nil {
			logger.Error("cannot reload the tenant quota file; keeping the quotas loaded before", "err", err)
			return
		}
		logger.Info("tenant quota file reloaded", "path", f.quotaFile, "tenants", n)
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

// printTenantStats is stats -tenants: records and items per tenant and
// signal, tenants in name order.
func printTenantStats(dataDir, format string, stdout, stderr io.Writer) int {
	ts, err := disk.ReadTenantStats(dataDir)
	code := 0
	if err != nil {
		if !errors.Is(err, disk.ErrCorrupt) {
			fmt.Fprintf(stderr, "stats: %v\n", err)
			return 1
		}
		// Counted what was readable; say what was not.
		fmt.Fprintf(stderr, "stats: skipped damaged data: %v\n", err)
		code = 1
	}
	names := slices.Sorted(maps.Keys(ts))
	if format == "json" {
		type row struct {
			Tenant  string `json:"tenant"`
			Signal  string `json:"signal"`
			Records int64  `json:"records"`
			Items   int64  `json:"items"`
		}
		rows := []row{}
		for _, n := range names {
			for _, sig := range storage.Signals {
				if s, ok := ts[n][sig]; ok {
					rows = append(rows, row{n, sig.String(), s.Records, s.Items})
				}
			}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Tenants []row `json:"tenants"`
		}{rows}); err != nil {
			fmt.Fprintf(stderr, "stats: %v\n", err)
			return 1
		}
		return code
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tenant\tsignal\trecords\titems\t")
	for _, n := range names {
		for _, sig := range storage.Signals {
			if s, ok := ts[n][sig]; ok {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t\n", n, sig, s.Records, s.Items)
			}
		}
	}
	if err := tw.Flush(); err != nil {
		fmt.Fprintf(stderr, "stats: %v\n", err)
		return 1
	}
	return code
}

// withRecordTenant puts rec's tenant in ctx when replay sends tenants;
// tenantClient then writes it into the request's header.
func withRecordTenant(ctx context.Context, cfg replayConfig, rec disk.Record) context.Context {
	if cfg.tenantHeader == "" {
		return ctx
	}
	return storage.WithTenant(ctx, rec.Tenant)
}

// tenantClient sets cfg.tenantHeader from the tenant in each request's
// context (withRecordTenant); without -tenant-header it is hc itself.
func tenantClient(cfg replayConfig, hc *http.Client) *http.Client {
	return otlpclient.WithTenantHeader(hc, cfg.tenantHeader)
}
