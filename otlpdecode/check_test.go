package otlpdecode

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
)

const badUTF8 = "bad\xff"

var utf8Opts = &Options{ValidateUTF8: true}

func TestCheckTracesRules(t *testing.T) {
	zeroIDs := pb{}.Msg(1, make(pb, 16)).Msg(2, make(pb, 8))
	// lastByte returns an id of n bytes that is zero but for its last byte.
	lastByte := func(n int) pb { b := make(pb, n); b[n-1] = 1; return b }
	zeroLink := pb{}.Msg(1, make(pb, 16)).Msg(2, make(pb, 8)).Msg(4, strAttr("k", "v"))
	tests := []struct {
		name  string
		span  pb
		opts  *Options
		first string // expected FirstRejection, "" when valid
	}{
		{"valid", span(16, 8, nil), nil, ""},
		{"all-zero ids", zeroIDs, nil, "trace_id is all zeroes"},
		{"zero trace_id", pb{}.Msg(1, make(pb, 16)).Msg(2, ids(8, 1)), nil, "trace_id is all zeroes"},
		{"zero span_id", pb{}.Msg(1, ids(16, 1)).Msg(2, make(pb, 8)), nil, "span_id is all zeroes"},
		{"ids zero but for the last byte", pb{}.Msg(1, lastByte(16)).Msg(2, lastByte(8)), nil, ""},
		{"trace_id zero but for the first byte", pb{}.Msg(1, ids(1, 1).Append(make(pb, 15))).Msg(2, ids(8, 1)), nil, ""},
		{"last trace_id wins (zero)", span(16, 8, pb{}.Msg(1, make(pb, 16))), nil, "trace_id is all zeroes"},
		{"last span_id wins (nonzero)", append(pb{}.Msg(2, make(pb, 8)), span(16, 8, nil)...), nil, ""},
		{"zero trace_id with bad UTF-8", pb{}.Msg(1, make(pb, 16)).Msg(2, ids(8, 1)).Str(5, badUTF8), utf8Opts, "trace_id is all zeroes"},
		{"zero parent_span_id is valid", span(16, 8, pb{}.Msg(4, make(pb, 8))), nil, ""},
		{"zero link ids are valid", span(16, 8, pb{}.Msg(13, zeroLink)), nil, ""},
		{"zero link ids, bad length still rejected", span(16, 8, pb{}.Msg(13, zeroLink).Msg(13, pb{}.Msg(1, make(pb, 15)).Msg(2, make(pb, 8)))), nil,
			"links[1].trace_id is 15 bytes, want 16"},
		{"parent 8", span(16, 8, pb{}.Msg(4, ids(8, 0))), nil, ""},
		{"trace_id 3", span(3, 8, nil), nil, "trace_id is 3 bytes, want 16"},
		{"trace_id missing", pb{}.Msg(2, ids(8, 0)), nil, "trace_id is 0 bytes, want 16"},
		{"trace_id 17", span(17, 8, nil), nil, "trace_id is 17 bytes, want 16"},
		{"span_id 0", span(16, 0, nil), nil, "span_id is 0 bytes, want 8"},
		{"parent 5", span(16, 8, pb{}.Msg(4, ids(5, 0))), nil, "parent_span_id is 5 bytes, want empty or 8"},
		{"last trace_id wins (bad)", span(16, 8, pb{}.Msg(1, ids(2, 0))), nil, "trace_id is 2 bytes, want 16"},
		{"last trace_id wins (good)", append(pb{}.Msg(1, ids(16, 0)), span(16, 8, nil)...), nil, ""},
		// pdata refuses a request with any occurrence of an id of
		// another length (ValidIDLen), even one a later one replaces.
		{"an earlier trace_id of 2 bytes", append(pb{}.Msg(1, ids(2, 0)), span(16, 8, nil)...), nil, "trace_id is 2 bytes, want empty or 16 in every occurrence"},
		{"an earlier parent_span_id of 5 bytes", span(16, 8, pb{}.Msg(4, ids(5, 0)).Msg(4, ids(8, 0))), nil, "parent_span_id is 5 bytes, want empty or 8 in every occurrence"},
		{"an earlier link span_id of 3 bytes", span(16, 8, pb{}.Msg(13, pb{}.Msg(1, ids(16, 0)).Msg(2, ids(3, 0)).Msg(2, ids(8, 0)))), nil,
			"links[0].span_id is 3 bytes, want empty or 8 in every occurrence"},
		{"trace_id as varint is unknown", span(16, 8, pb{}.Varint(1, 3)), nil, ""},
		{"link trace_id", span(16, 8, pb{}.Msg(13, pb{}.Msg(1, ids(16, 0)).Msg(2, ids(8, 0))).Msg(13, pb{}.Msg(1, ids(4, 0)).Msg(2, ids(8, 0)))), nil,
			"links[1].trace_id is 4 bytes, want 16"},
		{"link span_id", span(16, 8, pb{}.Msg(13, pb{}.Msg(1, ids(16, 0)))), nil, "links[0].span_id is 0 bytes, want 8"},
		{"bad UTF-8 ignored by default", span(16, 8, pb{}.Str(5, badUTF8)), nil, ""},
		{"name", span(16, 8, pb{}.Str(5, badUTF8)), utf8Opts, "name is not valid UTF-8"},
		{"trace_state", span(16, 8, pb{}.Str(3, badUTF8)), utf8Opts, "trace_state is not valid UTF-8"},
		{"attribute key", span(16, 8, pb{}.Msg(9, strAttr(badUTF8, "v"))), utf8Opts, "attributes[2] is not valid UTF-8"},
		{"nested attribute value", span(16, 8, pb{}.Msg(9, pb{}.Str(1, "k").Msg(2, pb{}.Msg(5, pb{}.Msg(1, pb{}.Str(1, badUTF8)))))), utf8Opts,
			"attributes[2] is not valid UTF-8"},
		{"event name", span(16, 8, pb{}.Msg(11, pb{}.Str(2, "ok")).Msg(11, pb{}.Str(2, badUTF8))), utf8Opts, "events[1].name is not valid UTF-8"},
		{"event attribute", span(16, 8, pb{}.Msg(11, pb{}.Msg(3, strAttr("k", badUTF8)))), utf8Opts, "events[0].attributes[0] is not valid UTF-8"},
		{"link trace_state", span(16, 8, pb{}.Msg(13, pb{}.Msg(1, ids(16, 0)).Msg(2, ids(8, 0)).Str(3, badUTF8))), utf8Opts,
			"links[0].trace_state is not valid UTF-8"},
		{"status message", span(16, 8, pb{}.Msg(15, pb{}.Str(2, badUTF8))), utf8Opts, "status.message is not valid UTF-8"},
		{"ids reported before UTF-8", span(3, 8, pb{}.Str(5, badUTF8)), utf8Opts, "trace_id is 3 bytes, want 16"},
		{"bytes values are not UTF-8 checked", span(16, 8, pb{}.Msg(9, pb{}.Str(1, "b").Msg(2, pb{}.Str(7, badUTF8)))), utf8Opts, ""},
		// pdata writes fields backwards: value before key. The fast
		// path of keyValue takes both orders.
		{"value-first attribute", span(16, 8, pb{}.Msg(9, pb{}.Msg(2, pb{}.Str(1, "v")).Str(1, "k"))), utf8Opts, ""},
		{"value-first attribute, bad key", span(16, 8, pb{}.Msg(9, pb{}.Msg(2, pb{}.Str(1, "v")).Str(1, badUTF8))), utf8Opts,
			"attributes[2] is not valid UTF-8"},
		{"value-first attribute, bad value", span(16, 8, pb{}.Msg(9, pb{}.Msg(2, pb{}.Str(1, badUTF8)).Str(1, "k"))), utf8Opts,
			"attributes[2] is not valid UTF-8"},
		{"value-first attribute, nested bad value", span(16, 8, pb{}.Msg(9, pb{}.Msg(2, pb{}.Msg(5, pb{}.Msg(1, pb{}.Str(1, badUTF8)))).Str(1, "k"))), utf8Opts,
			"attributes[2] is not valid UTF-8"},
		{"value-first attribute, int value", span(16, 8, pb{}.Msg(9, pb{}.Msg(2, pb{}.Varint(3, 7)).Str(1, badUTF8))), utf8Opts,
			"attributes[2] is not valid UTF-8"},
		{"key, value, then key again", span(16, 8, pb{}.Msg(9, pb{}.Str(1, "k").Msg(2, pb{}.Str(1, "v")).Str(1, badUTF8))), utf8Opts,
			"attributes[2] is not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := request(nil, nil, []pb{span(16, 8, nil), tt.span})
			res, err := CheckTraces(src, tt.opts)
			if err != nil {
				t.Fatalf("CheckTraces: %v", err)
			}
			want := Result{Items: 2}
			if tt.first != "" {
				want.Rejected = 1
				want.FirstRejection = "resource_spans[0].scope_spans[0].spans[1]: " + tt.first
			}
			if res != want {
				t.Errorf("CheckTraces = %+v\nwant          %+v", res, want)
			}
			consistency(t, signalTraces, src, tt.opts) // AppendValid drops what Check rejects
		})
	}
}

