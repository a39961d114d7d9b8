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
	`"profileId":"000102030405060708090a0b0c0d0e0f","droppedAttributesCount":2,"originalPayloadFormat":"pprof","originalPayload":"AQI=","attributeIndices":[1]}],"schemaUrl":"s"}]}],` +
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

// TestProfileIDHex: a 16-byte profile_id is written as 32 hex digits, the
// form the Collector's pdata reads and writes (pdata/internal/profileid.go;
// it fails on base64 with "length mismatch"), and read in either form:
// hex, either case, and base64 (what protojson writes, and what otlpjson
// wrote before). An id of another length, which the receiver refuses, is
// written as base64 so that it reads back as itself.
func TestProfileIDHex(t *testing.T) {
	want := `{"resourceProfiles":[{"scopeProfiles":[{"profiles":[{"profileId":"000102030405060708090a0b0c0d0e0f"}]}]}]}`
	for _, in := range []string{
		want,
		`{"resourceProfiles":[{"scopeProfiles":[{"profiles":[{"profile_id":"000102030405060708090A0B0C0D0E0F"}]}]}]}`,
		`{"resourceProfiles":[{"scopeProfiles":[{"profiles":[{"profileId":"AAECAwQFBgcICQoLDA0ODw=="}]}]}]}`,
	} {
		pb, err := Unmarshal(nil, ProfilesData, []byte(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got, _ := Marshal(nil, ProfilesData, pb); string(got) != want {
			t.Fatalf("%s: got %s", in, got)
		}
	}
	for _, n := range []int{1, 8, 15, 17, 24, 32} {
		id := make([]byte, n)
		for i := range id {
			id[i] = byte(i + 1)
		}
		pb := append([]byte{0x0a, byte(n + 6), 0x12, byte(n + 4), 0x12, byte(n + 2), 0x3a, byte(n)}, id...)
		js, err := Marshal(nil, ProfilesData, pb)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Unmarshal(nil, ProfilesData, js)
		if err != nil {
			t.Fatalf("%d-byte id: %s: %v", n, js, err)
		}
		if !bytes.Equal(back, pb) {
			t.Fatalf("%d-byte id does not round-trip: %s\ngot  % x\nwant % x", n, js, back, pb)
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
