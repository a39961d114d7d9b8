package otlpdecode

import (
	"encoding/binary"
	"reflect"
	"testing"

	"github.com/otlp-lite/otlp-lite/internal/pbtest"
	"github.com/otlp-lite/otlp-lite/otlppb"
	"github.com/otlp-lite/otlp-lite/otlpview"
)

// The views a visitor gets are filled by the check walk as it reads each
// item (checker.span, logRecord, dataPoint, profile with a view); these
// hold each to otlpview's own decoding of the item's bytes (its Raw),
// field for field. testVisitor calls them when compare is set, as
// visitedConsistency, and so every fuzz target, does.

func (tv *testVisitor) sameSpan(got *otlpview.Span) {
	if !tv.compare {
		return
	}
	want, err := tv.views.Span(got.Raw)
	if err != nil {
		tv.t.Fatalf("otlpview cannot decode a span Check accepts: %v", err)
	}
	if !reflect.DeepEqual(*got, *want) {
		tv.t.Fatalf("visited span view\n%+v\nwant otlpview's\n%+v", *got, *want)
	}
}

func (tv *testVisitor) sameRecord(got *otlpview.LogRecord) {
	if !tv.compare {
		return
	}
	want, err := tv.views.LogRecord(got.Raw)
	if err != nil {
		tv.t.Fatalf("otlpview cannot decode a log record Check accepts: %v", err)
	}
	if !reflect.DeepEqual(*got, *want) {
		tv.t.Fatalf("visited log record view\n%+v\nwant otlpview's\n%+v", *got, *want)
	}
}

// samePoint compares the point with otlpview's decoding of its bytes as
// the kind of view it holds (a metric's earlier data member, which
// protobuf drops, has points of another kind than m.Type). Empty unpacked
// buckets are nil or not depending on the buffers' history: both read as
// none.
func (tv *testVisitor) samePoint(m *otlpview.Metric, got *otlpview.DataPoint) {
	if !tv.compare {
		return
	}
	var kind otlppb.PointKind
	switch {
	case got.Number != nil:
		kind = otlppb.MetricGauge
	case got.Histogram != nil:
		kind = otlppb.MetricHistogram
	case got.ExponentialHistogram != nil:
		kind = otlppb.MetricExponentialHistogram
	case got.Summary != nil:
		kind = otlppb.MetricSummary
	default:
		tv.t.Fatalf("visited data point of metric %q holds no point", m.Name)
	}
	g := pointValue(got)
	var views otlpview.ItemViews // not tv.views: the two would share buffers
	want, err := views.DataPoint(kind, got.Raw)
	if err != nil {
		tv.t.Fatalf("otlpview cannot decode a data point Check accepts: %v", err)
	}
	w := pointValue(want)
	if !reflect.DeepEqual(g, w) {
		tv.t.Fatalf("visited data point view\n%+v\nwant otlpview's\n%+v", g, w)
	}
}