func TestCheckContainersRejectAll(t *testing.T) {
	good := []pb{span(16, 8, nil), span(16, 8, nil)}
	bad := span(1, 8, nil)
	tests := []struct {
		name     string
		src      pb
		rejected int
		first    string
	}{
		{"resource attribute", request(pb{}.Msg(1, strAttr("k", badUTF8)), nil, good, good), 4,
			"resource_spans[0].scope_spans[0].spans[0]: resource.attributes[0] is not valid UTF-8"},
		{"entity ref", request(pb{}.Msg(3, pb{}.Str(2, "t").Str(3, badUTF8)), nil, good), 2,
			"resource_spans[0].scope_spans[0].spans[0]: resource.entity_refs[0].id_keys is not valid UTF-8"},
		{"scope name", request(nil, pb{}.Str(1, badUTF8), good), 2,
			"resource_spans[0].scope_spans[0].spans[0]: scope.name is not valid UTF-8"},
		{"scope version with an invalid span first", request(nil, pb{}.Str(2, badUTF8), []pb{bad, span(16, 8, nil)}), 2,
			"resource_spans[0].scope_spans[0].spans[0]: scope.version is not valid UTF-8"},
		{"resource schema_url after scopes", append(pb{}, pb{}.Msg(1, pb{}.Msg(2, pb{}.Msg(2, good[0])).Str(3, badUTF8))...), 1,
			"resource_spans[0].scope_spans[0].spans[0]: schema_url is not valid UTF-8"},
		{"empty scope before", request(pb{}.Msg(1, strAttr(badUTF8, "v")), nil, nil, good), 2,
			"resource_spans[0].scope_spans[1].spans[0]: resource.attributes[0] is not valid UTF-8"},
		{"second resource", append(request(nil, nil, good), request(nil, nil, []pb{span(16, 8, nil), bad})...), 1,
			"resource_spans[1].scope_spans[0].spans[1]: trace_id is 1 bytes, want 16"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := CheckTraces(tt.src, utf8Opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Rejected != tt.rejected || res.FirstRejection != tt.first {
				t.Errorf("CheckTraces = %+v, want %d rejected, first %q", res, tt.rejected, tt.first)
			}
			if res, _ := CheckTraces(tt.src, nil); strings.Contains(tt.name, "resource") && res.Rejected != 0 && !strings.Contains(tt.name, "second") {
				t.Errorf("without ValidateUTF8: %+v, want nothing rejected", res)
			}
		})
	}
}

