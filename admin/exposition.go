package admin

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/VictoriaMetrics/metrics"
)

// The status page reads the metrics set the way a scraper does: from its
// Prometheus text output. So every figure on the page is one /metrics
// shows (same names, same values at the same moment), and a family added
// anywhere in the binary (a forwarder's, a tenant's) reaches the page with
// no code here.

// label is one name="value" pair of a series.
type label struct{ name, value string }

// series is one sample line of an exposition.
type series struct {
	key    string // the series as written before its value: name{labels}
	name   string
	labels []label
	value  float64
}

// label returns the value of the label called name, or "".
func (s *series) label(name string) string {
	for _, l := range s.labels {
		if l.name == name {
			return l.value
		}
	}
	return ""
}

// exposition is one parsed Prometheus text exposition.
type exposition struct {
	series []series
	byKey  map[string]int    // index in series
	types  map[string]string // family name → counter, gauge, histogram...
}

// parseExposition parses the Prometheus text format (version 0.0.4) as
// VictoriaMetrics/metrics writes it: "# TYPE" lines, then
// name{label="value",...} value. Comments other than TYPE, and timestamps,
// are ignored.
func parseExposition(data []byte) (*exposition, error) {
	e := &exposition{byKey: map[string]int{}, types: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			if name, typ, ok := strings.Cut(rest, " "); ok {
				e.types[name] = strings.TrimSpace(typ)
			}
			continue
		}
		if line[0] == '#' {
			continue
		}
		s, err := parseSeries(line)
		if err != nil {
			return nil, fmt.Errorf("cannot parse metrics line %d %q: %w", n, line, err)
		}
		e.byKey[s.key] = len(e.series)
		e.series = append(e.series, s)
	}
	return e, sc.Err()
}

func parseSeries(line string) (series, error) {
	var s series
	i := strings.IndexAny(line, "{ ")
	if i <= 0 {
		return s, fmt.Errorf("no value")
	}
	s.name = line[:i]
	if line[i] == '{' {
		j := i + 1
		for {
			for j < len(line) && (line[j] == ',' || line[j] == ' ') {
				j++
			}
			if j < len(line) && line[j] == '}' {
				j++
				break
			}
			eq := strings.IndexByte(line[j:], '=')
			if eq <= 0 || j+eq+1 >= len(line) || line[j+eq+1] != '"' {
				return s, fmt.Errorf("bad label")
			}
			name := line[j : j+eq]
			j += eq + 2
			var v strings.Builder
			for ; j < len(line) && line[j] != '"'; j++ {
				c := line[j]
				if c == '\\' && j+1 < len(line) {
					j++
					switch line[j] {
					case 'n':
						c = '\n'
					default:
						c = line[j]
					}
				}
				v.WriteByte(c)
			}
			if j >= len(line) {
				return s, fmt.Errorf("unterminated label value")
			}
			j++ // the closing quote
			s.labels = append(s.labels, label{name, v.String()})
		}
		i = j
	}
	s.key = line[:i]
	fields := strings.Fields(line[i:])
	if len(fields) == 0 {
		return s, fmt.Errorf("no value")
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return s, err
	}
	s.value = v
	return s, nil
}

// typeOf returns the type of the family of a series name: a histogram's
// _bucket, _sum and _count series are of the histogram. Names without a
// TYPE line that end in _total are counters, as by convention.
func (e *exposition) typeOf(name string) string {
	if t, ok := e.types[name]; ok {
		return t
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			if t, ok := e.types[base]; ok {
				return t
			}
		}
	}
	if strings.HasSuffix(name, "_total") {
		return "counter"
	}
	return "gauge"
}

// cumulative reports whether the series of name only grow (counters, and a
// histogram's buckets, sum and count), so a rate of them means something.
func (e *exposition) cumulative(name string) bool {
	switch e.typeOf(name) {
	case "counter", "histogram", "summary":
		return true
	}
	return false
}

// selector picks series: those of one name whose labels include all of
// match. Its String form, name{l="v",...}, is what the page puts in
// data-series, so that a test (or a person) can sum the same series of
// /metrics.
type selector struct {
	name  string
	match []label
}

func sel(name string, kv ...string) selector {
	s := selector{name: name}
	for i := 0; i+1 < len(kv); i += 2 {
		s.match = append(s.match, label{kv[i], kv[i+1]})
	}
	return s
}

func (s selector) String() string {
	if len(s.match) == 0 {
		return s.name
	}
	var b strings.Builder
	b.WriteString(s.name)
	b.WriteByte('{')
	for i, l := range s.match {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l.name)
		b.WriteString(`="`)
		b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(l.value))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

