package admin

import (
	"bytes"
	_ "embed"
	"fmt"
	"html"
	"io"
	"strconv"
	"strings"
)

// The status page is written by plain Go code, not by html/template:
// text/template (under html/template) calls reflect.Value.MethodByName,
// and a binary that can reach it makes the Go linker keep every exported
// method of every reachable type, since any of them might be called by
// name. For otlp-lite that was 1.9 MB of the nokafka binary (10.06 MB
// without the page, 11.95 MB with it), over the small image's 12,000,000
// byte budget (scripts/image). TestNoTemplatePackages keeps it so.
//
// Every dynamic text and attribute value goes through html.EscapeString,
// and attribute values are always quoted with ", so any string (a label
// value, a data directory, a configuration value) is safe in either place.

// statusHTML is the page's static part: the head with its style sheet,
// then, after statusBodyMarker, the refresh script and the end of the
// page. The header and the main part between them are written by
// writeStatusHeader and writeStatusMain.
//
//go:embed status.html
var statusHTML string

const statusBodyMarker = "<!--header and main: status.go-->\n"

var statusHead, statusTail = func() (string, string) {
	head, tail, ok := strings.Cut(statusHTML, statusBodyMarker)
	if !ok {
		panic("status.html lacks " + statusBodyMarker)
	}
	return head, tail
}()

// statusRenderer renders the page ("page") or its main part ("main", what
// the refresh script fetches with ?fragment=1).
type statusRenderer struct{}

var statusTemplate statusRenderer