func TestCheckErrors(t *testing.T) {
	truncatedAttr := pb{}.Str(1, "k").Append(pb{0x12, 0x05, 0x0a}) // value claims 5 bytes, has 1
	tests := []struct {
		name string
		src  pb
		err  string
	}{
		{"truncated top level", pb{0x0a, 0x10, 0x01}, "cannot decode request: "},
		{"attribute", request(nil, nil, []pb{span(16, 8, nil), span(16, 8, nil), span(16, 8, pb{}.Msg(9, truncatedAttr))}),
			"cannot decode resource_spans[0].scope_spans[0].spans[2].attributes[2]: "},
		{"second resource", append(request(nil, nil, nil), request(nil, nil, nil, []pb{span(16, 8, pb{}.Msg(11, pb{0x08}))})...),
			"cannot decode resource_spans[1].scope_spans[1].spans[0].events[0]: "},
		{"scope", request(nil, pb{0x1a, 0x01}, []pb{}), "cannot decode resource_spans[0].scope_spans[0].scope: "},
		{"field number 0", pb{0x00, 0x01}, "cannot decode request: invalid field number"},
		{"field number 2^29", pb{}.Varint(1<<29, 1), "invalid field number"},
		{"unknown wire type 6", pb{0x0e}, "cannot decode request: "},
		{"unterminated group", pb{0x0b, 0x08, 0x01}, "cannot decode request: "},
		{"mismatched end group", pb{0x0b, 0x14}, "cannot decode request: end of group"},
		{"status", request(nil, nil, []pb{span(16, 8, pb{}.Msg(15, pb{0x18}))}),
			"cannot decode resource_spans[0].scope_spans[0].spans[0].status: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := CheckTraces(tt.src, nil)
			if err == nil || !strings.HasPrefix(err.Error(), tt.err) && !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("CheckTraces error = %v, want prefix %q", err, tt.err)
			}
			if _, err := AppendValidTraces(nil, tt.src, nil); err == nil {
				t.Errorf("AppendValidTraces accepted what CheckTraces refuses")
			}
		})
	}
}

