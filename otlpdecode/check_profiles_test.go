package otlpdecode

import (
	"strings"
	"testing"
)

// The profiles tests build requests around one small, valid dictionary:
// every table with its zero element 0 and one or two real entries.

// packed is a packed run of varints.
func packed(vs ...int64) pb {
	var b pb
	for _, v := range vs {
		b = appendVarint(b, uint64(v))
	}
	return b
}

func appendVarint(b pb, v uint64) pb {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// The string table of testDict.
var testStrings = []string{"", "main.go", "main", "cpu", "nanoseconds", "thread", "libc.so"}

// dictWith returns testDict with extra fields (more entries) appended.
func dictWith(extra pb) pb {
	d := pb{}.
		Msg(1, pb{}).                                                                    // mapping_table[0]
		Msg(1, pb{}.Varint(1, 0x1000).Varint(2, 0x2000).Varint(4, 6).Msg(5, packed(1))). // mapping_table[1]
		Msg(2, pb{}).                                                                    // location_table[0]
		Msg(2, pb{}.Varint(1, 1).Varint(2, 0x1234).Msg(3, pb{}.Varint(1, 1).Varint(2, 10).Varint(3, 2))).
		Msg(2, pb{}.Varint(2, 0x1240).Msg(3, pb{}.Varint(1, 2)).Msg(3, pb{}.Varint(1, 1).Varint(2, 3))).
		Msg(3, pb{}).                                          // function_table[0]
		Msg(3, pb{}.Varint(1, 2).Varint(3, 1).Varint(4, 7)).   // main in main.go
		Msg(3, pb{}.Varint(2, 2)).                             // system name only
		Msg(4, pb{}.Msg(1, make(pb, 16)).Msg(2, make(pb, 8))). // link_table[0], zero ids
		Msg(4, pb{}.Msg(1, ids(16, 1)).Msg(2, ids(8, 1)))
	for _, s := range testStrings {
		d = d.Str(5, s)
	}
	d = d.Msg(6, pb{}). // attribute_table[0]
				Msg(6, pb{}.Varint(1, 5).Msg(2, pb{}.Str(1, "worker")).Varint(3, 0)).
				Msg(6, pb{}.Varint(1, 5).Msg(2, pb{}.Varint(8, 2))). // string_value_strindex
				Msg(7, pb{}).                                        // stack_table[0]
				Msg(7, pb{}.Msg(1, packed(1, 2))).
				Msg(7, pb{}.Varint(1, 2).Varint(1, 1)) // unpacked
	return d.Append(extra)
}

var testDict = dictWith(nil)

// sample returns a valid Sample, then extra fields.
func sample(extra pb) pb {
	return pb{}.Varint(1, 1).Msg(2, packed(1, 2)).Varint(3, 1).Msg(4, packed(10, 20)).
		Msg(5, pb{}.Append(fixed64s(100, 200))).Append(extra)
}

func fixed64s(vs ...uint64) pb {
	var b pb
	for _, v := range vs {
		b = append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56))
	}
	return b
}

// profile returns a valid Profile with two samples, then extra fields.
func profile(extra pb) pb {
	return pb{}.Msg(1, pb{}.Varint(1, 3).Varint(2, 4)).Msg(2, sample(nil)).Msg(2, sample(nil)).
		Fixed64(3, 1_700_000_000_000_000_000).Varint(4, 1e9).Msg(5, pb{}.Varint(1, 3).Varint(2, 4)).Varint(6, 10_000_000).
		Msg(7, ids(16, 1)).Msg(11, packed(1)).Append(extra)
}

// profilesRequest is an ExportProfilesServiceRequest: one resource and
// scope holding profiles, followed by dict (if not nil).
func profilesRequest(dict pb, profiles ...pb) pb {
	req := request(pb{}.Msg(1, strAttr("service.name", "svc")), pb{}.Str(1, "profiler"), profiles)
	if dict != nil {
		req = req.Msg(2, dict)
	}
	return req
}