func (s selector) matches(x *series) bool {
	if x.name != s.name {
		return false
	}
	for _, m := range s.match {
		if x.label(m.name) != m.value {
			return false
		}
	}
	return true
}

// sum returns the sum of the series s picks, and whether there was any.
func (e *exposition) sum(s selector) (float64, bool) {
	var total float64
	found := false
	for i := range e.series {
		if s.matches(&e.series[i]) {
			total += e.series[i].value
			found = true
		}
	}
	return total, found
}

// values returns the distinct values of label key among the series of name,
// in order of first appearance.
func (e *exposition) values(name, key string) []string {
	var out []string
	seen := map[string]bool{}
	for i := range e.series {
		if e.series[i].name != name {
			continue
		}
		v := e.series[i].label(key)
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// Exposition is a parsed Prometheus text exposition, for tests and tools
// that compare what the status page shows with what /metrics says.
type Exposition struct{ e *exposition }

// ParseExposition parses a /metrics answer.
func ParseExposition(data []byte) (*Exposition, error) {
	e, err := parseExposition(data)
	if err != nil {
		return nil, err
	}
	return &Exposition{e}, nil
}

// Sum returns the sum of the series a figure's data-series names: one
// selector, name{label="value",...}, or several joined by " + ".
func (x *Exposition) Sum(list string) (float64, error) {
	var total float64
	for _, one := range strings.Split(list, " + ") {
		s, err := parseSeries(one + " 0")
		if err != nil {
			return 0, fmt.Errorf("bad selector %q: %w", one, err)
		}
		v, _ := x.e.sum(selector{name: s.name, match: s.labels})
		total += v
	}
	return total, nil
}

// Cumulative reports whether the series of name only grow (counters and
// histograms).
func (x *Exposition) Cumulative(name string) bool { return x.e.cumulative(name) }

// figureRE finds the figures of a rendered page: an element's data-series
// or data-rate, then its data-value.
var figureRE = regexp.MustCompile(`data-(series|rate)="([^"]*)" data-value="([^"]*)"`)

// PageFigure is one figure of a rendered status page: the series it sums
// (Sel, a selector list as Exposition.Sum reads), whether it is their rate
// over the window, and its exact value.
type PageFigure struct {
	Rate  bool
	Sel   string
	Value float64
}

// PageFigures reads back the figures of a rendered status page, from the
// data-series (or data-rate) and data-value attributes every figure
// carries.
func PageFigures(html string) ([]PageFigure, error) {
	var out []PageFigure
	for _, m := range figureRE.FindAllStringSubmatch(html, -1) {
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			return nil, fmt.Errorf("bad data-value %q", m[3])
		}
		out = append(out, PageFigure{m[1] == "rate", unescapeHTML(m[2]), v})
	}
	return out, nil
}

func unescapeHTML(s string) string {
	return strings.NewReplacer("&#34;", `"`, "&quot;", `"`, "&#92;", `\`, "&amp;", "&", "&lt;", "<", "&gt;", ">", "&#43;", "+").Replace(s)
}

// Series is one sample line of an exposition: its name, labels in the
// order written, and value.
type Series struct {
	Name   string
	Labels [][2]string
	Value  float64
}

// Series returns every sample line, in the order written.
func (x *Exposition) Series() []Series {
	out := make([]Series, len(x.e.series))
	for i := range x.e.series {
		s := &x.e.series[i]
		out[i] = Series{Name: s.name, Value: s.value}
		for _, l := range s.labels {
			out[i].Labels = append(out[i].Labels, [2]string{l.name, l.value})
		}
	}
	return out
}

// Type is the type of the family of a series name: counter, gauge,
// histogram or summary, from its # TYPE line (a histogram's _bucket, _sum
// and _count series are of the histogram), else counter for a name ending
// in _total and gauge for the rest.
func (x *Exposition) Type(name string) string { return x.e.typeOf(name) }

// Scrape parses what /metrics serves of set: its series, then the process
// and Go runtime metrics, label values through package redact, as a
// scraper would see them (the self-telemetry's source: one account).
func Scrape(set *metrics.Set) (*Exposition, error) {
	var b bytes.Buffer
	set.WritePrometheus(&b)
	metrics.WriteProcessMetrics(&b)
	e, err := parseExposition(redactLabels(b.Bytes()))
	if err != nil {
		return nil, err
	}
	return &Exposition{e}, nil
}
