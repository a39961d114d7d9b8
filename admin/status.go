package admin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/otlp"
)

// The live status page, served at / on the admin listener: what an operator
// checks first, on one self-contained page (no external assets, a few lines
// of plain JavaScript that refresh it every few seconds; without JavaScript
// it still renders in full, and refreshes by meta refresh). /status.json is
// the same figures for scripts.
//
// Every figure comes from the metrics set's own Prometheus text output,
// parsed (exposition.go), so the page and /metrics agree by construction;
// each figure's element carries the series it sums (data-series, a
// selector name{label="value",...}: the sum of the series of that name
// with those labels) and the exact value (data-value). Rates are over the
// last minute, from a ring of snapshots taken every statusInterval.
// Families are found generically: series with a "destination" label
// (forwarding) or a "tenant" label get a table each, and every otlplite_*
// series is listed at the end, so new families appear with no code here.

// statusInterval is how often the ring takes a snapshot, and statusWindow
// how far back rates look: a minute, as the operator's "right now", with
// 5 s steps that cost one scrape of the set each (a few hundred series).
const (
	statusInterval = 5 * time.Second
	statusWindow   = time.Minute
)

// Settings is what the page shows of the configuration.
type Settings struct {
	// Version is the receiver's version, shown on the page and in /status.json.
	Version string `json:"-"`
	// Listeners are the addresses served, by role (otlp-grpc, otlp-http,
	// admin), as bound (a :0 port resolved).
	Listeners []Setting `json:"listeners"`
	// Storage is the sink (disk, kafka, discard); for disk, DataDir, Sync
	// and Retention say where, how durably and how long.
	Storage   string `json:"storage"`
	DataDir   string `json:"data_dir,omitempty"`
	Sync      string `json:"sync,omitempty"`
	Retention string `json:"retention,omitempty"`
	// MaxBytes is the disk retention by size (0: none), for the fill gauge.
	MaxBytes int64 `json:"max_bytes,omitempty"`
	// Effective is the whole effective configuration, secrets redacted,
	// as /config serves it.
	Effective []ConfigEntry `json:"effective,omitempty"`
}

// Setting is one name and value of the configuration.
type Setting struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// statusPage renders the page from a metrics set.
type statusPage struct {
	set      *metrics.Set
	settings Settings
	ready    func() bool

	mu    sync.Mutex
	snaps []statusSnapshot // oldest first, the last statusWindow
}

type statusSnapshot struct {
	at time.Time
	e  *exposition
}

func newStatusPage(set *metrics.Set, settings Settings, ready func() bool) *statusPage {
	return &statusPage{set: set, settings: settings, ready: ready}
}

// run takes a snapshot now and every statusInterval until stop is closed.
func (p *statusPage) run(stop <-chan struct{}) {
	t := time.NewTicker(statusInterval)
	defer t.Stop()
	p.snapshot(time.Now())
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			p.snapshot(now)
		}
	}
}

// scrape parses the set's current exposition.
func (p *statusPage) scrape() (*exposition, error) {
	var buf bytes.Buffer
	p.set.WritePrometheus(&buf)
	return parseExposition(redactLabels(buf.Bytes()))
}

// snapshot adds the set's figures at now to the ring, dropping snapshots
// older than the window (one is kept at or past it, so a rate always spans
// the whole window once the process is that old).
func (p *statusPage) snapshot(now time.Time) {
	e, err := p.scrape()
	if err != nil {
		return // a set we cannot parse: the page says so when rendered
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.snaps = append(p.snaps, statusSnapshot{now, e})
	for len(p.snaps) > 2 && now.Sub(p.snaps[1].at) >= statusWindow {
		p.snaps = p.snaps[1:]
	}
}

// oldest returns the oldest snapshot in the ring.
func (p *statusPage) oldest() (statusSnapshot, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.snaps) == 0 {
		return statusSnapshot{}, false
	}
	return p.snaps[0], true
}