func TestCheckProfilesWalk(t *testing.T) {
	two := []pb{profile(nil), profile(nil)}
	tests := []struct {
		name     string
		src      pb
		items    int
		rejected int
		first    string
	}{
		{"empty", nil, 0, 0, ""},
		{"valid", profilesRequest(testDict, two...), 2, 0, ""},
		{"dictionary first", pb{}.Msg(2, testDict).Append(profilesRequest(nil, two...)), 2, 0, ""},
		{"two resources, two scopes", profilesRequest(testDict, two...).Append(request(nil, nil, two, []pb{profile(nil)})), 5, 0, ""},
		{"one bad of three", profilesRequest(testDict, profile(nil), profile(pb{}.Msg(7, ids(3, 1))), profile(nil)), 3, 1,
			"resource_profiles[0].scope_profiles[0].profiles[1]: profile_id is 3 bytes, want empty or 16"},
		{"bad in the second resource", profilesRequest(testDict, two...).Append(request(nil, nil, []pb{profile(nil)}, two[:1], []pb{profile(pb{}.Msg(7, make(pb, 16)))})), 5, 1,
			"resource_profiles[1].scope_profiles[2].profiles[0]: profile_id is all zeroes"},
		{"unknown fields", profilesRequest(testDict, profile(pb{}.Varint(99, 1))).Varint(3, 1).Str(77, "x"), 1, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := CheckProfiles(tt.src, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Items != tt.items || res.Rejected != tt.rejected || res.FirstRejection != tt.first {
				t.Errorf("CheckProfiles = %+v, want %d items, %d rejected, first %q", res, tt.items, tt.rejected, tt.first)
			}
			// Every profile() holds two samples.
			if res.Samples != 2*tt.items || res.RejectedSamples != 2*tt.rejected {
				t.Errorf("CheckProfiles = %+v, want %d samples, %d rejected", res, 2*tt.items, 2*tt.rejected)
			}
			consistency(t, signalProfiles, tt.src, nil)
		})
	}
}