// ExecuteTemplate writes the part called name of the page for v to w.
func (statusRenderer) ExecuteTemplate(w io.Writer, name string, v statusView) error {
	var b htmlBuf
	switch name {
	case "page":
		b.raw(statusHead)
		writeStatusHeader(&b, &v)
		writeCharts(&b, &v)
		b.raw(`<main id="main">`)
		writeStatusMain(&b, &v)
		b.raw("</main>\n")
		b.raw(statusTail)
	case "main":
		writeStatusMain(&b, &v)
	default:
		return fmt.Errorf("no part %q of the status page", name)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// htmlBuf is a page being written: raw appends markup as it is, text
// appends a value escaped, fit for text and for quoted attribute values.
type htmlBuf struct{ bytes.Buffer }

func (b *htmlBuf) raw(s string) { b.WriteString(s) }

func (b *htmlBuf) text(s string) { b.WriteString(html.EscapeString(s)) }

// raws appends markup parts and escaped values alternately: parts[0] raw,
// parts[1] escaped, parts[2] raw, and so on.
func (b *htmlBuf) raws(parts ...string) {
	for i, p := range parts {
		if i%2 == 0 {
			b.raw(p)
		} else {
			b.text(p)
		}
	}
}

// pct is a percentage for people: whole numbers.
func pct(f float64) string { return strconv.FormatFloat(f, 'f', 0, 64) }

// val writes a figure's value cell.
func (b *htmlBuf) val(f figure) {
	b.raw(`<td class="num`)
	if f.Zero {
		b.raw(" zero")
	}
	b.raws(`" data-series="`, f.Sel, `" data-value="`, f.ValueAttr(), `">`, f.Text, `</td>`)
}

// rate writes a figure's rate cell.
func (b *htmlBuf) rate(f figure) {
	b.raw(`<td class="num`)
	if f.Rate == 0 {
		b.raw(" zero")
	}
	b.raws(`" data-rate="`, f.Sel, `" data-value="`, f.RateAttr(), `">`)
	if f.HasRate {
		b.text(f.RateText)
	} else {
		b.raw("—")
	}
	b.raw("</td>")
}

// quantile writes a latency percentile's cell: its exact value in
// seconds in data-value, "—" when no request was answered in the window.
func (b *htmlBuf) quantile(q string, v *float64) {
	if v == nil {
		b.raws(`<td class="num zero" data-quantile="`, q, `">—</td>`)
		return
	}
	b.raws(`<td class="num" data-quantile="`, q, `" data-value="`, strconv.FormatFloat(*v, 'f', -1, 64), `">`, formatSeconds(*v), `</td>`)
}

// bar writes a fill gauge at p percent, warm from 70, hot from 90.
func (b *htmlBuf) bar(p float64) {
	class := ""
	switch {
	case p >= 90:
		class = "hot"
	case p >= 70:
		class = "warm"
	}
	b.raws(`<div class="bar" title="`, pct(p), `%"><span style="width: `, pct(p), `%" class="`, class, `"></span></div>`)
}

// span writes a figure's value as a span.
func (b *htmlBuf) span(f figure) {
	b.raws(`<span data-series="`, f.Sel, `" data-value="`, f.ValueAttr(), `">`, f.Text, `</span>`)
}

func writeStatusHeader(b *htmlBuf, v *statusView) {
	b.raws("<header>\n  <h1>otlp-lite</h1>\n"+
		`  <span class="meta">version <b id="version">`, v.Version, `</b> · `, v.GoVersion, "</span>\n"+
		`  <span class="meta">up <b id="uptime" data-series="`, v.Uptime.Sel, `" data-value="`, v.Uptime.ValueAttr(), `">`, v.UptimeTxt, "</b></span>\n")
	if v.Ready {
		b.raw(`  <span class="badge ok" id="ready">ready</span>` + "\n")
	} else {
		b.raw(`  <span class="badge bad" id="ready">not ready</span>` + "\n")
	}
	b.raws(`  <span class="meta">updated <b id="updated">`, v.Now, `</b> · every 5 s · rates over the last <b id="window">`, v.WindowTxt, "</b></span>\n"+
		"  <span id=\"stale\"></span>\n</header>\n")
}

func writeStatusMain(b *htmlBuf, v *statusView) {
	b.raws(`<span id="meta" hidden data-uptime="`, v.UptimeTxt, `" data-uptime-value="`, v.Uptime.ValueAttr(),
		`" data-now="`, v.Now, `" data-window="`, v.WindowTxt, `" data-window-seconds="`, strconv.FormatFloat(v.Window, 'g', -1, 64),
		`" data-ready="`, strconv.FormatBool(v.Ready), "\"></span>\n")
	if v.Error != "" {
		b.raws(`<p class="empty">Cannot read the metrics: `, v.Error, `</p>`)
	}
	b.raw("\n<div class=\"tiles\">\n")
	for _, t := range v.Tiles {
		b.raws(`<div class="tile"><div class="label">`, t.Label, "</div>\n")
		if t.Rate {
			b.raw(`<div class="big`)
			if t.Fig.Rate == 0 {
				b.raw(" zero")
			}
			b.raws(`" data-rate="`, t.Fig.Sel, `" data-value="`, t.Fig.RateAttr(), `">`)
			if t.Fig.HasRate {
				b.text(t.Fig.RateText)
			} else {
				b.raw("—")
			}
			b.raws("</div>\n"+`<div class="sub" data-series="`, t.Fig.Sel, `" data-value="`, t.Fig.ValueAttr(), `">`, t.Sub, "</div>\n")
		} else {
			b.raw(`<div class="big`)
			if t.Fig.Zero {
				b.raw(" zero")
			}
			b.raws(`" data-series="`, t.Fig.Sel, `" data-value="`, t.Fig.ValueAttr(), `">`, t.Fig.Text, `</div>`)
			if t.Sub != "" {
				b.raws(`<div class="sub">`, t.Sub, `</div>`)
			}
		}
		b.raw("\n</div>\n")
	}
	b.raws("</div>\n<div class=\"grid\">\n<section class=\"wide\" id=\"ingest\">\n"+
		`<h2>Ingest <small>per signal and transport that received requests; rates over the last `, v.WindowTxt, "</small></h2>\n")
	if len(v.Ingest) > 0 {
		b.raw("<div class=\"scroll\"><table>\n" +
			`<tr><th>signal</th><th>transport</th><th class="num">requests/s</th><th class="num">items/s</th><th class="num">items stored</th><th class="num">items refused (retryable)</th><th class="num">items rejected (invalid)</th><th class="num">requests</th><th class="num">latency p50</th><th class="num">latency p99</th></tr>` + "\n")
		for _, r := range v.Ingest {
			b.raws(`<tr><td class="key">`, r.Signal, `</td><td>`, r.Transport, `</td>`)
			b.rate(r.Requests)
			b.rate(r.Accepted)
			b.val(r.Accepted)
			b.val(r.Refused)
			b.val(r.Failed)
			b.val(r.Requests)
			b.quantile("0.5", r.P50)
			b.quantile("0.99", r.P99)
			b.raw("</tr>\n")
		}
		b.raw("</table></div>")
	} else {
		b.raw(`<p class="empty">No export requests since start.</p>`)
	}
	b.raw("\n<div class=\"scroll\"><table style=\"margin-top: 10px\">\n" +
		`<tr><th>transport</th><th class="num">received/s (wire)</th><th class="num">received/s (decompressed)</th><th class="num">received (wire)</th><th class="num">received (decompressed)</th></tr>` + "\n")
	for _, r := range v.Bytes {
		b.raws(`<tr><td class="key">`, r.Transport, `</td>`)
		b.rate(r.Wire)
		b.rate(r.Decomp)
		b.val(r.Wire)
		b.val(r.Decomp)
		b.raw("</tr>\n")
	}
	b.raw("</table></div>\n</section>\n\n")

	b.raw("<section id=\"refusals\">\n<h2>Refusals by reason <small>requests not answered OK</small></h2>\n")
	if len(v.Refusals) > 0 {
		b.raw("<div class=\"scroll\"><table>\n<tr><th>reason</th>")
		for _, tr := range v.RefusalTransports {
			b.raws(`<th class="num">`, tr, `</th>`)
		}
		b.raw(`<th class="num">total</th><th class="num">/s</th></tr>` + "\n")
		for _, r := range v.Refusals {
			b.raws(`<tr><td class="key">`, r.Reason, `</td>`)
			for _, c := range r.Cells {
				b.val(c)
			}
			if len(r.Cells) > 0 { // the total's rate
				b.rate(r.Cells[len(r.Cells)-1])
			}
			b.raw("</tr>\n")
		}
		b.raw("</table></div>")
	} else {
		b.raw(`<p class="empty">No refusals since start.</p>`)
	}
	b.raw("\n</section>\n\n")

	a := &v.Admit
	b.raw("<section id=\"admission\">\n<h2>Admission budget <small>request bytes held at once</small></h2>\n<dl>\n<dt>in use</dt><dd>")
	b.span(a.InFlight)
	b.raw(" of ")
	b.span(a.Limit)
	b.raw("</dd>\n</dl>\n")
	b.bar(a.Pct)
	b.raw("\n<dl>\n<dt>waiting</dt><dd>")
	b.span(a.Waiting)
	b.raw(" of ")
	b.span(a.WaitingLimit)
	b.raw("</dd>\n</dl>\n")
	b.bar(a.WaitPct)
	b.raw("\n<table>\n" + `<tr><th></th><th class="num">total</th><th class="num">/s</th></tr>` + "\n")
	for _, c := range a.Counters {
		b.raws(`<tr><td>`, c.Name, `</td>`)
		b.val(c.Fig)
		b.rate(c.Fig)
		b.raw("</tr>\n")
	}
	b.raw("</table>\n</section>\n\n")

	b.raw("<section id=\"connections\">\n<h2>Connections and streams</h2>\n<table>\n" +
		`<tr><th></th><th class="num">now / total</th><th class="num">/s</th></tr>` + "\n")
	for _, c := range v.Conns {
		b.raws(`<tr><td>`, c.Name, `</td>`)
		b.val(c.Fig)
		if c.Rate {
			b.rate(c.Fig)
		} else {
			b.raw("<td></td>")
		}
		b.raw("</tr>\n")
	}
	b.raw("</table>\n</section>\n\n")

	st, set := &v.Storage, &v.Settings
	b.raws("<section class=\"wide\" id=\"storage\">\n<h2>Storage</h2>\n<div class=\"split\"><div>\n<dl>\n<dt>storage</dt><dd>", set.Storage, "")
	if set.DataDir != "" {
		b.raws(` in <code>`, set.DataDir, `</code>`)
	}
	b.raw("</dd>\n")
	if set.Sync != "" {
		b.raws(`<dt>sync policy</dt><dd id="sync">`, set.Sync, `</dd>`)
	}
	b.raw("\n")
	if set.Retention != "" {
		b.raws(`<dt>retention</dt><dd id="retention">`, set.Retention, `</dd>`)
	}
	b.raw("\n")
	if st.HasDisk {
		b.raw(`<dt>size</dt><dd>`)
		b.span(st.Total)
		if set.MaxBytes != 0 {
			b.raws(` (`, pct(st.Pct), `% of the size limit)`)
		}
		b.raw(`</dd>`)
	}
	b.raw("\n</dl>\n")
	if set.MaxBytes != 0 {
		b.bar(st.Pct)
	}
	b.raw("\n</div><div>\n")
	if len(st.Signals) > 0 {
		b.raw("<div class=\"scroll\"><table>\n" +
			`<tr><th>signal</th><th class="num">size</th><th class="num">segments</th><th class="num">records</th><th class="num">items</th><th class="num">write errors</th><th class="num">segments deleted</th><th class="num">mean write</th><th class="num">mean fsync</th></tr>` + "\n")
		for _, r := range st.Signals {
			b.raws(`<tr><td class="key">`, r.Signal, `</td>`)
			b.val(r.Bytes)
			b.val(r.Segments)
			b.val(r.Records)
			b.val(r.Items)
			b.val(r.WriteErrors)
			b.val(r.Deleted)
			b.raws(`<td class="num">`, r.WriteLatency, `</td><td class="num">`, r.SyncLatency, "</td></tr>\n")
		}
		b.raws("</table></div>\n"+`<p class="note">Mean write: the time storage takes to accept a request (durably, with sync policy always); mean fsync: one group commit. Both over the last `, v.WindowTxt, `.</p>`)
	}
	b.raw("\n</div></div>\n</section>\n\n")

	for _, pv := range v.Pivots {
		b.raws(`<section id="by-`, pv.Label, "\">\n<h2>", pv.Title, ` <small>series with a <code>`, pv.Label, "</code> label</small></h2>\n")
		if len(pv.Rows) > 0 {
			b.raws("<div class=\"scroll\"><table>\n<tr><th>", pv.Label, `</th>`)
			for _, c := range pv.Columns {
				b.raws(`<th class="num">`, c, `</th>`)
			}
			b.raw("</tr>\n")
			for _, r := range pv.Rows {
				b.raws(`<tr><td class="key">`, r.Key, `</td>`)
				for _, c := range r.Cells {
					b.raw(`<td class="num`)
					if c.Zero {
						b.raw(" zero")
					}
					b.raws(`" data-series="`, c.Sel, `" data-value="`, c.ValueAttr(), `">`, c.Text, "")
					if c.HasRate {
						b.raws(` <small class="rate" data-rate="`, c.Sel, `" data-value="`, c.RateAttr(), `">`, c.RateText, `</small>`)
					}
					b.raw("</td>")
				}
				b.raw("</tr>\n")
			}
			b.raw("</table></div>")
		} else {
			b.raws(`<p class="empty">`, pv.Empty, `</p>`)
		}
		b.raw("\n</section>\n")
	}

	b.raw("\n\n<section id=\"config\">\n<h2>Listeners and configuration</h2>\n<dl>\n")
	for _, l := range set.Listeners {
		b.raws(`<dt>`, l.Name, `</dt><dd><code>`, l.Value, "</code></dd>\n")
	}
	b.raw("</dl>\n")
	if len(set.Effective) > 0 {
		b.raws(`<details id="effective"><summary>Effective configuration: `, strconv.Itoa(len(set.Effective)),
			` settings, secrets redacted (also at <a href="config">/config</a>)</summary>`+"\n"+
				"<div class=\"scroll\"><table class=\"series\">\n<tr><th>flag</th><th>value</th><th>from</th></tr>\n")
		for _, e := range set.Effective {
			b.raw(`<tr`)
			if e.Source == "default" {
				b.raw(` class="dim"`)
			}
			b.raws(` title="`, e.Section, ` · `, e.Env, `"><td>-`, e.Flag, `</td><td>`, e.Value, `</td><td>`, e.Source, "</td></tr>\n")
		}
		b.raw("</table></div></details>")
	}
	b.raws("\n</section>\n\n<section class=\"wide\" id=\"all\">\n"+
		`<h2>All series <small>every otlplite_* and otelcol_* series of <a href="metrics">/metrics</a> (histogram buckets left out)</small></h2>`+"\n"+
		`<details id="all-series"><summary>`, strconv.Itoa(len(v.All)), " series</summary>\n<table class=\"series\">\n"+
		`<tr><th>series</th><th class="num">value</th><th class="num">/s</th></tr>`+"\n")
	for _, f := range v.All {
		b.raws(`<tr><td>`, f.Sel, `</td>`)
		b.val(f)
		if f.HasRate {
			b.rate(f)
		} else {
			b.raw("<td></td>")
		}
		b.raw("</tr>\n")
	}
	b.raw("</table></details>\n</section>\n</div>\n")
}

// charts are the page's five charts, each drawn by its script from
// /status/history (HistoryView's field of the same name): a figure with
// data-chart and data-unit, its SVG written into .plot. They are outside
// the main part, which the refresh replaces, so that they are redrawn in
// place, not blanked.
var charts = []struct{ key, unit, title string }{
	{"items_per_second", "count/s", "Items stored/s by signal"},
	{"refusals_per_second", "count/s", "Refusals/s by reason"},
	{"admission_in_use_bytes", "bytes", "Admission budget in use"},
	{"latency", "seconds", "Request latency p50 / p99"},
	{"forward_lag_seconds", "seconds", "Forwarding lag by destination"},
}

func writeCharts(b *htmlBuf, v *statusView) {
	b.raws("<div class=\"charts-outer\"><section id=\"charts\">\n"+
		`<h2>Last `, v.HistoryTxt, ` <small>a point every `, v.IntervalTxt, `, from <a href="status/history">/status/history</a></small></h2>`+"\n<div class=\"chartgrid\">\n")
	for _, c := range charts {
		b.raws(`<figure class="chart" data-chart="`, c.key, `" data-unit="`, c.unit, `"><figcaption>`, c.title,
			"</figcaption><div class=\"plot\"><p class=\"empty\">Drawn by the page's script.</p></div></figure>\n")
	}
	b.raw("</div>\n</section></div>\n")
}
