package interop

// Written where it is read: the profiles JSON otlpjson writes (export
// -signal profiles, the Kafka encoding otlp_json, forwarding with
// encoding=json) is read by the Collector's pdata, the one OTLP/JSON reader
// of profiles there is, with every field found again.

import (
	"bytes"
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

// TestOTLPJSONProfilesReadByCollector marshals profiles with otlpjson and
// unmarshals them with pdata's JSON unmarshaler (pprofile.JSONUnmarshaler):
// pdata must accept the JSON, and what it read, written back as protobuf,
// must be the message we started from, field for field. The full profile
// sets every field of every profiles message; the random ones vary them.
// Before profile ids were written as hex, pdata refused every profile that
// had one ("length mismatch").
func TestOTLPJSONProfilesReadByCollector(t *testing.T) {
	full := ojFullProfiles()
	// pdata refuses a string_value_strindex that is out of range of the
	// string table (ojEveryValue has one): a resource it accepts.
	full.ResourceProfiles[0].Resource = &resourcepb.Resource{Attributes: []*commonpb.KeyValue{ojKV("service.name", ojStr("checkout"))}}
	msgs := []*profilespb.ProfilesData{full}
	rng := rand.New(rand.NewPCG(21, 17))
	for range 20 {
		p := ojRandProfiles(rng)
		for _, rp := range p.ResourceProfiles {
			rp.Resource = &resourcepb.Resource{Attributes: []*commonpb.KeyValue{ojKV("service.name", ojStr("checkout"))}}
			for _, sp := range rp.ScopeProfiles {
				sp.Scope = &commonpb.InstrumentationScope{Name: "s"}
				for _, pr := range sp.Profiles {
					// pdata holds a profile id as 16 bytes; the
					// receiver accepts no other length (otlpdecode).
					if len(pr.ProfileId) != 0 && len(pr.ProfileId) != 16 {
						pr.ProfileId = nil
					}
				}
			}
		}
		if p.Dictionary != nil {
			for _, a := range p.Dictionary.AttributeTable {
				a.Value = ojStr("v")
			}
		}
		msgs = append(msgs, p)
	}
	for i, want := range msgs {
		pb, err := proto.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		fromPB, err := (&pprofile.ProtoUnmarshaler{}).UnmarshalProfiles(pb)
		if err != nil {
			t.Fatalf("message %d: pdata cannot read the protobuf: %v", i, err)
		}
		for _, typ := range []otlpjson.MessageType{otlpjson.ProfilesData, otlpjson.ExportProfilesServiceRequest} {
			js, err := otlpjson.Marshal(nil, typ, pb)
			if err != nil {
				t.Fatalf("message %d: otlpjson.Marshal: %v", i, err)
			}
			pd, err := (&pprofile.JSONUnmarshaler{}).UnmarshalProfiles(js)
			if err != nil {
				t.Fatalf("message %d: pdata cannot read otlpjson's %s: %v\n%s", i, typ, err, js)
			}
			// pdata holds profiles in its own model (it moves
			// attribute keys and values into the dictionary when it
			// writes protobuf, and keeps empty messages it was given):
			// what it read from our JSON must be what it reads from
			// the protobuf the JSON was made from.
			if got, want := pdataProto(t, pd), pdataProto(t, fromPB); !proto.Equal(got, want) {
				t.Fatalf("message %d: pdata read otlpjson's %s differently from its protobuf:\ngot:  %v\nwant: %v\njson: %s", i, typ, got, want, js)
			}
		}
	}
	// The id pdata reads is the one written, in hex.
	js, err := otlpjson.Marshal(nil, otlpjson.ExportProfilesServiceRequest, mustMarshal(t, &colprofilespb.ExportProfilesServiceRequest{
		ResourceProfiles: full.ResourceProfiles, Dictionary: full.Dictionary}))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(js, []byte(`"profileId":"0102030405060708090a0b0c0d0e0f10"`)) {
		t.Fatalf("profileId is not written as hex: %s", js)
	}
	pd, err := (&pprofile.JSONUnmarshaler{}).UnmarshalProfiles(js)
	if err != nil {
		t.Fatal(err)
	}
	id := pd.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().At(0).ProfileID()
	if want := full.ResourceProfiles[0].ScopeProfiles[0].Profiles[0].ProfileId; !bytes.Equal(id[:], want) {
		t.Fatalf("pdata read profile id %x, want %x", id, want)
	}
}

// pdataProto is pd as pdata writes it in protobuf, decoded.
func pdataProto(t *testing.T, pd pprofile.Profiles) *profilespb.ProfilesData {
	t.Helper()
	b, err := (&pprofile.ProtoMarshaler{}).MarshalProfiles(pd)
	if err != nil {
		t.Fatal(err)
	}
	m := &profilespb.ProfilesData{}
	if err := proto.Unmarshal(b, m); err != nil {
		t.Fatal(err)
	}
	return m
}

func mustMarshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