// figure is one number on the page: the sum of the series Sel picks, and
// for cumulative series its rate over the window.
type figure struct {
	Sel      string  `json:"series"`
	Value    float64 `json:"value"`
	Text     string  `json:"text"`
	Rate     float64 `json:"rate_per_second"`
	RateText string  `json:"rate_text,omitempty"`
	HasRate  bool    `json:"has_rate"`
	Zero     bool    `json:"-"`
}

// ValueAttr and RateAttr are the exact numbers, for data-value.
func (f figure) ValueAttr() string { return strconv.FormatFloat(f.Value, 'f', -1, 64) }
func (f figure) RateAttr() string  { return strconv.FormatFloat(f.Rate, 'f', -1, 64) }

// statusView is everything the page shows; /status.json is this.
type statusView struct {
	Version   string  `json:"version"`
	GoVersion string  `json:"go_version"`
	Now       string  `json:"now"`
	Uptime    figure  `json:"uptime_seconds"`
	UptimeTxt string  `json:"uptime"`
	Ready     bool    `json:"ready"`
	Window    float64 `json:"rate_window_seconds"`
	WindowTxt string  `json:"-"`
	Error     string  `json:"error,omitempty"`

	Tiles    []tile       `json:"summary"`
	Ingest   []ingestRow  `json:"ingest"`
	Bytes    []bytesRow   `json:"bytes"`
	Refusals []refusalRow `json:"refusals"`
	// RefusalTransports are the transports with refusals: the columns of
	// the refusals table.
	RefusalTransports []string      `json:"refusal_transports"`
	Admit             admissionView `json:"admission"`
	Conns             []namedFigure `json:"connections"`
	Storage           storageView   `json:"storage"`
	Pivots            []pivot       `json:"by_label"`
	Settings          Settings      `json:"configuration"`
	All               []figure      `json:"series"`
}

type tile struct {
	Label string `json:"label"`
	Fig   figure `json:"figure"`
	Rate  bool   `json:"rate"` // show the rate, not the value
	Sub   string `json:"detail,omitempty"`
}

type ingestRow struct {
	Signal    string `json:"signal"`
	Transport string `json:"transport"`
	Requests  figure `json:"requests"`       // and their rate
	Accepted  figure `json:"items_accepted"` // items stored
	Refused   figure `json:"items_refused"`  // items the storage could not take (retryable)
	Failed    figure `json:"items_rejected"` // items rejected as invalid
}

type bytesRow struct {
	Transport string `json:"transport"`
	Wire      figure `json:"wire"`
	Decomp    figure `json:"decompressed"`
}

type refusalRow struct {
	Reason string   `json:"reason"`
	Cells  []figure `json:"figures"` // per refusal transport, then the total
}

type namedFigure struct {
	Name string `json:"name"`
	Fig  figure `json:"figure"`
	Rate bool   `json:"-"` // the page shows its rate
}

type admissionView struct {
	InFlight     figure        `json:"bytes_in_flight"`
	Waiting      figure        `json:"bytes_waiting"`
	Limit        figure        `json:"limit"`
	WaitingLimit figure        `json:"waiting_limit"`
	Pct          float64       `json:"in_use_percent"`
	WaitPct      float64       `json:"waiting_percent"`
	Counters     []namedFigure `json:"counters"`
}

type storageView struct {
	Total   figure       `json:"bytes"`
	Pct     float64      `json:"size_limit_percent"`
	HasDisk bool         `json:"disk"`
	Signals []storageRow `json:"signals"`
}

type storageRow struct {
	Signal          string  `json:"signal"`
	Bytes           figure  `json:"bytes"`
	Segments        figure  `json:"segments"`
	Records         figure  `json:"records"`
	Items           figure  `json:"items"`
	WriteErrors     figure  `json:"write_errors"`
	Deleted         figure  `json:"deleted_segments"`
	WriteLatency    string  `json:"-"` // mean over the window, for people
	SyncLatency     string  `json:"-"`
	WriteLatencyVal float64 `json:"mean_write_seconds"`
	SyncLatencyVal  float64 `json:"mean_sync_seconds"`
}

