package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"text/tabwriter"

	"github.com/otlp-lite/otlp-lite/otlpclient"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

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