func TestUnknownFieldsAndGroupsSkipped(t *testing.T) {
	group := pb{}.Tag(100, 3).Varint(1, 1).Tag(101, 3).Tag(101, 4).Tag(100, 4)
	sp := span(16, 8, group.Varint(99, 1).Str(98, "x").Fixed32(97, 1).Fixed64(96, 1))
	src := request(nil, nil, []pb{sp}).Append(group)
	res, err := CheckTraces(src, nil)
	if err != nil || res != (Result{Items: 1}) {
		t.Fatalf("CheckTraces = %+v, %v", res, err)
	}
}

// nest returns an attribute whose value is nested depth levels deep
// (depth 1: a plain string value).
func nest(depth int) pb {
	v := pb{}.Str(1, "leaf")
	for i := 1; i < depth; i++ {
		if i%2 == 0 {
			v = pb{}.Msg(5, pb{}.Msg(1, v))
		} else {
			v = pb{}.Msg(6, pb{}.Msg(1, pb{}.Str(1, "k").Msg(2, v)))
		}
	}
	return pb{}.Str(1, "deep").Msg(2, v)
}

func TestMaxAnyValueDepth(t *testing.T) {
	const def = DefaultMaxAnyValueDepth
	tests := []struct {
		depth int
		opts  *Options
		ok    bool
	}{
		{def, nil, true},
		{def + 1, nil, false},
		{def, &Options{}, true},
		{def + 1, &Options{MaxAnyValueDepth: -1}, false},
		{5, &Options{MaxAnyValueDepth: 5}, true},
		{6, &Options{MaxAnyValueDepth: 5}, false},
		{1, &Options{MaxAnyValueDepth: 1}, true},
		{2, &Options{MaxAnyValueDepth: 1}, false},
		{1000, &Options{MaxAnyValueDepth: 1000}, true},
		// Settings above the ceiling mean the ceiling.
		{maxAnyValueDepthCeiling, &Options{MaxAnyValueDepth: 1 << 40}, true},
		{maxAnyValueDepthCeiling + 1, &Options{MaxAnyValueDepth: 1 << 40}, false},
		// Far past the limit: refused with the same error, after
		// recursing only to the limit.
		{100_000, nil, false},
		{100_000, &Options{MaxAnyValueDepth: 1 << 40}, false},
	}
	for _, tt := range tests {
		src := request(nil, nil, []pb{span(16, 8, pb{}.Msg(9, deepAttr(tt.depth)))})
		_, err := CheckTraces(src, tt.opts)
		if (err == nil) != tt.ok {
			t.Errorf("depth %d, opts %+v: err = %v, want ok=%v", tt.depth, tt.opts, err, tt.ok)
			continue
		}
		if tt.ok {
			continue
		}
		limit := tt.opts.maxDepth()
		msg := err.Error()
		if !errors.Is(err, errDepth) || !strings.HasSuffix(msg, fmt.Sprintf("(%d)", limit)) {
			t.Errorf("depth %d: error %q does not name the limit %d", tt.depth, msg, limit)
		}
		if !strings.HasPrefix(msg, "cannot decode resource_spans[0].scope_spans[0].spans[0].attributes[2].value.") {
			t.Errorf("depth error lacks the position: %.200s", msg)
		}
		if len(msg) > 500 {
			t.Errorf("depth %d: error is %d bytes long, want the path cut short: %.200s", tt.depth, len(msg), msg)
		}
	}
}

