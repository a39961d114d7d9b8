package otlpdecode

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/otlp-lite/otlp-lite/otlppb"
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

// TestStrindex: the alpha *_strindex fields of common.proto index the
// dictionary's string_table in profiles, and are counted and otherwise
// ignored in the other signals.
func TestStrindex(t *testing.T) {
	keyIdx := func(i uint64) pb { return pb{}.Varint(3, i).Msg(2, pb{}.Str(1, "v")) }
	valueIdx := func(i uint64) pb { return pb{}.Str(1, "k").Msg(2, pb{}.Varint(8, i)) }
	t.Run("profiles", func(t *testing.T) {
		tests := []struct {
			name     string
			resource pb // attributes of the resource
			scope    pb // attributes of the scope
			first    string
		}{
			{"in range", keyIdx(5), valueIdx(6), ""},
			{"zero", keyIdx(0), valueIdx(0), ""},
			{"key out of range", keyIdx(7), nil,
				"resource.attributes[1] has a key_strindex out of range of the dictionary's string_table"},
			{"negative key", keyIdx(0xffffffffffffffff), nil,
				"resource.attributes[1] has a key_strindex out of range of the dictionary's string_table"},
			{"value out of range in the scope", nil, valueIdx(100),
				"scope.attributes[0] has a string_value_strindex out of range of the dictionary's string_table"},
			{"nested value", pb{}.Str(1, "k").Msg(2, pb{}.Msg(5, pb{}.Msg(1, pb{}.Varint(8, 1)).Msg(1, pb{}.Varint(8, 9)))), nil,
				"resource.attributes[1] has a string_value_strindex out of range of the dictionary's string_table"},
			{"key and key_strindex", pb{}.Str(1, "k").Varint(3, 1), nil,
				"resource.attributes[1] has both key and key_strindex set (common.proto: key MUST NOT be set if key_strindex is used)"},
			{"empty key and key_strindex", pb{}.Str(1, "").Varint(3, 1), nil, ""},
			{"key and zero key_strindex", pb{}.Str(1, "k").Varint(3, 0), nil, ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res := pb{}.Msg(1, strAttr("service.name", "svc"))
				if tt.resource != nil {
					res = res.Msg(1, tt.resource)
				}
				var scope pb
				if tt.scope != nil {
					scope = pb{}.Msg(3, tt.scope)
				}
				src := request(res, scope, []pb{profile(nil), profile(nil)}).Msg(2, testDict)
				got, err := CheckProfiles(src, nil)
				if err != nil {
					t.Fatal(err)
				}
				want := Result{Items: 2, Samples: 4}
				if tt.first != "" {
					want.Rejected, want.RejectedSamples = 2, 4
					want.FirstRejection = "resource_profiles[0].scope_profiles[0].profiles[0]: " + tt.first
				}
				if got != want {
					t.Errorf("CheckProfiles = %+v\nwant %+v", got, want)
				}
				consistency(t, signalProfiles, src, nil)
			})
		}
	})
	t.Run("other signals", func(t *testing.T) {
		// Out of range, negative, and together with key: all ignored.
		attrs := pb{}.Msg(9, keyIdx(7)).Msg(9, valueIdx(0xffffffffffffffff)).Msg(9, pb{}.Str(1, "k").Varint(3, 1).Msg(2, pb{}.Str(1, "v")))
		src := request(pb{}.Msg(1, keyIdx(3)), nil, []pb{span(16, 8, attrs)})
		res, err := CheckTraces(src, utf8Opts)
		if err != nil {
			t.Fatal(err)
		}
		if want := (Result{Items: 1, IgnoredStrindex: 4}); res != want {
			t.Errorf("CheckTraces = %+v, want %+v", res, want)
		}
		body := pb{}.Msg(5, pb{}.Msg(6, pb{}.Msg(1, valueIdx(2))))
		res, err = CheckLogs(request(nil, nil, []pb{body}), nil)
		if err != nil || res != (Result{Items: 1, IgnoredStrindex: 1}) {
			t.Errorf("CheckLogs = %+v, %v; want 1 item, 1 ignored", res, err)
		}
		// A strindex with the wrong wire type is an unknown field.
		res, err = CheckTraces(request(nil, nil, []pb{span(16, 8, pb{}.Msg(9, pb{}.Str(1, "k").Str(3, "x")))}), nil)
		if err != nil || res != (Result{Items: 1}) {
			t.Errorf("CheckTraces = %+v, %v; want 1 item, nothing ignored", res, err)
		}
	})
}

