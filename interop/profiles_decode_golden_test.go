package interop

// Golden tests of otlpdecode's profiles validation (CheckProfiles,
// AppendValidProfiles) against the official generated types of OTLP v1.11
// profiles (go.opentelemetry.io/proto/otlp/profiles/v1development v0.4.0,
// generated from opentelemetry-proto v1.11.0): realistic requests built
// with them are accepted, each rule broken on a copy rejects exactly the
// profiles it should, and what AppendValidProfiles keeps is, for
// protobuf-go, the request without them. TestWriteProfileSeeds writes the
// same requests as otlpdecode's fuzz seeds and benchmark payload.

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	colprofilespb "go.opentelemetry.io/proto/otlp/collector/profiles/v1development"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	profilespb "go.opentelemetry.io/proto/otlp/profiles/v1development"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"

	"github.com/otlp-lite/otlp-lite/otlpdecode"
)

// profileSeedDir holds otlpdecode's profiles payloads: fuzz seeds, the
// zero-allocation test's input and the benchmarks' payload.
const profileSeedDir = "../otlpdecode/testdata/profiles"

// profileShape sizes a generated request.
type profileShape struct {
	resources, profilesPerScope, samplesPerProfile int
	functions, locations, stacks                   int
	minDepth, maxDepth                             int
}

// realisticShape is what a host-level profiler sends in one export: a few
// containers, a CPU and an off-CPU profile each, a few hundred samples in
// all, deep stacks over a dictionary shared by all of them.
var realisticShape = profileShape{
	resources: 3, profilesPerScope: 2, samplesPerProfile: 70,
	functions: 400, locations: 900, stacks: 220, minDepth: 8, maxDepth: 96,
}

// smallShape is a request with every message and field, small enough for
// the fuzzer to mutate usefully.
var smallShape = profileShape{
	resources: 2, profilesPerScope: 2, samplesPerProfile: 3,
	functions: 6, locations: 8, stacks: 4, minDepth: 1, maxDepth: 5,
}