// pivot is a table of the series that have one label (destination,
// tenant): a row per value of it, a column per family.
type pivot struct {
	Title   string     `json:"title"`
	Label   string     `json:"label"`
	Empty   string     `json:"-"`
	Columns []string   `json:"columns"`
	Rows    []pivotRow `json:"rows"`
}

type pivotRow struct {
	Key   string   `json:"key"`
	Cells []figure `json:"figures"`
}

// view computes the page's figures from a fresh scrape and the ring.
func (p *statusPage) view(now time.Time) statusView {
	v := statusView{Version: p.settings.Version, GoVersion: runtime.Version(), Now: now.UTC().Format("15:04:05 UTC"), Settings: p.settings,
		Ingest: []ingestRow{}, Refusals: []refusalRow{}, RefusalTransports: []string{}} // [] in JSON, not null
	if p.ready != nil {
		v.Ready = p.ready()
	}
	cur, err := p.scrape()
	if err != nil {
		v.Error = err.Error()
		return v
	}
	old, ok := p.oldest()
	window := 0.0
	if ok {
		window = now.Sub(old.at).Seconds()
	}
	// Rates over less than a second say little; the page shows none.
	hasRates := window >= 1
	v.Window = window
	v.WindowTxt = formatDuration(time.Duration(window * float64(time.Second)))
	fig := func(s selector, format func(float64) string) figure {
		f := figure{Sel: s.String()}
		f.Value, _ = cur.sum(s)
		f.Text = format(f.Value)
		f.Zero = f.Value == 0
		if hasRates && cur.cumulative(s.name) {
			before, _ := old.e.sum(s)
			d := f.Value - before
			if d < 0 { // a counter reset: count from zero
				d = f.Value
			}
			f.Rate, f.HasRate = d/window, true
			f.RateText = formatRate(f.Rate, format)
		}
		return f
	}

	v.Uptime = fig(sel("otlplite_uptime_seconds"), formatCount)
	v.UptimeTxt = formatDuration(time.Duration(v.Uptime.Value) * time.Second)

	// Ingest, per signal and transport.
	transports := cur.values("otlplite_received_bytes_total", "transport")
	// items: every signal's accepted items; its data-series lists the
	// selectors it sums, joined by " + ".
	items := figure{HasRate: hasRates}
	var itemSels []string
	for _, sig := range otlp.Signals {
		name := "otelcol_receiver_accepted_" + sig.Info().ItemsMetric + "_total"
		itemSels = append(itemSels, sel(name).String())
		for _, tr := range transports {
			row := ingestRow{Signal: sig.String(), Transport: tr,
				Requests: fig(sel("otlplite_requests_total", "signal", sig.String(), "transport", tr), formatCount),
				Accepted: fig(sel(name, "transport", tr), formatCount),
				Refused:  fig(sel("otelcol_receiver_refused_"+sig.Info().ItemsMetric+"_total", "transport", tr), formatCount),
				Failed:   fig(sel("otelcol_receiver_failed_"+sig.Info().ItemsMetric+"_total", "transport", tr), formatCount),
			}
			if row.Requests.Value > 0 || row.Accepted.Value > 0 {
				v.Ingest = append(v.Ingest, row)
			}
			items.Value += row.Accepted.Value
			items.Rate += row.Accepted.Rate
		}
	}
	items.Sel = strings.Join(itemSels, " + ")
	items.Text, items.RateText, items.Zero = formatCount(items.Value), formatRate(items.Rate, formatCount), items.Value == 0
	reqs := fig(sel("otlplite_requests_total"), formatCount)
	for _, tr := range transports {
		v.Bytes = append(v.Bytes, bytesRow{Transport: tr,
			Wire:   fig(sel("otlplite_received_wire_bytes_total", "transport", tr), FormatBytes),
			Decomp: fig(sel("otlplite_received_bytes_total", "transport", tr), FormatBytes)})
	}

	// Refusals by reason: the reasons that happened, on the transports
	// that had any.
	refusals := fig(sel("otlplite_refusals_total"), formatCount)
	for _, tr := range transports {
		if n, _ := cur.sum(sel("otlplite_refusals_total", "transport", tr)); n > 0 {
			v.RefusalTransports = append(v.RefusalTransports, tr)
		}
	}
	for _, reason := range cur.values("otlplite_refusals_total", "reason") {
		total := fig(sel("otlplite_refusals_total", "reason", reason), formatCount)
		if total.Value == 0 {
			continue
		}
		row := refusalRow{Reason: reason}
		for _, tr := range v.RefusalTransports {
			row.Cells = append(row.Cells, fig(sel("otlplite_refusals_total", "reason", reason, "transport", tr), formatCount))
		}
		row.Cells = append(row.Cells, total)
		v.Refusals = append(v.Refusals, row)
	}

	// Admission.
	a := &v.Admit
	a.InFlight = fig(sel("otlplite_admission_bytes_in_flight"), FormatBytes)
	a.Waiting = fig(sel("otlplite_admission_bytes_waiting"), FormatBytes)
	a.Limit = fig(sel("otlplite_admission_bytes_limit"), FormatBytes)
	a.WaitingLimit = fig(sel("otlplite_admission_bytes_waiting_limit"), FormatBytes)
	if a.Limit.Value > 0 {
		a.Pct = min(100, 100*a.InFlight.Value/a.Limit.Value)
	}
	if a.WaitingLimit.Value > 0 {
		a.WaitPct = min(100, 100*a.Waiting.Value/a.WaitingLimit.Value)
	}
	for _, c := range []struct{ name, series string }{
		{"requests that waited", "otlplite_admission_waits_total"},
		{"refused: budget busy", "otlplite_admission_refusals_busy_total"},
		{"refused: larger than the budget", "otlplite_admission_refusals_too_large_total"},
		{"refused: decompressed over budget", "otlplite_admission_refusals_decompressed_over_budget_total"},
		{"duplicates answered from the window of idempotency keys", "otlplite_dedup_hits_total"},
	} {
		a.Counters = append(a.Counters, namedFigure{c.name, fig(sel(c.series), formatCount), true})
	}

	// Connections and streams.
	v.Conns = []namedFigure{
		{"open connections", fig(sel("otlplite_open_connections"), formatCount), false},
		{"connections accepted", fig(sel("otlplite_connections_total"), formatCount), true},
	}
	for _, reason := range cur.values("otlplite_connections_dropped_total", "reason") {
		v.Conns = append(v.Conns, namedFigure{"connections dropped: " + strings.ReplaceAll(reason, "_", " "),
			fig(sel("otlplite_connections_dropped_total", "reason", reason), formatCount), true})
	}
	v.Conns = append(v.Conns,
		namedFigure{"open export streams", fig(sel("otlplite_open_streams"), formatCount), false},
		namedFigure{"stream rotations", fig(sel("otlplite_stream_rotations_total"), formatCount), true},
		namedFigure{"responses abandoned: client not reading", fig(sel("otlplite_response_write_timeouts_total"), formatCount), true},
	)

	// Storage.
	s := &v.Storage
	s.Total = fig(sel("otlplite_storage_total_bytes"), FormatBytes)
	_, s.HasDisk = cur.sum(sel("otlplite_storage_total_bytes"))
	if p.settings.MaxBytes > 0 {
		s.Pct = min(100, 100*s.Total.Value/float64(p.settings.MaxBytes))
	}
	for _, sig := range cur.values("otlplite_storage_write_seconds_count", "signal") {
		row := storageRow{Signal: sig,
			Bytes:       fig(sel("otlplite_storage_bytes", "signal", sig), FormatBytes),
			Segments:    fig(sel("otlplite_storage_segments", "signal", sig), formatCount),
			Records:     fig(sel("otlplite_storage_records", "signal", sig), formatCount),
			Items:       fig(sel("otlplite_storage_items", "signal", sig), formatCount),
			WriteErrors: fig(sel("otlplite_storage_write_errors_total", "signal", sig), formatCount),
			Deleted:     fig(sel("otlplite_storage_deleted_segments_total", "signal", sig), formatCount),
		}
		row.WriteLatencyVal, row.WriteLatency = meanLatency(fig, "otlplite_storage_write_seconds", sig)
		row.SyncLatencyVal, row.SyncLatency = meanLatency(fig, "otlplite_storage_sync_seconds", sig)
		s.Signals = append(s.Signals, row)
	}

	// Families with a destination or tenant label, whatever their names.
	v.Pivots = []pivot{
		p.pivot(cur, fig, "Forwarding destinations", "destination", "No series with a destination label: forwarding is not configured."),
		p.pivot(cur, fig, "Tenants", "tenant", "No series with a tenant label: requests carry no tenant."),
	}

	v.Tiles = []tile{
		{Label: "items in", Fig: items, Rate: true, Sub: items.Text + " since start"},
		{Label: "requests", Fig: reqs, Rate: true, Sub: reqs.Text + " since start"},
		{Label: "refusals", Fig: refusals, Rate: true, Sub: refusals.Text + " since start"},
		{Label: "admission in use", Fig: a.InFlight, Sub: "of " + a.Limit.Text},
		{Label: "open connections", Fig: v.Conns[0].Fig},
		{Label: "storage", Fig: s.Total},
	}
	if !s.HasDisk {
		v.Tiles = v.Tiles[:len(v.Tiles)-1]
	}

	// Every series of the binary's own families, for what has no table.
	for i := range cur.series {
		x := &cur.series[i]
		if !strings.HasPrefix(x.name, "otlplite_") && !strings.HasPrefix(x.name, "otelcol_") || strings.HasSuffix(x.name, "_bucket") {
			continue
		}
		f := fig(selector{name: x.name, match: x.labels}, formatCount)
		f.Sel = x.key
		v.All = append(v.All, f)
	}
	return v
}

