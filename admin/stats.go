package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/otlp-lite/otlp-lite/forward"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// WriteStats writes, per signal, what the disk store in dataDir holds:
// segments, records, items, bytes on disk and the receive-time range; and
// per forwarding destination and signal, what it has not acknowledged, as
// a table (format text) or JSON. It reads record headers only and never
// writes, so it is safe to run while a receiver is using the directory:
// the offline side of the status page (`otlp-lite stats`).
func WriteStats(stdout io.Writer, dataDir, format string) error {
	st, err := disk.ReadStats(dataDir)
	if err != nil {
		return err
	}
	lags, err := forwardLags(dataDir)
	if err != nil {
		return err
	}
	if format == "json" {
		type signalJSON struct {
			Signal   string     `json:"signal"`
			Segments int        `json:"segments"`
			Records  int64      `json:"records"`
			Items    int64      `json:"items"`
			Bytes    int64      `json:"bytes"`
			Oldest   *time.Time `json:"oldest,omitempty"`
			Newest   *time.Time `json:"newest,omitempty"`
		}
		out := struct {
			Signals    []signalJSON `json:"signals"`
			Bytes      int64        `json:"bytes"`
			Forwarding []forwardLag `json:"forwarding,omitempty"`
		}{Bytes: st.Bytes, Forwarding: lags}
		for _, s := range st.Signals {
			j := signalJSON{Signal: s.Signal.String(), Segments: s.Segments, Records: s.Records, Items: s.Items, Bytes: s.Bytes}
			if s.Records > 0 {
				oldest, newest := s.Oldest.UTC(), s.Newest.UTC()
				j.Oldest, j.Newest = &oldest, &newest
			}
			out.Signals = append(out.Signals, j)
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "signal\tsegments\trecords\titems\tbytes\toldest\tnewest\t")
	for _, s := range st.Signals {
		oldest, newest := "-", "-"
		if s.Records > 0 {
			oldest, newest = s.Oldest.UTC().Format(time.RFC3339), s.Newest.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\t\n", s.Signal, s.Segments, s.Records, s.Items, s.Bytes, oldest, newest)
	}
	fmt.Fprintf(tw, "total\t\t\t\t%d\t\t\t\n", st.Bytes)
	if len(lags) > 0 {
		fmt.Fprintln(tw, "\t\t\t\t\t\t\t")
		fmt.Fprintln(tw, "destination\tsignal\tlag records\tlag bytes\toldest unforwarded\t\t\t")
		for _, l := range lags {
			oldest := "-"
			if l.Oldest != nil {
				oldest = l.Oldest.Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t\t\t\n", l.Destination, l.Signal, l.Records, l.Bytes, oldest)
		}
	}
	return tw.Flush()
}

// forwardLag is what one forwarding destination has not acknowledged of
// one signal, read from its cursor.
type forwardLag struct {
	Destination string     `json:"destination"`
	Signal      string     `json:"signal"`
	Records     int64      `json:"lag_records"`
	Bytes       int64      `json:"lag_bytes"`
	Oldest      *time.Time `json:"oldest_unforwarded,omitempty"`
}

// forwardLags reads every forwarding cursor in dataDir (package forward).
func forwardLags(dataDir string) ([]forwardLag, error) {
	var out []forwardLag
	for _, sig := range storage.Signals {
		names, err := disk.ConsumerNames(dataDir, sig, forward.CursorPrefix)
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			lag, err := disk.ReadConsumerLag(dataDir, name, sig)
			if err != nil {
				return nil, err
			}
			l := forwardLag{Destination: strings.TrimPrefix(name, forward.CursorPrefix), Signal: sig.String(), Records: lag.Records, Bytes: lag.Bytes}
			if !lag.Oldest.IsZero() {
				t := lag.Oldest.UTC()
				l.Oldest = &t
			}
			out = append(out, l)
		}
	}
	return out, nil
}

// WriteTenantStats writes records and items per tenant and signal of the
// disk store in dataDir, tenants in name order (`otlp-lite stats
// -tenants`; it reads every record). Damaged data is skipped: what was
// readable is written, and the error, wrapping disk.ErrCorrupt, says what
// was not.
func WriteTenantStats(stdout io.Writer, dataDir, format string) error {
	ts, damaged := disk.ReadTenantStats(dataDir)
	if damaged != nil && !errors.Is(damaged, disk.ErrCorrupt) {
		return damaged
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
			return err
		}
		return damaged
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
		return err
	}
	return damaged
}
