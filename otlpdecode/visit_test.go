package otlpdecode

import (
	"errors"
	"strings"
	"testing"

	"github.com/otlp-lite/otlp-lite/internal/viewwalk"
	"github.com/otlp-lite/otlp-lite/otlpview"
)

// errEvery is the rejection of testVisitor.
var errEvery = errors.New("the engine refuses every third item")

// testVisitor reads every field of every item it is handed (viewwalk),
// fails the test if a view cannot be read, and rejects every reject-th
// item (0: none).
type testVisitor struct {
	t       testing.TB
	reject  int
	sink    viewwalk.Sink
	visited int
	refused int
	// spanIDs are the span ids of the spans accepted, copied, when
	// collect is set.
	collect bool
	spanIDs []string
	// compare holds every view handed to the visitor equal to otlpview's
	// own decoding of the item's bytes (sameView), before it is read; req
	// is the request, whose dictionary profiles resolve against.
	compare bool
	req     []byte
	views   otlpview.ItemViews
	dict    bool // views holds req's dictionary
}

func (tv *testVisitor) verdict(err error) error {
	if err != nil {
		tv.t.Fatalf("a view of an item Check accepts cannot be read: %v", err)
	}
	tv.visited++
	if tv.reject > 0 && tv.visited%tv.reject == 0 {
		tv.refused++
		return errEvery
	}
	return nil
}

func (tv *testVisitor) header(res *otlpview.Resource, scope *otlpview.Scope) {
	if err := tv.sink.Resource(res); err != nil {
		tv.t.Fatal(err)
	}
	if err := tv.sink.Scope(scope); err != nil {
		tv.t.Fatal(err)
	}
}

func (tv *testVisitor) visitor() *Visitor {
	return &Visitor{
		Span: func(res *otlpview.Resource, scope *otlpview.Scope, s *otlpview.Span) error {
			tv.sameSpan(s)
			tv.header(res, scope)
			err := tv.verdict(tv.sink.Span(s))
			if err == nil && tv.collect {
				tv.spanIDs = append(tv.spanIDs, string(s.SpanID))
			}
			return err
		},
		DataPoint: func(res *otlpview.Resource, scope *otlpview.Scope, m *otlpview.Metric, p *otlpview.DataPoint) error {
			tv.samePoint(m, p)
			tv.header(res, scope)
			return tv.verdict(tv.sink.DataPoint(m, p))
		},
		LogRecord: func(res *otlpview.Resource, scope *otlpview.Scope, r *otlpview.LogRecord) error {
			tv.sameRecord(r)
			tv.header(res, scope)
			return tv.verdict(tv.sink.LogRecord(r))
		},
		Profile: func(res *otlpview.Resource, scope *otlpview.Scope, p *otlpview.Profile) error {
			tv.sameProfile(p)
			tv.header(res, scope)
			return tv.verdict(tv.sink.Profile(p))
		},
	}
}

func checkAndFilter(sig signal) (func([]byte, *Options) (Result, error), func(dst, src []byte, opts *Options) ([]byte, error)) {
	switch sig {
	case signalTraces:
		return CheckTraces, AppendValidTraces
	case signalMetrics:
		return CheckMetrics, AppendValidMetrics
	case signalProfiles:
		return CheckProfiles, AppendValidProfiles
	}
	return CheckLogs, AppendValidLogs
}

// visitedConsistency holds the visited check of src to the plain one: the
// same error; the visitor handed every item the rules accept, once, each
// readable in full; its rejections counted in the Result; and
// AppendValid*, given the same Options, keeps exactly the items both the
// rules and the visitor accepted.
func visitedConsistency(t *testing.T, sig signal, src []byte, opts Options, reject int) {
	t.Helper()
	check, filter := checkAndFilter(sig)
	plain, plainErr := check(src, &opts)
	tv := &testVisitor{t: t, reject: reject, compare: true, req: src}
	opts.Visit = &Visit{Visitor: tv.visitor()}
	res, err := check(src, &opts)
	if (err == nil) != (plainErr == nil) || (err != nil && err.Error() != plainErr.Error()) {
		t.Fatalf("visited check: %v, plain check: %v", err, plainErr)
	}
	if err != nil {
		return
	}
	// A metric with two members of its data oneof: only the last one's
	// points count, but the visitor saw the others' too.
	if sig != signalMetrics || tv.visited == plain.Items-plain.Rejected {
		if tv.visited != plain.Items-plain.Rejected {
			t.Fatalf("visited %d items, %d of %d are valid", tv.visited, plain.Items-plain.Rejected, plain.Items)
		}
		if res.Items != plain.Items || res.Rejected != plain.Rejected+tv.refused || (res.Rejected == 0) != (res.FirstRejection == "") {
			t.Fatalf("visited result %+v, plain %+v, %d refused by the visitor", res, plain, tv.refused)
		}
	}
	out, err := filter(nil, src, &opts)
	if err != nil {
		t.Fatalf("AppendValid refuses what Check accepts: %v", err)
	}
	opts.Visit = nil
	after, err := check(out, &opts)
	if err != nil || after.Rejected != 0 || after.Items != res.Items-res.Rejected {
		t.Fatalf("AppendValid output: %+v, %v; input %+v", after, err, res)
	}
}

