package interop

// The profiles messages (OTLP v1.11, v1development) in the golden set of
// otlpjson_golden_test.go, and the Collector's JSON form of profile_id.

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	colprofilespb "go.opentelemetry.io/proto/otlp/collector/profiles/v1development"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	profilespb "go.opentelemetry.io/proto/otlp/profiles/v1development"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	"google.golang.org/protobuf/proto"

	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/otlp-lite/otlp-lite/otlpjson"
)

// ojProfilesCases are the profiles entries of ojCases.
func ojProfilesCases() []ojCase {
	full := ojFullProfiles()
	cases := []ojCase{
		{"profiles full", otlpjson.ProfilesData, full},
		{"profiles empty", otlpjson.ProfilesData, &profilespb.ProfilesData{}},
		{"profiles request", otlpjson.ExportProfilesServiceRequest, &colprofilespb.ExportProfilesServiceRequest{
			ResourceProfiles: full.ResourceProfiles, Dictionary: full.Dictionary}},
		{"profiles response", otlpjson.ExportProfilesServiceResponse, &colprofilespb.ExportProfilesServiceResponse{
			PartialSuccess: &colprofilespb.ExportProfilesPartialSuccess{RejectedProfiles: 3, ErrorMessage: "profiles[1]: stack_index is 9"}}},
		{"profiles response empty", otlpjson.ExportProfilesServiceResponse, &colprofilespb.ExportProfilesServiceResponse{
			PartialSuccess: &colprofilespb.ExportProfilesPartialSuccess{}}},
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 30 {
		cases = append(cases, ojCase{"profiles random", otlpjson.ProfilesData, ojRandProfiles(rng)})
	}
	return cases
}

// ojFullProfiles sets every field of every profiles message, the alpha
// *_strindex fields of common.proto included.
func ojFullProfiles() *profilespb.ProfilesData {
	attrs := ojEveryValue()
	return &profilespb.ProfilesData{
		ResourceProfiles: []*profilespb.ResourceProfiles{{
			Resource: ojResource(),
			ScopeProfiles: []*profilespb.ScopeProfiles{{
				Scope: ojScope(),
				Profiles: []*profilespb.Profile{{
					SampleType: &profilespb.ValueType{TypeStrindex: 1, UnitStrindex: 2},
					Samples: []*profilespb.Sample{
						{StackIndex: 1, AttributeIndices: []int32{1, 2}, LinkIndex: 1, Values: []int64{math.MaxInt64, -1, 0}, TimestampsUnixNano: []uint64{1, math.MaxUint64, 0}},
						{Values: []int64{7}},
						{TimestampsUnixNano: []uint64{1700000000000000000}},
						{},
					},
					TimeUnixNano: 1700000000000000000, DurationNano: math.MaxUint64,
					PeriodType: &profilespb.ValueType{TypeStrindex: 3, UnitStrindex: 4}, Period: math.MinInt64,
					ProfileId:              []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
					DroppedAttributesCount: 5, OriginalPayloadFormat: "pprofext", OriginalPayload: []byte{0x1f, 0x8b, 0, 0xff},
					AttributeIndices: []int32{2, 1},
				}, {}},
				SchemaUrl: "https://opentelemetry.io/schemas/1.30.0",
			}, {}},
			SchemaUrl: "s",
		}, {}},
		Dictionary: &profilespb.ProfilesDictionary{
			MappingTable: []*profilespb.Mapping{{}, {MemoryStart: 0x400000, MemoryLimit: math.MaxUint64, FileOffset: 4096, FilenameStrindex: 5, AttributeIndices: []int32{1}}},
			LocationTable: []*profilespb.Location{{}, {MappingIndex: 1, Address: 0x401234, Lines: []*profilespb.Line{
				{FunctionIndex: 1, Line: 42, Column: -1}, {}}, AttributeIndices: []int32{2}}},
			FunctionTable: []*profilespb.Function{{}, {NameStrindex: 6, SystemNameStrindex: 7, FilenameStrindex: 5, StartLine: math.MinInt64}},
			LinkTable:     []*profilespb.Link{{}, {TraceId: ojTraceID, SpanId: ojSpanID}},
			StringTable:   []string{"", "cpu", "nanoseconds", "wall", "ms", "/usr/bin/app", "main", "_main", "thread.name", "héllo \"x\"\n"},
			AttributeTable: []*profilespb.KeyValueAndUnit{{}, {KeyStrindex: 8, Value: ojStr("worker-1"), UnitStrindex: 0},
				{KeyStrindex: 9, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValueStrindex{StringValueStrindex: 6}}, UnitStrindex: 4},
				{KeyStrindex: 1, Value: attrs[len(attrs)-6].Value}},
			StackTable: []*profilespb.Stack{{}, {LocationIndices: []int32{1, 1, 0}}},
		},
	}
}