// pointValue is a copy of p's view, its empty slices nil.
func pointValue(p *otlpview.DataPoint) any {
	switch {
	case p.Number != nil:
		return *p.Number
	case p.Histogram != nil:
		h := *p.Histogram
		h.BucketCounts, h.ExplicitBounds = nilIfEmpty(h.BucketCounts), nilIfEmpty(h.ExplicitBounds)
		return h
	case p.ExponentialHistogram != nil:
		e := *p.ExponentialHistogram
		e.Positive.BucketCounts, e.Negative.BucketCounts = nilIfEmpty(e.Positive.BucketCounts), nilIfEmpty(e.Negative.BucketCounts)
		return e
	case p.Summary != nil:
		return *p.Summary
	}
	return nil
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// sameProfile compares the profile's fields with otlpview's decoding of
// its bytes. Attributes, Samples and Dictionary are built from Raw and
// the request's dictionary by the one reset both share; they are left
// out (their buffers hold what earlier profiles unpacked), the
// dictionary checked to be the visit's.
func (tv *testVisitor) sameProfile(got *otlpview.Profile) {
	if !tv.compare {
		return
	}
	if !tv.dict {
		if _, err := tv.views.Dictionary(tv.req); err != nil {
			tv.t.Fatalf("otlpview cannot read the dictionary of a request Check accepts: %v", err)
		}
		tv.dict = true
	}
	want, err := tv.views.Profile(got.Raw)
	if err != nil {
		tv.t.Fatalf("otlpview cannot decode a profile Check accepts: %v", err)
	}
	if got.Dictionary == nil {
		tv.t.Fatal("visited profile without its dictionary")
	}
	g, w := *got, *want
	g.Attributes, g.Samples, g.Dictionary = otlpview.Attributes{}, otlpview.Samples{}, nil
	w.Attributes, w.Samples, w.Dictionary = otlpview.Attributes{}, otlpview.Samples{}, nil
	if !reflect.DeepEqual(g, w) {
		tv.t.Fatalf("visited profile view\n%+v\nwant otlpview's\n%+v", g, w)
	}
}

// TestVisitedItemIsItsView: the view of every log record, data point (of
// the four kinds) and profile the check fills as it walks is the view
// otlpview decodes from the item's bytes, field for field: for the golden
// payloads and for items with every field twice, fields of the wrong wire
// type, long varints and unknown fields.
func TestVisitedItemIsItsView(t *testing.T) {
	// A varint in 10 bytes (its value 1): long, but valid.
	long := func(m pb, num int) pb {
		return m.Tag(num, 0).Append(pb{0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00})
	}
	oddRecord := pb{}.Fixed64(1, 5).Fixed64(1, 6).Varint(2, 9).Varint(2, 1<<40).Str(3, "x").Str(3, "WARN").
		Msg(5, pb{}.Str(1, "body")).Msg(5, pb{}.Varint(3, 7)). // the body merges: the int wins
		Msg(6, strAttr("a", "1")).Varint(7, 2).Fixed32(8, 1).Msg(9, ids(16, 3)).Msg(10, ids(8, 4)).
		Fixed64(11, 12).Str(12, "ev").Str(12, "event").Msg(6, strAttr("b", "2")).
		Varint(1, 3).Fixed32(2, 1).Varint(9, 1).Fixed64(99, 1) // wrong wire types, an unknown field
	oddRecord = long(oddRecord, 7)
	bareRecord := pb{}

	// Every role of the four point kinds twice, then the wrong wire type.
	number := pb{}.Fixed64(2, 1).Fixed64(3, 2).Fixed64(4, 3).Msg(7, strAttr("k", "v")).
		Msg(5, pb{}.Fixed64(2, 9).Msg(4, ids(8, 1))).Fixed64(6, 4). // as_int wins over as_double
		Varint(8, 1).Fixed64(3, 5).Varint(3, 1).Fixed32(8, 2)
	number = long(number, 8)
	numberDouble := pb{}.Fixed64(6, 4).Fixed64(4, 0x4000000000000000) // as_double last
	hist := pb{}.Fixed64(2, 1).Fixed64(3, 2).Fixed64(4, 6).Fixed64(5, 1).Fixed64(5, 2).
		Msg(6, fixed64s(1, 2)).Fixed64(6, 3).Msg(7, fixed64s(1)).Fixed64(7, 2). // packed and unpacked runs
		Msg(8, pb{}.Fixed64(3, 1)).Varint(10, 1).Fixed64(11, 0).Fixed64(12, 9).Msg(9, strAttr("h", "1")).
		Varint(4, 1).Varint(11, 2)
	emptyHist := pb{}.Fixed64(4, 0)
	exp := pb{}.Msg(1, strAttr("e", "1")).Fixed64(2, 1).Fixed64(3, 2).Fixed64(4, 3).Fixed64(5, 1).
		Varint(6, 3).Varint(6, 5).Fixed64(7, 1).
		Msg(8, pb{}.Varint(1, 3).Msg(2, packedVarints(1, 2))).Msg(8, pb{}.Varint(2, 4)). // buckets merge
		Msg(9, pb{}.Varint(1, 1)).Varint(10, 1).Msg(11, pb{}.Fixed64(3, 1)).
		Fixed64(12, 1).Fixed64(13, 2).Fixed64(14, 3).Varint(14, 1)
	exp = long(exp, 10)
	summary := pb{}.Fixed64(2, 1).Fixed64(3, 2).Fixed64(4, 3).Fixed64(5, 4).Fixed64(5, 5).
		Msg(6, pb{}.Fixed64(1, 0).Fixed64(2, 1)).Msg(6, pb{}.Fixed64(1, 0x3ff0000000000000)).
		Varint(8, 1).Msg(7, strAttr("s", "1")).Varint(2, 1)
	metric := func(name string, field int, points ...pb) pb {
		data := pb{}.Varint(2, 2).Varint(3, 1)
		for _, p := range points {
			data = data.Msg(1, p)
		}
		return pb{}.Str(1, name).Msg(field, data).Str(3, "1")
	}
	metrics := []pb{
		metric("gauge", otlppb.MetricGauge, number, numberDouble, pb{}),
		metric("sum", otlppb.MetricSum, number, numberDouble),
		metric("histogram", otlppb.MetricHistogram, hist, emptyHist, hist),
		metric("exp", otlppb.MetricExponentialHistogram, exp, pb{}, exp),
		metric("summary", otlppb.MetricSummary, summary, pb{}),
		// Two members of the oneof: the first's points are visited too.
		metric("two", otlppb.MetricHistogram, hist).Msg(otlppb.MetricSummary, pb{}.Msg(1, summary)),
	}

	oddProfile := profile(pb{}.Fixed64(3, 2).Varint(4, 7).Varint(6, 3).Msg(7, ids(16, 2)).Varint(8, 3).
		Str(9, "pprof").Msg(10, pb{1, 2, 3}).Msg(1, pb{}.Varint(2, 3)).Msg(11, packed(2)).
		Varint(9, 1).Fixed64(4, 1).Varint(99, 1)) // wrong wire types, an unknown field
	oddProfile = long(oddProfile, 4)

	for _, tt := range []struct {
		name string
		sig  signal
		src  []byte
	}{
		{"odd log records", signalLogs, pbtest.Request(pb{}, pb{}, []pb{oddRecord, bareRecord, oddRecord})},
		{"logs_all_fields.pb", signalLogs, golden(t, "logs_all_fields.pb")},
		{"logs_invalid_ids.pb", signalLogs, golden(t, "logs_invalid_ids.pb")},
		{"odd points", signalMetrics, pbtest.Request(pb{}, pb{}, metrics)},
		{"metrics_all_kinds.pb", signalMetrics, golden(t, "metrics_all_kinds.pb")},
		{"metrics_no_points.pb", signalMetrics, golden(t, "metrics_no_points.pb")},
		{"odd profiles", signalProfiles, profilesRequest(testDict, oddProfile, profile(nil), oddProfile)},
		{"profiles_realistic.pb", signalProfiles, profileSeed(t, "profiles_realistic.pb")},
		{"profiles_small.pb", signalProfiles, profileSeed(t, "profiles_small.pb")},
		{"profiles_invalid.pb", signalProfiles, profileSeed(t, "profiles_invalid.pb")},
	} {
		check, _ := checkAndFilter(tt.sig)
		tv := &testVisitor{t: t, compare: true, req: tt.src}
		res, err := check(tt.src, &Options{Visit: &Visit{Visitor: tv.visitor()}})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if (tv.visited == 0 && res.Items > 0) || (tt.sig != signalMetrics && tv.visited != res.Items-res.Rejected) {
			t.Errorf("%s: visited %d items, %d of %d are valid", tt.name, tv.visited, res.Items-res.Rejected, res.Items)
		}
		for _, opts := range []Options{{}, {ValidateUTF8: true}} {
			visitedConsistency(t, tt.sig, tt.src, opts, 3)
		}
	}
}

// packedVarints is a packed run of varints.
func packedVarints(vs ...uint64) pb {
	var b pb
	for _, v := range vs {
		b = pb(binary.AppendUvarint(b, v))
	}
	return b
}