// deepAttr returns nest(depth), built in linear time: nest copies the whole
// value at every level, quadratic for the deep cases.
func deepAttr(depth int) pb {
	if depth < 64 {
		return nest(depth)
	}
	// Build from the leaf outwards, backwards into a buffer, so that each
	// level is a prefix (tag and length) written once.
	leaf := pb{}.Str(1, "leaf")
	buf := make(pb, 0, len(leaf)+depth*24)
	buf = append(buf, reversed(leaf)...)
	prefix := func(num int, n int) { // appends tag+length of a LEN field, reversed
		buf = append(buf, reversed(pb{}.Tag(num, 2).Append(binary.AppendUvarint(nil, uint64(n))))...)
	}
	for i := 1; i < depth; i++ {
		if i%2 == 0 {
			prefix(1, len(buf)) // ArrayValue.values
			prefix(5, len(buf)) // AnyValue.array_value
		} else {
			prefix(2, len(buf)) // KeyValue.value
			buf = append(buf, reversed(pb{}.Str(1, "k"))...)
			prefix(1, len(buf)) // KeyValueList.values
			prefix(6, len(buf)) // AnyValue.kvlist_value
		}
	}
	prefix(2, len(buf)) // KeyValue.value
	buf = append(buf, reversed(pb{}.Str(1, "deep"))...)
	return reversed(buf)
}

func reversed(b pb) pb {
	r := make(pb, len(b))
	for i, c := range b {
		r[len(b)-1-i] = c
	}
	return r
}

func TestDeepAttrMatchesNest(t *testing.T) {
	for _, depth := range []int{64, 65, 100} {
		if got, want := deepAttr(depth), nest(depth); string(got) != string(want) {
			t.Errorf("deepAttr(%d) differs from nest(%d)", depth, depth)
		}
	}
}

func TestDepthErrorPathCut(t *testing.T) {
	// A depth error names the outermost maxPathElems positions; shallower
	// errors keep their whole path.
	src := request(nil, nil, []pb{span(16, 8, pb{}.Msg(9, nest(20)))})
	_, err := CheckTraces(src, &Options{MaxAnyValueDepth: 10})
	want := "cannot decode resource_spans[0].scope_spans[0].spans[0].attributes[2].value.kvlist_value.values[0].value.array_value.values[0]." +
		"kvlist_value.values[0].value.array_value.values[0].kvlist_value...: AnyValue nesting exceeds the depth limit (10)"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant  %s", err, want)
	}
	_, err = CheckTraces(src, &Options{MaxAnyValueDepth: 2})
	want = "cannot decode resource_spans[0].scope_spans[0].spans[0].attributes[2].value.kvlist_value.values[0].value.array_value.values[0]: " +
		"AnyValue nesting exceeds the depth limit (2)"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant  %s", err, want)
	}
}