// TestCheckProfilesErrors: malformed protobuf anywhere refuses the request,
// with the position of the bad data.
func TestCheckProfilesErrors(t *testing.T) {
	truncated := pb{0x0a, 0x05, 0x0a} // a field claiming 5 bytes, holding 1
	tests := []struct {
		name string
		src  pb
		pos  string // ErrorPosition's field; "" for none
	}{
		{"truncated request", profilesRequest(testDict, profile(nil))[:20], ""},
		{"truncated dictionary", profilesRequest(nil, profile(nil)).Msg(2, truncated), "dictionary"},
		{"truncated mapping", profilesRequest(dictWith(pb{}.Msg(1, truncated)), profile(nil)), "dictionary.mapping_table[2]"},
		{"truncated line", profilesRequest(dictWith(pb{}.Msg(2, pb{}.Msg(3, truncated))), profile(nil)), "dictionary.location_table[3].lines[0]"},
		{"truncated link", profilesRequest(dictWith(pb{}.Msg(4, truncated)), profile(nil)), "dictionary.link_table[2]"},
		{"truncated attribute value", profilesRequest(dictWith(pb{}.Msg(6, pb{}.Msg(2, truncated))), profile(nil)), "dictionary.attribute_table[3].value"},
		{"bad packed stack", profilesRequest(dictWith(pb{}.Msg(7, pb{}.Msg(1, pb{0x81})))), "dictionary.stack_table[3]"},
		{"overlong varint index", profilesRequest(dictWith(pb{}.Msg(7, pb{}.Msg(1, pb{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})))), "dictionary.stack_table[3]"},
		{"truncated sample", profilesRequest(testDict, profile(nil), profile(pb{}.Msg(2, truncated))), "resource_profiles[0].scope_profiles[0].profiles[1].samples[2]"},
		{"bad packed values", profilesRequest(testDict, profile(pb{}.Msg(2, pb{}.Msg(4, pb{0x80})))), "resource_profiles[0].scope_profiles[0].profiles[0].samples[2]"},
		{"bad packed timestamps", profilesRequest(testDict, profile(pb{}.Msg(2, pb{}.Msg(5, make(pb, 12))))), "resource_profiles[0].scope_profiles[0].profiles[0].samples[2]"},
		{"bad packed attributes", profilesRequest(testDict, profile(pb{}.Msg(11, pb{0x80, 0x80}))), "resource_profiles[0].scope_profiles[0].profiles[0]"},
		{"values claiming 4 GiB", profilesRequest(testDict, profile(pb{}.Msg(2, pb{0x22, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01}))), "resource_profiles[0].scope_profiles[0].profiles[0].samples[2]"},
		{"dictionary claiming 2^62 bytes", profilesRequest(testDict, profile(nil)).Append(pb{0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x3f}), ""},
		{"truncated sample_type", profilesRequest(testDict, profile(pb{}.Msg(1, truncated))), "resource_profiles[0].scope_profiles[0].profiles[0].sample_type"},
		{"AnyValue too deep in the dictionary", profilesRequest(dictWith(pb{}.Msg(6, pb{}.Msg(2, pb{}.Msg(6, pb{}.Msg(1, nest(200))))))), "dictionary.attribute_table[3].value.kvlist_value.values[0].value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := CheckProfiles(tt.src, nil)
			if err == nil {
				t.Fatal("CheckProfiles accepted malformed protobuf")
			}
			field, desc, ok := otlppb.ErrorPosition(err)
			if ok != (tt.pos != "") || !strings.HasPrefix(field, tt.pos) {
				t.Errorf("otlppb.ErrorPosition(%q) = %q, %q, %v; want %q", err, field, desc, ok, tt.pos)
			}
			if _, err := AppendValidProfiles(nil, tt.src, nil); err == nil {
				t.Error("AppendValidProfiles accepted malformed protobuf")
			}
		})
	}
}

func TestAppendValidProfiles(t *testing.T) {
	valid := func(i byte) pb { return profile(pb{}.Varint(4, uint64(i))) }
	bad := profile(pb{}.Msg(2, pb{}))
	unknown := pb{}.Varint(99, 7)
	tests := []struct {
		name string
		src  pb
		kept []pb
	}{
		{"one bad", profilesRequest(testDict, valid(1), bad, valid(2)), []pb{valid(1), valid(2)}},
		{"dictionary first, unknown fields", pb{}.Msg(2, testDict).Append(unknown).Msg(1, pb{}.Msg(2, pb{}.Msg(2, bad).Msg(2, valid(3)).Append(unknown))), []pb{valid(3)}},
		{"bad dictionary", profilesRequest(dictWith(pb{}.Msg(2, pb{}.Varint(1, 9))), valid(4), valid(5)), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, err := CheckProfiles(tt.src, nil)
			if err != nil || before.Rejected == 0 {
				t.Fatalf("CheckProfiles = %+v, %v: the case must reject something", before, err)
			}
			out, err := AppendValidProfiles([]byte("prefix"), tt.src, nil)
			if err != nil {
				t.Fatal(err)
			}
			out = out[len("prefix"):]
			kept := items(t, out)
			if len(kept) != len(tt.kept) {
				t.Fatalf("kept %d profiles, want %d", len(kept), len(tt.kept))
			}
			for i := range kept {
				if !bytes.Equal(kept[i], tt.kept[i]) {
					t.Errorf("profile %d differs", i)
				}
			}
			// The dictionary and the unknown fields are kept verbatim.
			if got, want := messages(t, out, 2), messages(t, tt.src, 2); len(got) != len(want) || !bytes.Equal(got[0], want[0]) {
				t.Error("the dictionary was not kept verbatim")
			}
			if bytes.Contains(tt.src, unknown) && bytes.Count(out, unknown) != bytes.Count(tt.src, unknown) {
				t.Error("unknown fields were not kept")
			}
			consistency(t, signalProfiles, tt.src, nil)
		})
	}
}