// meanLatency is the mean of a latency histogram's observations over the
// window (the change of _sum over the change of _count).
func meanLatency(fig func(selector, func(float64) string) figure, name, sig string) (float64, string) {
	sum := fig(sel(name+"_sum", "signal", sig), formatCount)
	count := fig(sel(name+"_count", "signal", sig), formatCount)
	if !count.HasRate || count.Rate == 0 {
		return 0, "—"
	}
	mean := sum.Rate / count.Rate
	return mean, formatSeconds(mean)
}

// pivot tabulates the series that carry label key: one row per value, one
// column per family, the family's other labels summed (a destination's
// signals), its rate beside it for a counter. A family with a "state"
// label (a gauge that is 1 for the current state, as in kube-state-metrics)
// shows the name of the state that is 1 instead.
func (p *statusPage) pivot(cur *exposition, fig func(selector, func(float64) string) figure, title, key, empty string) pivot {
	pv := pivot{Title: title, Label: key, Empty: empty}
	var rows, families []string
	for i := range cur.series {
		x := &cur.series[i]
		val := x.label(key)
		if val == "" || strings.HasSuffix(x.name, "_bucket") {
			continue
		}
		if !slices.Contains(families, x.name) {
			families = append(families, x.name)
		}
		if !slices.Contains(rows, val) {
			rows = append(rows, val)
		}
	}
	// Headers without the families' common prefix (otlplite_forward_).
	prefix := ""
	if len(families) > 1 {
		prefix = families[0]
		for _, f := range families[1:] {
			for !strings.HasPrefix(f, prefix) {
				prefix = prefix[:len(prefix)-1]
			}
		}
		prefix = prefix[:strings.LastIndexByte(prefix, '_')+1]
	}
	for _, f := range families {
		pv.Columns = append(pv.Columns, strings.ReplaceAll(strings.TrimPrefix(f, prefix), "_", " "))
	}
	for _, r := range rows {
		row := pivotRow{Key: r}
		for _, fam := range families {
			if states := cur.values(fam, "state"); len(states) > 1 || len(states) == 1 && states[0] != "" {
				row.Cells = append(row.Cells, stateFigure(cur, fam, key, r, states))
				continue
			}
			format := formatCount
			if strings.Contains(fam, "bytes") {
				format = FormatBytes
			}
			row.Cells = append(row.Cells, fig(sel(fam, key, r), format))
		}
		pv.Rows = append(pv.Rows, row)
	}
	return pv
}