func TestCheckLogsRules(t *testing.T) {
	tests := []struct {
		name  string
		rec   pb
		opts  *Options
		first string
	}{
		{"no ids", pb{}.Str(3, "INFO"), nil, ""},
		{"full ids", pb{}.Msg(9, ids(16, 0)).Msg(10, ids(8, 0)), nil, ""},
		// Only spans' own ids must not be all zeroes (trace.proto).
		{"all-zero ids are valid", pb{}.Msg(9, make(pb, 16)).Msg(10, make(pb, 8)), nil, ""},
		{"trace_id 15", pb{}.Msg(9, ids(15, 0)), nil, "trace_id is 15 bytes, want empty or 16"},
		{"span_id 9", pb{}.Msg(10, ids(9, 0)), nil, "span_id is 9 bytes, want empty or 8"},
		{"body", pb{}.Msg(5, pb{}.Msg(6, pb{}.Msg(1, strAttr("k", badUTF8)))), utf8Opts, "body is not valid UTF-8"},
		{"severity_text", pb{}.Str(3, badUTF8), utf8Opts, "severity_text is not valid UTF-8"},
		{"event_name", pb{}.Str(12, badUTF8), utf8Opts, "event_name is not valid UTF-8"},
		{"attribute", pb{}.Msg(6, strAttr("a", "b")).Msg(6, strAttr("k", badUTF8)), utf8Opts, "attributes[1] is not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := CheckLogs(request(nil, nil, []pb{pb{}.Str(3, "x"), tt.rec}), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			want := Result{Items: 2}
			if tt.first != "" {
				want.Rejected, want.FirstRejection = 1, "resource_logs[0].scope_logs[0].log_records[1]: "+tt.first
			}
			if res != want {
				t.Errorf("CheckLogs = %+v, want %+v", res, want)
			}
		})
	}
	deep := request(nil, nil, []pb{pb{}.Msg(5, pb{}.Msg(5, pb{}.Msg(1, pb{}.Str(1, "x"))))})
	if _, err := CheckLogs(deep, &Options{MaxAnyValueDepth: 1}); err == nil || !strings.Contains(err.Error(), "log_records[0].body.array_value.values[0]") {
		t.Errorf("deep body: err = %v", err)
	}
}

func numberPoint(extra pb) pb {
	return pb{}.Fixed64(3, 1).Fixed64(4, 0).Msg(7, strAttr("a", "b")).Append(extra)
}

func exemplar(traceLen, spanLen int) pb {
	return pb{}.Fixed64(2, 1).Fixed64(3, 0).Msg(5, ids(traceLen, 0)).Msg(4, ids(spanLen, 0))
}

