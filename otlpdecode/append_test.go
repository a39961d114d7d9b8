package otlpdecode

import (
	"bytes"
	"testing"

	"github.com/otlp-lite/otlp-lite/otlppb"
)

// items returns the payloads of every item (field 2 of the Scope*
// messages) of a request, in order.
func items(t *testing.T, src []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for _, rs := range messages(t, src, 1) {
		for _, ss := range messages(t, rs, 2) {
			out = append(out, messages(t, ss, 2)...)
		}
	}
	return out
}

// messages returns the payloads of the length-delimited field num of src.
func messages(t *testing.T, src []byte, num uint32) [][]byte {
	t.Helper()
	var out [][]byte
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			t.Fatal(err)
		}
		if data, ok := fc.MessageData(); ok && fc.FieldNum == num {
			out = append(out, data)
		}
	}
	return out
}

func TestAppendValidTraces(t *testing.T) {
	valid := func(i byte) pb { return span(16, 8, pb{}.Varint(6, uint64(i))) }
	unknown := pb{}.Varint(99, 7) // unknown fields are kept verbatim at every level
	tests := []struct {
		name string
		src  pb
		opts *Options
		kept []pb
	}{
		{"one bad", request(nil, nil, []pb{valid(1), span(3, 8, nil), valid(2)}), nil, []pb{valid(1), valid(2)}},
		{"all bad in a scope", request(pb{}.Msg(1, strAttr("k", "v")), pb{}.Str(1, "s"), []pb{span(0, 0, nil)}, []pb{valid(3)}), nil, []pb{valid(3)}},
		{"bad link", request(nil, nil, []pb{span(16, 8, pb{}.Msg(13, pb{})), valid(4)}), nil, []pb{valid(4)}},
		{"bad scope drops its spans", request(nil, pb{}.Str(1, badUTF8), []pb{valid(5)}).Append(request(nil, nil, []pb{valid(6)})), utf8Opts, []pb{valid(6)}},
		{"bad resource drops it", request(pb{}.Msg(1, strAttr(badUTF8, "")), nil, []pb{valid(7)}).Append(request(nil, nil, []pb{valid(8)})), utf8Opts, []pb{valid(8)}},
		{"unknown fields", pb{}.Msg(1, pb{}.Msg(2, pb{}.Msg(2, valid(9)).Append(unknown).Msg(2, span(1, 1, nil))).Append(unknown)).Append(unknown), nil, []pb{valid(9)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, err := CheckTraces(tt.src, tt.opts)
			if err != nil || before.Rejected == 0 {
				t.Fatalf("CheckTraces = %+v, %v: the case must reject something", before, err)
			}
			prefix := []byte("prefix")
			out, err := AppendValidTraces(append([]byte(nil), prefix...), tt.src, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(out, prefix) {
				t.Fatalf("dst was not appended to")
			}
			out = out[len(prefix):]
			after, err := CheckTraces(out, tt.opts)
			if err != nil {
				t.Fatalf("output does not decode: %v", err)
			}
			if after.Rejected != 0 || after.Items != before.Items-before.Rejected {
				t.Errorf("output Check = %+v, input %+v", after, before)
			}
			got := items(t, out)
			if len(got) != len(tt.kept) {
				t.Fatalf("kept %d spans, want %d", len(got), len(tt.kept))
			}
			for i := range got {
				if !bytes.Equal(got[i], tt.kept[i]) {
					t.Errorf("span %d changed:\n got %x\nwant %x", i, got[i], tt.kept[i])
				}
			}
			if tt.name == "unknown fields" && bytes.Count(out, unknown) != 3 {
				t.Errorf("unknown fields not kept: %x", out)
			}
		})
	}
}

func TestAppendValidLogsAndMetrics(t *testing.T) {
	okRec := pb{}.Str(3, "ok")
	logs := request(nil, nil, []pb{okRec, pb{}.Msg(9, ids(3, 0)), okRec})
	out, err := AppendValidLogs(nil, logs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := items(t, out); len(got) != 2 || !bytes.Equal(got[0], okRec) || !bytes.Equal(got[1], okRec) {
		t.Errorf("AppendValidLogs kept %x", got)
	}

	okPoint := numberPoint(nil)
	badPoint := numberPoint(pb{}.Msg(5, exemplar(5, 0)))
	metric := func(kind int, extra pb, points ...pb) pb {
		var data pb
		for _, p := range points {
			data = data.Msg(1, p)
		}
		return pb{}.Str(1, "m").Msg(kind, data.Append(extra))
	}
	src := request(nil, nil, []pb{
		metric(5, nil, okPoint, badPoint, okPoint),
		metric(7, pb{}.Varint(2, 2).Varint(3, 1), badPoint),
		metric(9, nil, pb{}.Msg(8, exemplar(1, 0)), pb{}.Fixed64(4, 3)),
		metric(10, nil, pb{}.Msg(11, exemplar(0, 1))),
		metric(11, nil, pb{}.Fixed64(4, 1)),
		pb{}.Str(1, badUTF8).Msg(5, pb{}.Msg(1, okPoint)),
	})
	before, err := CheckMetrics(src, utf8Opts)
	if err != nil || before != (Result{Items: 9, Rejected: 5, FirstRejection: "resource_metrics[0].scope_metrics[0].metrics[0].gauge.data_points[1]: exemplars[0].trace_id is 5 bytes, want empty or 16"}) {
		t.Fatalf("CheckMetrics = %+v, %v", before, err)
	}
	out, err = AppendValidMetrics(nil, src, utf8Opts)
	if err != nil {
		t.Fatal(err)
	}
	after, err := CheckMetrics(out, utf8Opts)
	if err != nil || after != (Result{Items: 4}) {
		t.Fatalf("CheckMetrics(output) = %+v, %v", after, err)
	}
	want := []pb{
		metric(5, nil, okPoint, okPoint),
		metric(7, pb{}.Varint(2, 2).Varint(3, 1)),
		metric(9, nil, pb{}.Fixed64(4, 3)),
		metric(10, nil),
		metric(11, nil, pb{}.Fixed64(4, 1)),
	}
	got := items(t, out)
	if len(got) != len(want) {
		t.Fatalf("kept %d metrics, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("metric %d:\n got %x\nwant %x", i, got[i], want[i])
		}
	}
}

// TestAppendValidGolden removes nothing from valid golden payloads: the
// output must be byte-identical to the input.
func TestAppendValidGolden(t *testing.T) {
	for _, tt := range []struct {
		file string
		fn   func(dst, src []byte, opts *Options) ([]byte, error)
	}{
		{"traces_all_fields.pb", AppendValidTraces},
		{"metrics_all_kinds.pb", AppendValidMetrics},
		{"logs_all_fields.pb", AppendValidLogs},
	} {
		src := golden(t, tt.file)
		out, err := tt.fn(nil, src, utf8Opts)
		if err != nil || !bytes.Equal(out, src) {
			t.Errorf("%s: output differs from a valid input (err %v)", tt.file, err)
		}
	}
}
