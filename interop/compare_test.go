package interop

import (
	"fmt"
	"sort"
	"strings"

	"github.com/google/go-cmp/cmp"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
)

// closestDiff renders the difference between want and the unused stored
// message it differs least from, so a failure shows which field changed
// rather than two opaque blobs.
func closestDiff[M proto.Message](want M, stored []M, used []bool) string {
	best := ""
	for j, r := range stored {
		if used[j] {
			continue
		}
		d := cmp.Diff(want, r, protocmp.Transform())
		if best == "" || len(d) < len(best) {
			best = d
		}
	}
	if best == "" {
		return "(no unmatched stored record left)"
	}
	return "diff (-sent +stored):\n" + best
}

// diffProto returns "" when a and b are equal protobuf messages, else a
// readable diff.
func diffProto(a, b proto.Message) string {
	// proto.Equal is orders of magnitude faster than cmp on the large
	// payloads; cmp runs only to explain a difference.
	if proto.Equal(a, b) {
		return ""
	}
	return cmp.Diff(a, b, protocmp.Transform())
}

// attrMap indexes OTLP attributes by key. A repeated key (forbidden by the
// spec: "attribute keys MUST be unique", common/README.md#attribute) panics
// so that the test notices.
func attrMap(kvs []*commonpb.KeyValue) map[string]*commonpb.AnyValue {
	m := make(map[string]*commonpb.AnyValue, len(kvs))
	for _, kv := range kvs {
		if _, dup := m[kv.GetKey()]; dup {
			panic(fmt.Sprintf("duplicate attribute key %q", kv.GetKey()))
		}
		m[kv.GetKey()] = kv.GetValue()
	}
	return m
}

// attrString returns the string value of attribute key, or "".
func attrString(kvs []*commonpb.KeyValue, key string) string {
	for _, kv := range kvs {
		if kv.GetKey() == key {
			return kv.GetValue().GetStringValue()
		}
	}
	return ""
}

// diffAttrs compares OTLP attributes as a set keyed by key (the order of
// attributes carries no meaning) and returns a description of every
// difference, or "".
func diffAttrs(want, got []*commonpb.KeyValue) string {
	wm, gm := attrMap(want), attrMap(got)
	var diffs []string
	for k, w := range wm {
		g, ok := gm[k]
		if !ok {
			diffs = append(diffs, fmt.Sprintf("attribute %q missing (want %v)", k, w))
			continue
		}
		if d := diffProto(w, g); d != "" {
			diffs = append(diffs, fmt.Sprintf("attribute %q differs (-want +got):\n%s", k, d))
		}
	}
	for k, g := range gm {
		if _, ok := wm[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("unexpected attribute %q = %v", k, g))
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, "\n")
}

// OTLP AnyValue constructors for the expected values in tests.

func strV(s string) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
}

func boolV(b bool) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: b}}
}

func intV(i int64) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: i}}
}

func dblV(f float64) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: f}}
}

func bytesV(b []byte) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: b}}
}

func arrV(vs ...*commonpb.AnyValue) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: vs}}}
}

func kvlistV(kvs ...*commonpb.KeyValue) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: kvs}}}
}

func kv(k string, v *commonpb.AnyValue) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: v}
}