// pgRequest builds a valid ExportProfilesServiceRequest of the given
// shape, deterministically (seed). Every field of v1.11's profiles.proto is
// set somewhere, both *_strindex fields of common.proto included.
func pgRequest(shape profileShape, seed uint64) *colprofilespb.ExportProfilesServiceRequest {
	rng := rand.New(rand.NewPCG(seed, 12))
	d := &profilespb.ProfilesDictionary{}
	strIdx := map[string]int32{}
	str := func(s string) int32 {
		if i, ok := strIdx[s]; ok {
			return i
		}
		i := int32(len(d.StringTable))
		d.StringTable = append(d.StringTable, s)
		strIdx[s] = i
		return i
	}
	str("") // string_table[0]

	// attribute_table: [0] zero; threads; a build id; a string value by
	// strindex; an int with a unit.
	d.AttributeTable = append(d.AttributeTable, &profilespb.KeyValueAndUnit{})
	threadAttrs := []int32{}
	for i := range 8 {
		threadAttrs = append(threadAttrs, int32(len(d.AttributeTable)))
		d.AttributeTable = append(d.AttributeTable, &profilespb.KeyValueAndUnit{
			KeyStrindex: str("thread.name"),
			Value:       &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "worker-" + string(rune('a'+i))}},
		})
	}
	buildID := int32(len(d.AttributeTable))
	d.AttributeTable = append(d.AttributeTable, &profilespb.KeyValueAndUnit{
		KeyStrindex: str("process.executable.build_id.htlhash"),
		Value:       &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValueStrindex{StringValueStrindex: str("600dcafe4a110c8f")}},
	})
	allocSize := int32(len(d.AttributeTable))
	d.AttributeTable = append(d.AttributeTable, &profilespb.KeyValueAndUnit{
		KeyStrindex:  str("allocation_size"),
		Value:        &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: 128}},
		UnitStrindex: str("By"),
	})
	frameType := int32(len(d.AttributeTable))
	d.AttributeTable = append(d.AttributeTable, &profilespb.KeyValueAndUnit{
		KeyStrindex: str("profile.frame.type"),
		Value:       &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "native"}},
	})

	// mapping_table
	d.MappingTable = append(d.MappingTable, &profilespb.Mapping{})
	libs := []string{"/usr/bin/server", "/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "[vdso]", "/usr/lib/jvm/libjvm.so"}
	for i, lib := range libs {
		start := uint64(0x400000 + i*0x1000000)
		m := &profilespb.Mapping{MemoryStart: start, MemoryLimit: start + 0xfff000, FileOffset: uint64(i) * 0x1000, FilenameStrindex: str(lib)}
		if i == 0 {
			m.AttributeIndices = []int32{buildID}
		}
		d.MappingTable = append(d.MappingTable, m)
	}

	// function_table
	d.FunctionTable = append(d.FunctionTable, &profilespb.Function{})
	for i := range shape.functions {
		f := &profilespb.Function{
			NameStrindex:     str("pkg" + strconv.Itoa(i%23) + ".(*Handler).Serve" + strconv.Itoa(i)),
			FilenameStrindex: str("src/pkg" + strconv.Itoa(i%23) + "/file" + strconv.Itoa(i%7) + ".go"),
			StartLine:        int64(10 + i),
		}
		if i%5 == 0 {
			f.SystemNameStrindex = str("_ZN3pkg7Handler5ServeE" + strconv.Itoa(i))
		}
		if i%17 == 0 {
			f.NameStrindex = 0 // only a system name or a file
		}
		d.FunctionTable = append(d.FunctionTable, f)
	}

	// location_table: one or two lines (inlining), most with a mapping.
	d.LocationTable = append(d.LocationTable, &profilespb.Location{})
	for i := range shape.locations {
		m := int32(1 + rng.IntN(len(libs)))
		loc := &profilespb.Location{
			MappingIndex: m,
			Address:      d.MappingTable[m].MemoryStart + uint64(rng.IntN(0xff0000)),
			Lines:        []*profilespb.Line{{FunctionIndex: int32(1 + rng.IntN(shape.functions)), Line: int64(1 + rng.IntN(3000)), Column: int64(rng.IntN(80))}},
		}
		if i%4 == 0 {
			loc.Lines = append(loc.Lines, &profilespb.Line{FunctionIndex: int32(1 + rng.IntN(shape.functions)), Line: int64(1 + rng.IntN(3000))})
		}
		if i%9 == 0 {
			loc.AttributeIndices = []int32{frameType}
		}
		if i%31 == 0 {
			loc.MappingIndex = 0 // unknown mapping
		}
		d.LocationTable = append(d.LocationTable, loc)
	}

	// stack_table: deep stacks, leaf first.
	d.StackTable = append(d.StackTable, &profilespb.Stack{})
	for range shape.stacks {
		depth := shape.minDepth + rng.IntN(shape.maxDepth-shape.minDepth+1)
		s := &profilespb.Stack{}
		for range depth {
			s.LocationIndices = append(s.LocationIndices, int32(1+rng.IntN(shape.locations)))
		}
		d.StackTable = append(d.StackTable, s)
	}

	// link_table: [0] with zero-filled ids, as profiles.proto recommends.
	d.LinkTable = append(d.LinkTable, &profilespb.Link{TraceId: make([]byte, 16), SpanId: make([]byte, 8)})
	for i := range 12 {
		d.LinkTable = append(d.LinkTable, &profilespb.Link{TraceId: gID(16, byte(i+1)), SpanId: gID(8, byte(i+100))})
	}

	cpu := &profilespb.ValueType{TypeStrindex: str("cpu"), UnitStrindex: str("nanoseconds")}
	offCPU := &profilespb.ValueType{TypeStrindex: str("off_cpu"), UnitStrindex: str("nanoseconds")}
	switches := &profilespb.ValueType{TypeStrindex: str("context_switch"), UnitStrindex: str("count")}
	const start = uint64(1_750_000_000_000_000_000)
	req := &colprofilespb.ExportProfilesServiceRequest{Dictionary: d}
	for r := range shape.resources {
		rp := &profilespb.ResourceProfiles{
			Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{
				gKV("service.name", gStr("checkout")),
				gKV("container.id", gStr("c0ffee"+strconv.Itoa(r))),
				{KeyStrindex: str("host.name"), Value: gStr("node-7")}, // a key by strindex
			}},
			SchemaUrl: "https://opentelemetry.io/schemas/1.38.0",
		}
		sp := &profilespb.ScopeProfiles{
			Scope:     &commonpb.InstrumentationScope{Name: "go.opentelemetry.io/ebpf-profiler", Version: "v0.0.202547"},
			SchemaUrl: "https://opentelemetry.io/schemas/1.38.0",
		}
		for p := range shape.profilesPerScope {
			prof := &profilespb.Profile{
				SampleType: cpu, PeriodType: cpu, Period: 50_000_000,
				TimeUnixNano: start + uint64(r)*5e9, DurationNano: 5e9,
				ProfileId:        gID(16, byte(10*r+p+1)),
				AttributeIndices: []int32{allocSize},
			}
			if p%2 == 1 {
				prof.SampleType, prof.PeriodType, prof.Period = offCPU, switches, 1
				prof.OriginalPayloadFormat, prof.OriginalPayload = "pprof", []byte{0x1f, 0x8b, 8, 0}
				prof.DroppedAttributesCount = 2
			}
			for s := range shape.samplesPerProfile {
				smp := &profilespb.Sample{
					StackIndex:       int32(1 + rng.IntN(shape.stacks)),
					AttributeIndices: []int32{threadAttrs[rng.IntN(len(threadAttrs))]},
				}
				if s%6 == 0 {
					smp.LinkIndex = int32(1 + rng.IntN(12))
				}
				n := 1 + rng.IntN(4)
				for k := range n {
					smp.TimestampsUnixNano = append(smp.TimestampsUnixNano, prof.TimeUnixNano+uint64(rng.IntN(5e9)))
					if s%3 != 0 || k > 0 { // some samples carry timestamps only
						smp.Values = append(smp.Values, int64(rng.IntN(50_000_000)))
					}
				}
				if s%3 == 0 {
					smp.Values = nil
				}
				if s%10 == 9 {
					smp.TimestampsUnixNano = nil // one aggregated value
					smp.Values = []int64{int64(rng.IntN(1e9))}
				}
				prof.Samples = append(prof.Samples, smp)
			}
			sp.Profiles = append(sp.Profiles, prof)
		}
		rp.ScopeProfiles = []*profilespb.ScopeProfiles{sp}
		req.ResourceProfiles = append(req.ResourceProfiles, rp)
	}
	return req
}

