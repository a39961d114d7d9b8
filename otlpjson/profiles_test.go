package otlpjson

import (
	"bytes"
	"testing"

	"github.com/otlp-lite/otlp-lite/otlp"
)

// profilesJSON is a canonical ProfilesData: a dictionary with every table,
// one profile with every field, the v1.11 *_strindex fields of AnyValue and
// KeyValue. The interop golden test checks the same against protojson.
const profilesJSON = `{"resourceProfiles":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"svc"}}]},` +
	`"scopeProfiles":[{"scope":{"name":"ebpf"},"profiles":[{"sampleType":{"typeStrindex":1,"unitStrindex":2},` +
	`"samples":[{"stackIndex":1,"attributeIndices":[0,1],"linkIndex":1,"values":["7","-3"],"timestampsUnixNano":["1700000000000000001"]}],` +
	`"timeUnixNano":"1700000000000000000","durationNano":"10000000000","periodType":{"typeStrindex":3,"unitStrindex":4},"period":"10000000",` +
	`"profileId":"AAECAwQFBgcICQoLDA0ODw==","droppedAttributesCount":2,"originalPayloadFormat":"pprof","originalPayload":"AQI=","attributeIndices":[1]}],"schemaUrl":"s"}]}],` +
	`"dictionary":{"mappingTable":[{},{"memoryStart":"4096","memoryLimit":"8192","fileOffset":"512","filenameStrindex":5,"attributeIndices":[0]}],` +
	`"locationTable":[{},{"mappingIndex":1,"address":"4660","lines":[{"functionIndex":1,"line":"42","column":"7"}],"attributeIndices":[1]}],` +
	`"functionTable":[{},{"nameStrindex":6,"systemNameStrindex":7,"filenameStrindex":5,"startLine":"40"}],` +
	`"linkTable":[{},{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174"}],` +
	`"stringTable":["","samples","count","cpu","nanoseconds","/bin/app","main","_main","thread.name"],` +
	`"attributeTable":[{},{"keyStrindex":8,"value":{"stringValueStrindex":6},"unitStrindex":2}],` +
	`"stackTable":[{},{"locationIndices":[1,1]}]}}`

func TestProfilesRoundTrip(t *testing.T) {
	data, resp, ok := ForSignal(otlp.Profiles)
	if !ok || data != ExportProfilesServiceRequest || resp != ExportProfilesServiceResponse {
		t.Fatalf("ForSignal(profiles) = %v, %v, %v", data, resp, ok)
	}
	pb, err := Unmarshal(nil, ProfilesData, []byte(profilesJSON))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Marshal(nil, ProfilesData, pb)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != profilesJSON {
		t.Fatalf("round trip\ngot:  %s\nwant: %s", got, profilesJSON)
	}

	// KeyValue.key_strindex (common.proto, v1.11) in a resource attribute.
	kv := `{"resourceProfiles":[{"resource":{"attributes":[{"value":{"intValue":"1"},"keyStrindex":8}]}}]}`
	if pb, err = Unmarshal(nil, ProfilesData, []byte(kv)); err != nil {
		t.Fatal(err)
	}
	if got, _ = Marshal(nil, ProfilesData, pb); string(got) != kv {
		t.Fatalf("key_strindex: %s", got)
	}

	out, err := Unmarshal(nil, ExportProfilesServiceResponse, []byte(`{"partialSuccess":{"rejectedProfiles":"2","errorMessage":"m"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte("\x0a\x05\x08\x02\x12\x01m"); !bytes.Equal(out, want) {
		t.Fatalf("response % x, want % x", out, want)
	}
}

// TestProfileIDHex: profile_id is base64 on output (the hex exception of
// the spec names trace and span ids only) but the Collector's pdata writes
// it as 32 hex digits, which are read as hex; anything else is base64.
func TestProfileIDHex(t *testing.T) {
	want := `{"resourceProfiles":[{"scopeProfiles":[{"profiles":[{"profileId":"AAECAwQFBgcICQoLDA0ODw=="}]}]}]}`
	for _, in := range []string{
		`{"resourceProfiles":[{"scopeProfiles":[{"profiles":[{"profileId":"000102030405060708090a0b0c0d0e0f"}]}]}]}`,
		`{"resourceProfiles":[{"scopeProfiles":[{"profiles":[{"profile_id":"000102030405060708090A0B0C0D0E0F"}]}]}]}`,
		want,
	} {
		pb, err := Unmarshal(nil, ProfilesData, []byte(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got, _ := Marshal(nil, ProfilesData, pb); string(got) != want {
			t.Fatalf("%s: got %s", in, got)
		}
	}
	// 32 characters that are not all hex are base64 (24 bytes): kept as
	// sent, for validation to judge.
	pb, err := Unmarshal(nil, ProfilesData, []byte(`{"resourceProfiles":[{"scopeProfiles":[{"profiles":[{"profileId":"ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ"}]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(pb, []byte{0x3a, 24}) {
		t.Fatalf("base64 profile id: % x", pb)
	}
}