func TestCheckMetricsRules(t *testing.T) {
	gauge := func(points ...pb) pb {
		var g pb
		for _, p := range points {
			g = g.Msg(1, p)
		}
		return g
	}
	ok := numberPoint(nil)
	hist := func(point pb) pb { return pb{}.Msg(9, gauge(point)) }
	packed := func(num, n int) pb { return pb{}.Msg(num, make(pb, 8*n)) }
	unpacked := func(num, n int) pb {
		var p pb
		for i := range n {
			p = p.Fixed64(num, uint64(i))
		}
		return p
	}
	tests := []struct {
		name     string
		metric   pb
		opts     *Options
		items    int
		rejected int
		first    string
	}{
		{"gauge", pb{}.Str(1, "g").Msg(5, gauge(ok, ok)), nil, 2, 0, ""},
		{"empty metric", pb{}.Str(1, "e"), nil, 0, 0, ""},
		{"exemplar ids empty or full", pb{}.Msg(7, gauge(numberPoint(pb{}.Msg(5, exemplar(0, 0)).Msg(5, exemplar(16, 8))))), nil, 1, 0, ""},
		{"exemplar ids all zeroes", pb{}.Msg(7, gauge(numberPoint(pb{}.Msg(5, pb{}.Msg(5, make(pb, 16)).Msg(4, make(pb, 8)))))), nil, 1, 0, ""},
		{"exemplar trace_id", pb{}.Msg(7, gauge(ok, numberPoint(pb{}.Msg(5, exemplar(16, 8)).Msg(5, exemplar(3, 0))))), nil, 2, 1,
			"sum.data_points[1]: exemplars[1].trace_id is 3 bytes, want empty or 16"},
		{"histogram exemplar span_id", pb{}.Msg(9, gauge(pb{}.Msg(8, exemplar(0, 7)))), nil, 1, 1,
			"histogram.data_points[0]: exemplars[0].span_id is 7 bytes, want empty or 8"},
		{"exponential histogram exemplar", pb{}.Msg(10, gauge(pb{}, pb{}.Msg(11, exemplar(1, 8)))), nil, 2, 1,
			"exponential_histogram.data_points[1]: exemplars[0].trace_id is 1 bytes, want empty or 16"},
		{"summary", pb{}.Msg(11, gauge(pb{}.Msg(6, pb{}.Fixed64(1, 0)), pb{})), nil, 2, 0, ""},
		{"metric name rejects all points", pb{}.Str(1, badUTF8).Msg(5, gauge(ok, ok, ok)), utf8Opts, 3, 3,
			"gauge.data_points[0]: metric.name is not valid UTF-8"},
		{"metadata", pb{}.Msg(12, strAttr(badUTF8, "")).Msg(11, gauge(pb{})), utf8Opts, 1, 1,
			"summary.data_points[0]: metric.metadata[0] is not valid UTF-8"},
		{"point attribute", pb{}.Msg(10, gauge(pb{}.Msg(1, strAttr("k", badUTF8)))), utf8Opts, 1, 1,
			"exponential_histogram.data_points[0]: attributes[0] is not valid UTF-8"},
		{"exemplar filtered attribute", pb{}.Msg(5, gauge(numberPoint(pb{}.Msg(5, pb{}.Msg(7, strAttr("k", badUTF8)))))), utf8Opts, 1, 1,
			"gauge.data_points[0]: exemplars[0].filtered_attributes[0] is not valid UTF-8"},
		{"oneof: last member wins", pb{}.Msg(5, gauge(ok, ok, ok)).Msg(9, gauge(pb{})), nil, 1, 0, ""},
		// metrics.proto, HistogramDataPoint.bucket_counts: one more
		// element than explicit_bounds, or none; packed runs (possibly
		// several) and unpacked elements all count.
		{"histogram packed", hist(packed(6, 3).Append(packed(7, 2))), nil, 1, 0, ""},
		{"histogram unpacked", hist(unpacked(6, 3).Append(unpacked(7, 2))), nil, 1, 0, ""},
		{"histogram mixed", hist(packed(6, 2).Append(unpacked(7, 1)).Append(unpacked(6, 1)).Append(packed(7, 1))), nil, 1, 0, ""},
		{"histogram packed runs", hist(packed(6, 1).Append(packed(7, 2)).Append(packed(6, 2))), nil, 1, 0, ""},
		{"histogram single bucket", hist(unpacked(6, 1)), nil, 1, 0, ""},
		{"histogram no counts with bounds", hist(packed(7, 4)), nil, 1, 0, ""},
		{"histogram empty packed counts", hist(packed(6, 0).Append(packed(7, 4))), nil, 1, 0, ""},
		{"histogram counts as varint are unknown", hist(pb{}.Varint(6, 5).Append(packed(7, 2))), nil, 1, 0, ""},
		{"histogram equal lengths", hist(packed(6, 3).Append(packed(7, 3))), nil, 1, 1,
			"histogram.data_points[0]: bucket_counts has 3 elements, want 4 (explicit_bounds + 1) or 0"},
		{"histogram counts without bounds", hist(unpacked(6, 2)), nil, 1, 1,
			"histogram.data_points[0]: bucket_counts has 2 elements, want 1 (explicit_bounds + 1) or 0"},
		{"histogram mixed mismatch", hist(packed(6, 2).Append(unpacked(6, 2)).Append(unpacked(7, 1)).Append(packed(7, 1))), nil, 1, 1,
			"histogram.data_points[0]: bucket_counts has 4 elements, want 3 (explicit_bounds + 1) or 0"},
		{"histogram second point", pb{}.Msg(9, gauge(packed(6, 2).Append(unpacked(7, 1)), packed(6, 2).Append(packed(7, 2)))), nil, 2, 1,
			"histogram.data_points[1]: bucket_counts has 2 elements, want 3 (explicit_bounds + 1) or 0"},
		{"histogram buckets before exemplar", hist(pb{}.Msg(8, exemplar(3, 8)).Append(packed(6, 1)).Append(packed(7, 1))), nil, 1, 1,
			"histogram.data_points[0]: bucket_counts has 1 elements, want 2 (explicit_bounds + 1) or 0"},
		{"histogram buckets before UTF-8", hist(pb{}.Msg(9, strAttr("k", badUTF8)).Append(packed(6, 5))), utf8Opts, 1, 1,
			"histogram.data_points[0]: bucket_counts has 5 elements, want 1 (explicit_bounds + 1) or 0"},
		{"exponential histogram has no such rule", pb{}.Msg(10, gauge(pb{}.Msg(8, pb{}.Msg(2, pb{1, 2, 3})))), nil, 1, 0, ""},
		{"oneof: same member merges", pb{}.Msg(5, gauge(ok)).Msg(5, gauge(numberPoint(pb{}.Msg(5, exemplar(2, 0))))), nil, 2, 1,
			"gauge.data_points[1]: exemplars[0].trace_id is 2 bytes, want empty or 16"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := request(nil, nil, []pb{pb{}.Str(1, "first").Msg(5, gauge(ok)), tt.metric})
			res, err := CheckMetrics(src, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			want := Result{Items: 1 + tt.items, Rejected: tt.rejected}
			if tt.first != "" {
				want.FirstRejection = "resource_metrics[0].scope_metrics[0].metrics[1]." + tt.first
			}
			if res != want {
				t.Errorf("CheckMetrics = %+v\nwant           %+v", res, want)
			}
			consistency(t, signalMetrics, src, tt.opts) // AppendValid drops what Check rejects
		})
	}
}