func countSamples(req *colprofilespb.ExportProfilesServiceRequest) (profiles, samples int) {
	for _, rp := range req.ResourceProfiles {
		for _, sp := range rp.ScopeProfiles {
			for _, p := range sp.Profiles {
				profiles++
				samples += len(p.Samples)
			}
		}
	}
	return profiles, samples
}

// pgInvalid is a small request in which some profiles break a rule each.
func pgInvalid() *colprofilespb.ExportProfilesServiceRequest {
	req := pgRequest(smallShape, 3)
	ps := req.ResourceProfiles[0].ScopeProfiles[0].Profiles
	ps[0].ProfileId = []byte{1, 2, 3}
	ps[1].Samples[0].StackIndex = 99
	req.ResourceProfiles[1].ScopeProfiles[0].Profiles[1].Samples[1].Values = []int64{1, 2, 3, 4, 5, 6}
	return req
}

func profileSeeds() map[string]proto.Message {
	return map[string]proto.Message{
		"profiles_realistic.pb": pgRequest(realisticShape, 1),
		"profiles_small.pb":     pgRequest(smallShape, 2),
		"profiles_invalid.pb":   pgInvalid(),
	}
}

// TestWriteProfileSeeds writes ../otlpdecode/testdata/profiles/*.pb with
// -update and otherwise checks that the committed files are what the
// builders produce.
func TestWriteProfileSeeds(t *testing.T) {
	for name, m := range profileSeeds() {
		want := marshal(t, m)
		path := filepath.Join(profileSeedDir, name)
		if *updateGolden {
			if err := os.MkdirAll(profileSeedDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -run TestWriteProfileSeeds -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale; run go test -run TestWriteProfileSeeds -update", path)
		}
	}
}

// TestProfilesDecodeGolden: valid requests from the generated types are
// accepted whole, with the profile and sample counts protobuf-go sees.
func TestProfilesDecodeGolden(t *testing.T) {
	for _, tt := range []struct {
		name string
		req  *colprofilespb.ExportProfilesServiceRequest
	}{
		{"realistic", pgRequest(realisticShape, 1)},
		{"small", pgRequest(smallShape, 2)},
		{"empty", &colprofilespb.ExportProfilesServiceRequest{}},
		{"profile without samples, no dictionary", &colprofilespb.ExportProfilesServiceRequest{ResourceProfiles: []*profilespb.ResourceProfiles{{
			ScopeProfiles: []*profilespb.ScopeProfiles{{Profiles: []*profilespb.Profile{{TimeUnixNano: 1}}}}}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := marshal(t, tt.req)
			profiles, samples := countSamples(tt.req)
			for _, opts := range []*otlpdecode.Options{nil, {ValidateUTF8: true}} {
				res, err := otlpdecode.CheckProfiles(src, opts)
				if err != nil {
					t.Fatal(err)
				}
				want := otlpdecode.Result{Items: profiles, Samples: samples}
				if res != want {
					t.Errorf("CheckProfiles = %+v, want %+v", res, want)
				}
			}
			// Nothing to remove: AppendValidProfiles keeps the request.
			out, err := otlpdecode.AppendValidProfiles(nil, src, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := &colprofilespb.ExportProfilesServiceRequest{}
			if err := proto.Unmarshal(out, got); err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(got, tt.req) {
				t.Error("AppendValidProfiles changed a valid request")
			}
		})
	}
}

// TestProfilesRejectGolden breaks one rule of profiles.proto per case on
// a copy of a generated request, and checks the rejected profiles, the
// first one's position, and that AppendValidProfiles keeps exactly the
// others (as protobuf-go reads them).
func TestProfilesRejectGolden(t *testing.T) {
	type mutation = func(req *colprofilespb.ExportProfilesServiceRequest)
	prof := func(req *colprofilespb.ExportProfilesServiceRequest, r, p int) *profilespb.Profile {
		return req.ResourceProfiles[r].ScopeProfiles[0].Profiles[p]
	}
	tests := []struct {
		name   string
		mutate mutation
		bad    [][2]int // rejected (resource, profile) pairs; nil: all
		first  string
	}{
		{"profile_id length", func(req *colprofilespb.ExportProfilesServiceRequest) { prof(req, 1, 0).ProfileId = gID(8, 1) },
			[][2]int{{1, 0}}, "resource_profiles[1].scope_profiles[0].profiles[0]: profile_id is 8 bytes, want empty or 16"},
		{"profile_id zero", func(req *colprofilespb.ExportProfilesServiceRequest) { prof(req, 0, 1).ProfileId = make([]byte, 16) },
			[][2]int{{0, 1}}, "resource_profiles[0].scope_profiles[0].profiles[1]: profile_id is all zeroes"},
		{"stack_index", func(req *colprofilespb.ExportProfilesServiceRequest) {
			prof(req, 2, 1).Samples[2].StackIndex = int32(len(req.Dictionary.StackTable))
		}, [][2]int{{2, 1}}, "resource_profiles[2].scope_profiles[0].profiles[1]: samples[2].stack_index is 221, out of range of stack_table (221 entries)"},
		{"negative link_index", func(req *colprofilespb.ExportProfilesServiceRequest) { prof(req, 0, 0).Samples[5].LinkIndex = -1 },
			[][2]int{{0, 0}}, "resource_profiles[0].scope_profiles[0].profiles[0]: samples[5].link_index is -1, out of range of link_table (13 entries)"},
		{"sample attribute", func(req *colprofilespb.ExportProfilesServiceRequest) {
			s := prof(req, 1, 1).Samples[0]
			s.AttributeIndices = append(s.AttributeIndices, 1<<30)
		}, [][2]int{{1, 1}}, "resource_profiles[1].scope_profiles[0].profiles[1]: samples[0].attribute_indices[1] is 1073741824, out of range of attribute_table (12 entries)"},
		{"values and timestamps", func(req *colprofilespb.ExportProfilesServiceRequest) {
			s := prof(req, 0, 0).Samples[1]
			s.Values = append(s.Values, 1)
		}, [][2]int{{0, 0}}, "resource_profiles[0].scope_profiles[0].profiles[0]: samples[1].values has"},
		{"empty sample", func(req *colprofilespb.ExportProfilesServiceRequest) {
			prof(req, 2, 0).Samples[3] = &profilespb.Sample{StackIndex: 1}
		}, [][2]int{{2, 0}}, "resource_profiles[2].scope_profiles[0].profiles[0]: samples[3].values and timestamps_unix_nano are both empty"},
		{"payload without format", func(req *colprofilespb.ExportProfilesServiceRequest) { prof(req, 1, 0).OriginalPayload = []byte("x") },
			[][2]int{{1, 0}}, "resource_profiles[1].scope_profiles[0].profiles[0]: original_payload_format is empty while original_payload is set"},
		{"sample_type", func(req *colprofilespb.ExportProfilesServiceRequest) {
			prof(req, 2, 1).SampleType = &profilespb.ValueType{TypeStrindex: int32(len(req.Dictionary.StringTable) + 5)}
		}, [][2]int{{2, 1}}, "resource_profiles[2].scope_profiles[0].profiles[1]: sample_type.type_strindex is"},
		{"resource key_strindex", func(req *colprofilespb.ExportProfilesServiceRequest) {
			req.ResourceProfiles[1].Resource.Attributes[2].KeyStrindex = -3
		}, [][2]int{{1, 0}, {1, 1}}, "resource_profiles[1].scope_profiles[0].profiles[0]: resource.attributes[2] has a key_strindex out of range"},
		{"dictionary location", func(req *colprofilespb.ExportProfilesServiceRequest) {
			req.Dictionary.LocationTable[40].Lines[0].FunctionIndex = int32(len(req.Dictionary.FunctionTable))
		}, nil, "resource_profiles[0].scope_profiles[0].profiles[0]: dictionary.location_table[40].lines[0].function_index is 401, out of range of function_table (401 entries)"},
		{"dictionary string_table[0]", func(req *colprofilespb.ExportProfilesServiceRequest) { req.Dictionary.StringTable[0] = "x" },
			nil, "resource_profiles[0].scope_profiles[0].profiles[0]: dictionary.string_table[0] is not the zero value"},
		{"dictionary stack", func(req *colprofilespb.ExportProfilesServiceRequest) {
			req.Dictionary.StackTable[7].LocationIndices[3] = -1
		}, nil, "resource_profiles[0].scope_profiles[0].profiles[0]: dictionary.stack_table[7].location_indices[3] is -1"},
		{"dictionary link", func(req *colprofilespb.ExportProfilesServiceRequest) { req.Dictionary.LinkTable[3].SpanId = gID(4, 1) },
			nil, "resource_profiles[0].scope_profiles[0].profiles[0]: dictionary.link_table[3].span_id is 4 bytes, want 8"},
		{"dictionary attribute value", func(req *colprofilespb.ExportProfilesServiceRequest) {
			req.Dictionary.AttributeTable[9].Value = &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValueStrindex{StringValueStrindex: 1 << 20}}
		}, nil, "resource_profiles[0].scope_profiles[0].profiles[0]: dictionary.attribute_table[9].value has a string_value_strindex out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := pgRequest(realisticShape, 1)
			tt.mutate(req)
			src := marshal(t, req)
			res, err := otlpdecode.CheckProfiles(src, nil)
			if err != nil {
				t.Fatal(err)
			}
			profiles, samples := countSamples(req)
			want := req
			wantRejected, wantRejectedSamples := profiles, samples
			if tt.bad != nil {
				want = proto.Clone(req).(*colprofilespb.ExportProfilesServiceRequest)
				wantRejected, wantRejectedSamples = 0, 0
				for i := len(tt.bad) - 1; i >= 0; i-- {
					r, p := tt.bad[i][0], tt.bad[i][1]
					sp := want.ResourceProfiles[r].ScopeProfiles[0]
					wantRejected++
					wantRejectedSamples += len(sp.Profiles[p].Samples)
					sp.Profiles = append(sp.Profiles[:p:p], sp.Profiles[p+1:]...)
				}
			} else {
				want = proto.Clone(req).(*colprofilespb.ExportProfilesServiceRequest)
				for _, rp := range want.ResourceProfiles {
					rp.ScopeProfiles[0].Profiles = nil
				}
			}
			if res.Items != profiles || res.Samples != samples || res.Rejected != wantRejected || res.RejectedSamples != wantRejectedSamples ||
				!strings.HasPrefix(res.FirstRejection, tt.first) {
				t.Fatalf("CheckProfiles = %+v\nwant %d/%d profiles, %d/%d samples rejected, first %q", res, wantRejected, profiles, wantRejectedSamples, samples, tt.first)
			}
			out, err := otlpdecode.AppendValidProfiles(nil, src, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := &colprofilespb.ExportProfilesServiceRequest{}
			if err := proto.Unmarshal(out, got); err != nil {
				t.Fatal(err)
			}
			if tt.name == "resource key_strindex" {
				// A resource whose own fields are invalid goes, with its
				// profiles, as in the other signals.
				want.ResourceProfiles = append(want.ResourceProfiles[:1:1], want.ResourceProfiles[2:]...)
			}
			if !proto.Equal(got, want) {
				t.Error("AppendValidProfiles did not keep exactly the valid profiles")
			}
		})
	}
}

// TestProfilesWireRules: hand-built wire forms protobuf-go accepts, and
// what it reads from them, agree with what CheckProfiles validates.
func TestProfilesWireRules(t *testing.T) {
	field := func(b []byte, num protowire.Number, msg []byte) []byte {
		b = protowire.AppendTag(b, num, protowire.BytesType)
		return protowire.AppendBytes(b, msg)
	}
	varint := func(b []byte, num protowire.Number, v uint64) []byte {
		return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), v)
	}
	// A dictionary split in two occurrences: protobuf-go concatenates
	// its tables, so index 2 of string_table exists.
	strs := func(ss ...string) []byte {
		var b []byte
		for _, s := range ss {
			b = field(b, 5, []byte(s))
		}
		return b
	}
	sample := varint(nil, 4, 7) // one value, unpacked
	profile := field(field(nil, 1, varint(nil, 1, 2)), 2, sample)
	rp := field(nil, 2, field(nil, 2, profile))
	split := field(field(field(nil, 2, strs("", "a")), 1, rp), 2, strs("b"))
	// An index whose varint has bits above the 32 protobuf-go keeps.
	wide := field(field(nil, 1, field(nil, 2, field(nil, 2, field(nil, 1, varint(nil, 1, 1<<32|2))))), 2, strs("", "a", "b"))
	for _, tt := range []struct {
		name string
		src  []byte
		typ  int32 // sample_type.type_strindex as protobuf-go reads it
	}{
		{"dictionary split in two", split, 2},
		{"int32 index from the low 32 bits", wide, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := &colprofilespb.ExportProfilesServiceRequest{}
			if err := proto.Unmarshal(tt.src, req); err != nil {
				t.Fatal(err)
			}
			p := req.ResourceProfiles[0].ScopeProfiles[0].Profiles[0]
			if got := p.GetSampleType().GetTypeStrindex(); got != tt.typ || int(got) >= len(req.Dictionary.StringTable) {
				t.Fatalf("protobuf-go reads type_strindex %d of %d strings", got, len(req.Dictionary.StringTable))
			}
			res, err := otlpdecode.CheckProfiles(tt.src, nil)
			if err != nil || res.Items != 1 || res.Rejected != 0 {
				t.Errorf("CheckProfiles = %+v, %v; want the profile accepted", res, err)
			}
		})
	}
}