// TestVisitor: the visitor gets every valid item of the golden payloads,
// readable in full, never an invalid one; what it rejects is counted and
// filtered out, with or without rejections by the rules.
func TestVisitor(t *testing.T) {
	for _, tt := range []struct {
		file string
		sig  signal
	}{
		{"traces_500x10.pb", signalTraces},
		{"traces_all_fields.pb", signalTraces},
		{"traces_invalid_ids.pb", signalTraces},
		{"metrics_all_kinds.pb", signalMetrics},
		{"logs_all_fields.pb", signalLogs},
		{"logs_invalid_ids.pb", signalLogs},
	} {
		src := golden(t, tt.file)
		for _, reject := range []int{0, 1, 3} {
			for _, opts := range []Options{{}, {ValidateUTF8: true}} {
				visitedConsistency(t, tt.sig, src, opts, reject)
			}
		}
	}
	for _, name := range []string{"profiles_realistic.pb", "profiles_small.pb", "profiles_invalid.pb"} {
		src := profileSeed(t, name)
		for _, reject := range []int{0, 1, 3} {
			visitedConsistency(t, signalProfiles, src, Options{ValidateUTF8: true}, reject)
		}
	}
}

// TestVisitorRejection: a rejected span is named in FirstRejection with
// the visitor's words, and AppendValidTraces removes exactly the spans the
// visitor refused.
func TestVisitorRejection(t *testing.T) {
	src := golden(t, "traces_500x10.pb")
	tv := &testVisitor{t: t, reject: 3, collect: true}
	opts := &Options{Visit: &Visit{Visitor: tv.visitor()}}
	res, err := CheckTraces(src, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Items != 500 || res.Rejected != 166 || tv.refused != 166 {
		t.Fatalf("result %+v, %d refused", res, tv.refused)
	}
	if want := "resource_spans[0].scope_spans[0].spans[2]: " + errEvery.Error(); res.FirstRejection != want {
		t.Fatalf("FirstRejection %q, want %q", res.FirstRejection, want)
	}
	out, err := AppendValidTraces(nil, src, opts)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	var d otlpview.TracesDecoder
	if err := d.Decode(out, func(_ *otlpview.Resource, _ *otlpview.Scope, s *otlpview.Span) error {
		kept = append(kept, string(s.SpanID))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(kept, ",") != strings.Join(tv.spanIDs, ",") {
		t.Fatalf("AppendValidTraces kept %d spans, the visitor accepted %d", len(kept), len(tv.spanIDs))
	}
}

// TestVisitorNotCalledUnderInvalidResource: with ValidateUTF8, a resource
// whose attribute is not UTF-8 rejects its spans, which the visitor never
// sees, even when the resource follows them on the wire.
func TestVisitorNotCalledUnderInvalidResource(t *testing.T) {
	sp := span(16, 8, nil)
	badRes := pb{}.Msg(1, strAttr("k", "\xff"))
	src := request(badRes, nil, []pb{sp, sp})
	// The same with the resource after the scopes.
	moved := pb{}.Msg(1, pb{}.Msg(2, pb{}.Msg(2, sp)).Msg(1, badRes))
	for _, req := range []pb{src, moved} {
		called := 0
		opts := &Options{ValidateUTF8: true, Visit: &Visit{Visitor: &Visitor{Span: func(*otlpview.Resource, *otlpview.Scope, *otlpview.Span) error {
			called++
			return nil
		}}}}
		res, err := CheckTraces(req, opts)
		if err != nil || res.Rejected != res.Items || res.Items == 0 || called != 0 {
			t.Fatalf("%+v, %v; visitor called %d times", res, err, called)
		}
	}
}

// TestVisitorZeroAllocs: a reused Visit allocates nothing in steady state
// with a visitor that reads every field and accepts every item.
func TestVisitorZeroAllocs(t *testing.T) {
	for _, tt := range []struct {
		file string
		sig  signal
	}{
		{"traces_500x10.pb", signalTraces},
		{"metrics_all_kinds.pb", signalMetrics},
		{"logs_all_fields.pb", signalLogs},
	} {
		src := golden(t, tt.file)
		check, _ := checkAndFilter(tt.sig)
		tv := &testVisitor{t: t}
		opts := &Options{Visit: &Visit{Visitor: tv.visitor()}}
		run := func() {
			if _, err := check(src, opts); err != nil {
				t.Fatal(err)
			}
		}
		run()
		if n := testing.AllocsPerRun(10, run); n != 0 {
			t.Errorf("%s: %v allocations per visited check, want 0", tt.file, n)
		}
	}
}