func TestCheckMetricsErrors(t *testing.T) {
	tests := []struct {
		name   string
		metric pb
		err    string
	}{
		{"packed bucket_counts", pb{}.Msg(9, pb{}.Msg(1, pb{}.Msg(6, make(pb, 9)))), "metrics[0].histogram.data_points[0]: packed field #6 is 9 bytes"},
		{"packed bounds", pb{}.Msg(9, pb{}.Msg(1, pb{}.Msg(7, make(pb, 4)))), "histogram.data_points[0]: packed field #7"},
		{"packed varints", pb{}.Msg(10, pb{}.Msg(1, pb{}.Msg(9, pb{}.Msg(2, pb{0x80})))), "exponential_histogram.data_points[0].negative: cannot read packed varint"},
		{"quantile", pb{}.Msg(11, pb{}.Msg(1, pb{}.Msg(6, pb{0x09, 0x00}))), "summary.data_points[0].quantile_values[0]: "},
		{"exemplar", pb{}.Msg(7, pb{}.Msg(1, pb{}.Msg(5, pb{0x2a}))), "sum.data_points[0].exemplars[0]: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := request(nil, nil, []pb{tt.metric})
			_, err := CheckMetrics(src, nil)
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("CheckMetrics error = %v, want %q", err, tt.err)
			}
			if _, err := AppendValidMetrics(nil, src, nil); err == nil {
				t.Errorf("AppendValidMetrics accepted what CheckMetrics refuses")
			}
		})
	}
}

func TestGoldenPayloadCounts(t *testing.T) {
	tests := []struct {
		file  string
		check func([]byte, *Options) (Result, error)
		want  Result
	}{
		{"traces_500x10.pb", CheckTraces, Result{Items: 500}},
		{"traces_all_fields.pb", CheckTraces, Result{Items: 12}},
		{"traces_empty.pb", CheckTraces, Result{}},
		{"traces_invalid_ids.pb", CheckTraces, Result{Items: 2, Rejected: 1, FirstRejection: "resource_spans[0].scope_spans[0].spans[0]: trace_id is 3 bytes, want 16"}},
		{"metrics_all_kinds.pb", CheckMetrics, Result{Items: 14}},
		{"metrics_no_points.pb", CheckMetrics, Result{}},
		{"logs_all_fields.pb", CheckLogs, Result{Items: 14}},
		{"logs_invalid_ids.pb", CheckLogs, Result{Items: 2, Rejected: 1, FirstRejection: "resource_logs[0].scope_logs[0].log_records[0]: trace_id is 3 bytes, want empty or 16"}},
	}
	for _, tt := range tests {
		res, err := tt.check(golden(t, tt.file), utf8Opts)
		if err != nil || res != tt.want {
			t.Errorf("%s: %+v, %v; want %+v", tt.file, res, err, tt.want)
		}
	}
}