// TestCheckProfilesRules: one rule of profiles.proto per case, on the
// single profile of a request.
func TestCheckProfilesRules(t *testing.T) {
	tests := []struct {
		name    string
		profile pb
		opts    *Options
		first   string // expected FirstRejection after the position, "" when valid
	}{
		{"valid", profile(nil), nil, ""},
		{"no profile_id", pb{}.Msg(2, sample(nil)), nil, ""},
		{"empty profile", pb{}, nil, ""},
		{"profile_id 15", profile(pb{}.Msg(7, ids(15, 1))), nil, "profile_id is 15 bytes, want empty or 16"},
		{"profile_id zero", profile(pb{}.Msg(7, make(pb, 16))), nil, "profile_id is all zeroes"},
		{"last profile_id wins", profile(pb{}.Msg(7, make(pb, 16)).Msg(7, ids(16, 9))), nil, ""},
		{"sample_type out of range", profile(pb{}.Msg(1, pb{}.Varint(2, 7))), nil, "sample_type.unit_strindex is 7, out of range of string_table (7 entries)"},
		{"period_type negative", profile(pb{}.Msg(5, pb{}.Varint(1, 0xffffffffffffffff))), nil, "period_type.type_strindex is -1, out of range of string_table (7 entries)"},
		{"attribute index", profile(pb{}.Msg(11, packed(2, 3))), nil, "attribute_indices[2] is 3, out of range of attribute_table (3 entries)"},
		{"attribute index unpacked", profile(pb{}.Varint(11, 9)), nil, "attribute_indices[1] is 9, out of range of attribute_table (3 entries)"},
		{"int32 index from the low 32 bits", profile(pb{}.Varint(11, 1<<32|2)), nil, ""},
		{"payload without format", profile(pb{}.Str(10, "raw")), nil,
			"original_payload_format is empty while original_payload is set (profiles.proto: they MUST be set together or both left unset)"},
		{"format without payload", profile(pb{}.Str(9, "pprof")), nil,
			"original_payload is empty while original_payload_format is set (profiles.proto: they MUST be set together or both left unset)"},
		{"format and payload", profile(pb{}.Str(9, "pprof").Str(10, "raw")), nil, ""},
		{"format not UTF-8", profile(pb{}.Str(9, badUTF8).Str(10, "raw")), utf8Opts, "original_payload_format is not valid UTF-8"},
		{"stack_index", profile(pb{}.Msg(2, sample(pb{}.Varint(1, 3)))), nil, "samples[2].stack_index is 3, out of range of stack_table (3 entries)"},
		{"last stack_index wins", profile(pb{}.Msg(2, sample(pb{}.Varint(1, 3).Varint(1, 2)))), nil, ""},
		{"link_index", profile(pb{}.Msg(2, sample(pb{}.Varint(3, 2)))), nil, "samples[2].link_index is 2, out of range of link_table (2 entries)"},
		{"sample attribute", profile(pb{}.Msg(2, sample(pb{}.Msg(2, packed(0, 1, -5))))), nil,
			"samples[2].attribute_indices[4] is -5, out of range of attribute_table (3 entries)"},
		{"huge sample attribute", profile(pb{}.Msg(2, sample(pb{}.Varint(2, 1<<31)))), nil,
			"samples[2].attribute_indices[2] is -2147483648, out of range of attribute_table (3 entries)"},
		{"empty sample", profile(pb{}.Msg(2, pb{}.Varint(1, 1))), nil,
			"samples[2].values and timestamps_unix_nano are both empty (profiles.proto: a Sample MUST have at least one entry in either)"},
		{"values only", profile(pb{}.Msg(2, pb{}.Msg(4, packed(-3)))), nil, ""},
		{"timestamps only, unpacked", profile(pb{}.Msg(2, pb{}.Fixed64(5, 1).Fixed64(5, 2))), nil, ""},
		{"values and timestamps differ", profile(pb{}.Msg(2, sample(pb{}.Varint(4, 30)))), nil,
			"samples[2].values has 3 elements and timestamps_unix_nano 2, want as many or one of them empty"},
		{"huge values", profile(pb{}.Msg(2, pb{}.Msg(4, packed(-1<<63, 1<<62)))), nil, ""},
		{"first bad sample reported", profile(pb{}.Msg(2, pb{}).Msg(2, sample(pb{}.Varint(1, 9)))), nil,
			"samples[2].values and timestamps_unix_nano are both empty (profiles.proto: a Sample MUST have at least one entry in either)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := profilesRequest(testDict, tt.profile)
			res, err := CheckProfiles(src, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			want := Result{Items: 1, Samples: res.Samples}
			if tt.first != "" {
				want.Rejected = 1
				want.RejectedSamples = res.Samples
				want.FirstRejection = "resource_profiles[0].scope_profiles[0].profiles[0]: " + tt.first
			}
			if res != want {
				t.Errorf("CheckProfiles = %+v\nwant %+v", res, want)
			}
			consistency(t, signalProfiles, src, tt.opts)
		})
	}
}