func ojRandProfiles(r *rand.Rand) *profilespb.ProfilesData {
	i32s := func(n int) []int32 {
		var v []int32
		for range r.IntN(n) {
			v = append(v, int32(r.Uint32()))
		}
		return v
	}
	var profiles []*profilespb.Profile
	for range r.IntN(3) {
		p := &profilespb.Profile{TimeUnixNano: ojRandU64(r), DurationNano: ojRandU64(r), Period: int64(ojRandU64(r)),
			ProfileId: ojRandBytes(r, 16), DroppedAttributesCount: uint32(ojRandU64(r)), OriginalPayloadFormat: ojRandStr(r),
			OriginalPayload: ojRandBytes(r, r.IntN(20)), AttributeIndices: i32s(4)}
		if r.IntN(2) == 0 {
			p.SampleType = &profilespb.ValueType{TypeStrindex: int32(r.Uint32()), UnitStrindex: int32(r.IntN(3))}
		}
		if r.IntN(2) == 0 {
			p.PeriodType = &profilespb.ValueType{}
		}
		for range r.IntN(4) {
			s := &profilespb.Sample{StackIndex: int32(r.Uint32()), AttributeIndices: i32s(3), LinkIndex: int32(r.IntN(3))}
			for range r.IntN(4) {
				s.Values = append(s.Values, int64(ojRandU64(r)))
				s.TimestampsUnixNano = append(s.TimestampsUnixNano, ojRandU64(r))
			}
			p.Samples = append(p.Samples, s)
		}
		profiles = append(profiles, p)
	}
	d := &profilespb.ProfilesDictionary{}
	for range r.IntN(3) {
		d.MappingTable = append(d.MappingTable, &profilespb.Mapping{MemoryStart: ojRandU64(r), MemoryLimit: ojRandU64(r), FileOffset: ojRandU64(r), FilenameStrindex: int32(r.Uint32()), AttributeIndices: i32s(3)})
		d.LocationTable = append(d.LocationTable, &profilespb.Location{MappingIndex: int32(r.Uint32()), Address: ojRandU64(r),
			Lines: []*profilespb.Line{{FunctionIndex: int32(r.Uint32()), Line: int64(ojRandU64(r)), Column: int64(ojRandU64(r))}}, AttributeIndices: i32s(2)})
		d.FunctionTable = append(d.FunctionTable, &profilespb.Function{NameStrindex: int32(r.Uint32()), SystemNameStrindex: int32(r.Uint32()), FilenameStrindex: int32(r.Uint32()), StartLine: int64(ojRandU64(r))})
		d.LinkTable = append(d.LinkTable, &profilespb.Link{TraceId: ojRandBytes(r, 16), SpanId: ojRandBytes(r, 8)})
		d.StringTable = append(d.StringTable, ojRandStr(r))
		d.AttributeTable = append(d.AttributeTable, &profilespb.KeyValueAndUnit{KeyStrindex: int32(r.Uint32()), Value: ojRandAny(r, 0), UnitStrindex: int32(r.Uint32())})
		d.StackTable = append(d.StackTable, &profilespb.Stack{LocationIndices: i32s(5)})
	}
	if r.IntN(4) == 0 {
		d = nil
	}
	return &profilespb.ProfilesData{
		ResourceProfiles: []*profilespb.ResourceProfiles{{Resource: ojRandResource(r), SchemaUrl: ojRandStr(r),
			ScopeProfiles: []*profilespb.ScopeProfiles{{Scope: ojRandScope(r), Profiles: profiles, SchemaUrl: ojRandStr(r)}}}},
		Dictionary: d,
	}
}

// TestOTLPJSONProfileIDFromCollector: the Collector's pdata writes
// profile_id as hex (its ProfileID.MarshalJSON), where the spec's hex
// exception names only trace and span ids and protojson writes base64.
// otlpjson reads both (and writes base64): the JSON that pdata writes for
// the full profile decodes to the same message.
func TestOTLPJSONProfileIDFromCollector(t *testing.T) {
	want := ojFullProfiles()
	// pdata refuses a string_value_strindex out of range (ojEveryValue
	// has one): a plain resource.
	want.ResourceProfiles[0].Resource = &resourcepb.Resource{Attributes: []*commonpb.KeyValue{ojKV("service.name", ojStr("checkout"))}}
	pb, err := proto.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	pd, err := (&pprofile.ProtoUnmarshaler{}).UnmarshalProfiles(pb)
	if err != nil {
		t.Fatalf("pdata cannot read the profiles: %v", err)
	}
	js, err := (&pprofile.JSONMarshaler{}).MarshalProfiles(pd)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(js, []byte(`"profileId":"0102030405060708090a0b0c0d0e0f10"`)) {
		t.Fatalf("pdata no longer writes profileId as hex: %s", js)
	}
	got, err := otlpjson.Unmarshal(nil, otlpjson.ProfilesData, js)
	if err != nil {
		t.Fatalf("otlpjson cannot read pdata's JSON: %v\n%s", err, js)
	}
	// pdata round-trips through its own model; compare with what it
	// writes as protobuf, which must be what otlpjson decoded.
	wantPB, err := (&pprofile.ProtoMarshaler{}).MarshalProfiles(pd)
	if err != nil {
		t.Fatal(err)
	}
	gotMsg, wantMsg := &profilespb.ProfilesData{}, &profilespb.ProfilesData{}
	if err := proto.Unmarshal(got, gotMsg); err != nil {
		t.Fatal(err)
	}
	if err := proto.Unmarshal(wantPB, wantMsg); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(gotMsg, wantMsg) {
		t.Fatalf("otlpjson's reading of pdata's JSON differs from pdata's protobuf:\ngot:  %v\nwant: %v", gotMsg, wantMsg)
	}
	if !bytes.Equal(gotMsg.ResourceProfiles[0].ScopeProfiles[0].Profiles[0].ProfileId, want.ResourceProfiles[0].ScopeProfiles[0].Profiles[0].ProfileId) {
		t.Fatal("profile id lost")
	}
}