// TestIndicesPacked holds the 8-byte reader of packed indices to the
// element-by-element reading: same verdict, same position of the first
// bad index, same element count, on random runs of one- to three-byte
// varints against tables of every size around the limits it uses.
func TestIndicesPacked(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 20000 {
		size := []int{0, 1, 2, 127, 128, 129, 200, 255, 256, 901, 16383, 16384, 16385, 1 << 20}[round%14]
		var run pb
		var want []int64
		for range rng.IntN(40) {
			var v int64
			switch rng.IntN(10) {
			case 0:
				v = int64(rng.IntN(1 << 21)) // three bytes
			case 1, 2, 3, 4:
				v = int64(rng.IntN(128))
			case 5:
				v = int64(size) + int64(rng.IntN(3)) - 1 // around the limit
			default:
				v = int64(rng.IntN(16384))
			}
			want = append(want, v)
			run = appendVarint(run, uint64(v))
		}
		c := checker{profiles: true}
		c.dict.len[tableLocation] = size
		f := lenField(t, 1, run)
		var r reason
		n := 3 // elements of earlier occurrences
		if err := c.indices(&f, "location_indices", tableLocation, &n, &r); err != nil {
			t.Fatal(err)
		}
		wantBad := -1
		for i, v := range want {
			if i32 := int32(v); i32 != 0 && (i32 < 0 || int(i32) >= size) {
				wantBad = i
				break
			}
		}
		if n != 3+len(want) {
			t.Fatalf("size %d, run %v: %d elements, want %d", size, want, n-3, len(want))
		}
		switch {
		case wantBad < 0 && r.bad():
			t.Fatalf("size %d, run %v: rejected (%s)", size, want, r)
		case wantBad >= 0 && (!r.bad() || r.path[0].idx != 3+wantBad || r.got != int(int32(want[wantBad]))):
			t.Fatalf("size %d, run %v: %q, want element %d (%d) rejected", size, want, r, 3+wantBad, want[wantBad])
		}
	}
}

// TestCountShortVarints holds the 8-byte varint counter to the
// element-by-element reading on random runs, valid or not: when it
// answers, it answers what binary.Uvarint would.
func TestCountShortVarints(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	answered := 0
	for round := range 50000 {
		var run []byte
		for range rng.IntN(30) {
			switch rng.IntN(8) {
			case 0:
				run = append(run, byte(rng.IntN(256))) // any byte
			case 1:
				run = appendVarint(run, ^uint64(rng.IntN(1000))) // 10 bytes
			default:
				run = appendVarint(run, uint64(rng.Int64N(1<<uint(1+rng.IntN(62)))))
			}
		}
		if round%5 == 0 && len(run) > 0 {
			run = run[:rng.IntN(len(run))] // truncated
		}
		want, wantOK := 0, true
		for rest := run; len(rest) > 0; want++ {
			_, k := binary.Uvarint(rest)
			if k <= 0 {
				wantOK = false
				break
			}
			rest = rest[k:]
		}
		n, ok := countShortVarints(run)
		if !ok {
			continue // the caller reads the run the slow way
		}
		answered++
		if !wantOK || n != want {
			t.Fatalf("countShortVarints(% x) = %d, true; binary.Uvarint reads %d varints, valid %v", run, n, want, wantOK)
		}
	}
	if answered < 10000 {
		t.Errorf("the fast path answered only %d of 50000 runs", answered)
	}
}

// TestAppendValidMalformedAfterBadHeader: a Resource* whose schema_url is
// not UTF-8 and whose resource, after it, is malformed is refused by
// AppendValid as by Check (found by FuzzCheckProfiles; the reading of the
// header fields is shared by every signal).
func TestAppendValidMalformedAfterBadHeader(t *testing.T) {
	rs := pb{}.Str(3, badUTF8).Append(pb{0x0a, 0x02, 0x30, 0x80}) // resource: a truncated varint
	for _, tt := range []struct {
		sig         signal
		appendValid func(dst, src []byte, opts *Options) ([]byte, error)
	}{{signalTraces, AppendValidTraces}, {signalProfiles, AppendValidProfiles}} {
		src := pb{}.Msg(1, rs)
		if _, err := tt.appendValid(nil, src, utf8Opts); err == nil {
			t.Errorf("%v: AppendValid accepted a malformed resource after a bad schema_url", tt.sig)
		}
		consistency(t, tt.sig, src, utf8Opts)
	}
}