// TestCheckProfilesDictionary: a dictionary that breaks a rule rejects
// every profile, with the first problem as the reason.
func TestCheckProfilesDictionary(t *testing.T) {
	const every = " (every profile of the request uses the dictionary)"
	tests := []struct {
		name  string
		dict  pb
		opts  *Options
		first string // "" when valid
	}{
		{"valid", testDict, nil, ""},
		{"no dictionary, nothing referenced", nil, nil, ""},
		{"split in two occurrences", nil, nil, ""}, // built below
		{"string_table[0] not empty", pb{}.Str(5, "x"), nil,
			"dictionary.string_table[0] is not the zero value (profiles.proto: element 0 of every dictionary table MUST be the zero value)"},
		{"mapping_table[0] not zero", pb{}.Msg(1, pb{}.Varint(4, 1)), nil,
			"dictionary.mapping_table[0] is not the zero value (profiles.proto: element 0 of every dictionary table MUST be the zero value)"},
		{"explicit zero fields are zero", pb{}.Msg(1, pb{}.Varint(1, 0).Msg(5, pb{})).Msg(2, pb{}.Varint(1, 0)).Msg(3, pb{}.Varint(4, 0)).
			Msg(4, pb{}).Str(5, "").Msg(6, pb{}.Msg(2, pb{})).Msg(7, pb{}.Msg(1, pb{})), nil, ""},
		{"location_table[0] with a line", pb{}.Msg(2, pb{}.Msg(3, pb{})), nil,
			"dictionary.location_table[0] is not the zero value (profiles.proto: element 0 of every dictionary table MUST be the zero value)"},
		{"link_table[0] with ids", pb{}.Msg(4, pb{}.Msg(1, ids(16, 1))), nil,
			"dictionary.link_table[0] is not the zero value (profiles.proto: element 0 of every dictionary table MUST be the zero value)"},
		{"stack_table[0] with a location", pb{}.Msg(7, pb{}.Varint(1, 0)), nil,
			"dictionary.stack_table[0] is not the zero value (profiles.proto: element 0 of every dictionary table MUST be the zero value)"},
		{"mapping filename", dictWith(pb{}.Msg(1, pb{}.Varint(4, 7))), nil,
			"dictionary.mapping_table[2].filename_strindex is 7, out of range of string_table (7 entries)" + every},
		{"mapping attribute", dictWith(pb{}.Msg(1, pb{}.Msg(5, packed(1, 2, 3)))), nil,
			"dictionary.mapping_table[2].attribute_indices[2] is 3, out of range of attribute_table (3 entries)" + every},
		{"location mapping", dictWith(pb{}.Msg(2, pb{}.Varint(1, 2))), nil,
			"dictionary.location_table[3].mapping_index is 2, out of range of mapping_table (2 entries)" + every},
		{"line function", dictWith(pb{}.Msg(2, pb{}.Msg(3, pb{}.Varint(1, 1)).Msg(3, pb{}.Varint(1, 3)))), nil,
			"dictionary.location_table[3].lines[1].function_index is 3, out of range of function_table (3 entries)" + every},
		{"negative line", dictWith(pb{}.Msg(2, pb{}.Msg(3, pb{}.Varint(1, 1).Varint(2, 0xffffffffffffffff)))), nil,
			"dictionary.location_table[3].lines[0].line is negative (profiles.proto: 1-based, 0 means unset)" + every},
		{"negative column", dictWith(pb{}.Msg(2, pb{}.Msg(3, pb{}.Varint(1, 1).Varint(3, 0xfffffffffffffff0)))), nil,
			"dictionary.location_table[3].lines[0].column is negative (profiles.proto: 1-based, 0 means unset)" + every},
		{"location attribute", dictWith(pb{}.Msg(2, pb{}.Varint(4, 5))), nil,
			"dictionary.location_table[3].attribute_indices[0] is 5, out of range of attribute_table (3 entries)" + every},
		{"function name", dictWith(pb{}.Msg(3, pb{}.Varint(1, 70))), nil,
			"dictionary.function_table[3].name_strindex is 70, out of range of string_table (7 entries)" + every},
		{"function without names", dictWith(pb{}.Msg(3, pb{}.Varint(4, 12))), nil,
			"dictionary.function_table[3] has none of name_strindex, system_name_strindex, filename_strindex (profiles.proto: at least one MUST be present)" + every},
		{"function negative start_line", dictWith(pb{}.Msg(3, pb{}.Varint(3, 1).Varint(4, 0xffffffffffffffff))), nil,
			"dictionary.function_table[3].start_line is negative (profiles.proto: 1-based, 0 means unset)" + every},
		{"link trace_id", dictWith(pb{}.Msg(4, pb{}.Msg(1, ids(8, 1)).Msg(2, ids(8, 1)))), nil,
			"dictionary.link_table[2].trace_id is 8 bytes, want 16" + every},
		{"link span_id", dictWith(pb{}.Msg(4, pb{}.Msg(1, ids(16, 1)))), nil,
			"dictionary.link_table[2].span_id is 0 bytes, want 8" + every},
		{"string not UTF-8", dictWith(pb{}.Str(5, badUTF8)), utf8Opts,
			"dictionary.string_table[7] is not valid UTF-8" + every},
		{"string not UTF-8 without the option", dictWith(pb{}.Str(5, badUTF8)), nil, ""},
		{"attribute key", dictWith(pb{}.Msg(6, pb{}.Varint(1, 99))), nil,
			"dictionary.attribute_table[3].key_strindex is 99, out of range of string_table (7 entries)" + every},
		{"attribute unit", dictWith(pb{}.Msg(6, pb{}.Varint(1, 5).Varint(3, 8))), nil,
			"dictionary.attribute_table[3].unit_strindex is 8, out of range of string_table (7 entries)" + every},
		{"attribute value strindex", dictWith(pb{}.Msg(6, pb{}.Varint(1, 5).Msg(2, pb{}.Varint(8, 7)))), nil,
			"dictionary.attribute_table[3].value has a string_value_strindex out of range of the dictionary's string_table" + every},
		{"attribute nested value strindex", dictWith(pb{}.Msg(6, pb{}.Varint(1, 5).Msg(2, pb{}.Msg(6, pb{}.Msg(1, pb{}.Varint(3, 77)))))), nil,
			"dictionary.attribute_table[3].value has a key_strindex out of range of the dictionary's string_table" + every},
		{"attribute value not UTF-8", dictWith(pb{}.Msg(6, pb{}.Varint(1, 5).Msg(2, pb{}.Str(1, badUTF8)))), utf8Opts,
			"dictionary.attribute_table[3].value is not valid UTF-8" + every},
		{"stack location", dictWith(pb{}.Msg(7, packedField(1, 1, 4))), nil,
			"dictionary.stack_table[3].location_indices[1] is 4, out of range of location_table (3 entries)" + every},
		{"first problem reported", dictWith(pb{}.Msg(7, pb{}.Varint(1, 9)).Msg(1, pb{}.Varint(4, 9))), nil,
			"dictionary.stack_table[3].location_indices[0] is 9, out of range of location_table (3 entries)" + every},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Profiles that use nothing of the dictionary: the rejections
			// come from the dictionary only.
			plain := pb{}.Msg(2, pb{}.Msg(4, packed(1)))
			src := profilesRequest(tt.dict, plain, plain)
			if tt.name == "split in two occurrences" {
				// The tables of two dictionary fields concatenate.
				half := len(testStrings) / 2
				first, second := pb{}, pb{}
				for i, s := range testStrings {
					if i < half {
						first = first.Str(5, s)
					} else {
						second = second.Str(5, s)
					}
				}
				src = pb{}.Msg(2, first).Append(profilesRequest(nil, pb{}.Msg(1, pb{}.Varint(1, 6)).Msg(2, pb{}.Msg(4, packed(1))))).Msg(2, second)
			}
			res, err := CheckProfiles(src, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			want := Result{Items: res.Items, Samples: res.Samples}
			if tt.first != "" {
				want.Rejected = 2
				want.RejectedSamples = 2
				want.FirstRejection = "resource_profiles[0].scope_profiles[0].profiles[0]: " + tt.first
				if !strings.HasSuffix(tt.first, every) {
					want.FirstRejection += every
				}
			}
			if res != want {
				t.Errorf("CheckProfiles = %+v\nwant %+v", res, want)
			}
			consistency(t, signalProfiles, src, tt.opts)
		})
	}
}

// packedField is a packed repeated varint field.
func packedField(num int, vs ...int64) pb { return pb{}.Msg(num, packed(vs...)) }