// stateFigure names the state of row r of a state family: the states whose
// series is 1 (normally one).
func stateFigure(cur *exposition, fam, key, r string, states []string) figure {
	var on []string
	var s selector
	for _, st := range states {
		if v, ok := cur.sum(sel(fam, key, r, "state", st)); ok && v == 1 {
			on = append(on, strings.ReplaceAll(st, "_", " "))
			s = sel(fam, key, r, "state", st)
		}
	}
	if len(on) != 1 {
		// No single state: the cell sums them all, and says so.
		s = sel(fam, key, r)
	}
	v, _ := cur.sum(s)
	text := strings.Join(on, ", ")
	if text == "" {
		text = "—"
	}
	return figure{Sel: s.String(), Value: v, Text: text}
}

// ServeHTTP serves the page (?fragment=1: its main part, for the refresh
// script).
func (p *statusPage) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	v := p.view(time.Now())
	name := "page"
	if r.URL.Query().Get("fragment") != "" {
		name = "main"
	}
	var buf bytes.Buffer
	if err := statusTemplate.ExecuteTemplate(&buf, name, v); err != nil {
		http.Error(w, "cannot render the status page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(buf.Bytes())
}

// serveJSON serves the page's figures as JSON.
func (p *statusPage) serveJSON(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(p.view(time.Now()))
}

// formatCount writes n for people: 1234 → "1,234", larger ones with k, M
// or G.
func formatCount(n float64) string {
	switch a := math.Abs(n); {
	case a >= 1e9:
		return strconv.FormatFloat(n/1e9, 'f', 2, 64) + " G"
	case a >= 1e6:
		return strconv.FormatFloat(n/1e6, 'f', 2, 64) + " M"
	case a >= 1e4:
		return strconv.FormatFloat(n/1e3, 'f', 1, 64) + " k"
	case n == math.Trunc(n):
		s := strconv.FormatFloat(n, 'f', 0, 64)
		if len(s) > 3 && a >= 1000 {
			s = s[:len(s)-3] + "," + s[len(s)-3:]
		}
		return s
	case a >= 10:
		return strconv.FormatFloat(n, 'f', 0, 64)
	}
	return strconv.FormatFloat(n, 'f', 1, 64)
}

// FormatBytes writes a byte count with binary units.
func FormatBytes(n float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for math.Abs(n) >= 1024 && i < len(units)-1 {
		n /= 1024
		i++
	}
	if i == 0 {
		return strconv.FormatFloat(n, 'f', 0, 64) + " B"
	}
	return strconv.FormatFloat(n, 'f', 1, 64) + " " + units[i]
}

func formatRate(r float64, format func(float64) string) string {
	return format(r) + "/s"
}

func formatSeconds(s float64) string {
	switch {
	case s >= 1:
		return strconv.FormatFloat(s, 'f', 2, 64) + " s"
	case s >= 1e-3:
		return strconv.FormatFloat(s*1e3, 'f', 1, 64) + " ms"
	}
	return strconv.FormatFloat(s*1e6, 'f', 0, 64) + " µs"
}

// formatDuration writes d as 3d 4h, 4h 12m, 12m 5s or 5s.
func formatDuration(d time.Duration) string {
	d = d.Round(time.Second)
	days, h, m, s := d/(24*time.Hour), d/time.Hour%24, d/time.Minute%60, d/time.Second%60
	switch {
	case days > 0:
		return fmt.Sprintf("%dd %dh", days, h)
	case h > 0:
		return fmt.Sprintf("%dh %dm", h, m)
	case m > 0:
		return fmt.Sprintf("%dm %ds", m, s)
	}
	return fmt.Sprintf("%ds", s)
}

// register serves the page at / and its figures at /status.json on mux.
func (p *statusPage) register(mux *http.ServeMux) {
	mux.Handle("GET /{$}", p)
	mux.HandleFunc("GET /status.json", p.serveJSON)
}

// ShortDuration writes d as time.Duration does, without its zero minutes
// and seconds: 168h, not 168h0m0s.
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
