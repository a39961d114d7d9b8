package main

import (
	"context"
	"net/http"

	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpclient"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// withRecordTenant puts rec's tenant in ctx when replay sends tenants;
// tenantClient then writes it into the request's header.
func withRecordTenant(ctx context.Context, cfg replayConfig, rec disk.Record) context.Context {
	if cfg.tenantHeader == "" {
		return ctx
	}
	return otlp.WithTenant(ctx, rec.Tenant)
}

// tenantClient sets cfg.tenantHeader from the tenant in each request's
// context (withRecordTenant); without -tenant-header it is hc itself.
func tenantClient(cfg replayConfig, hc *http.Client) *http.Client {
	return otlpclient.WithTenantHeader(hc, cfg.tenantHeader)
}
