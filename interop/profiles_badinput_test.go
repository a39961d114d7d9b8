package interop

// Bad profiles end to end, from grpc-go with the official generated types
// and from a plain HTTP client: undecodable requests are refused whole
// (INVALID_ARGUMENT / HTTP 400 with a google.rpc.BadRequest, OTLP v1.11
// "Bad Data"), a profile that breaks the profiles.proto rules is dropped
// and counted in rejected_profiles while the rest of its request is stored.

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	colprofilespb "go.opentelemetry.io/proto/otlp/collector/profiles/v1development"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/otlp-lite/otlp-lite/storage"
)

const profilesExportMethod = "/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export"

// badRequestOf returns the BadRequest among details, or nil.
func badRequestOf(t *testing.T, details []any) *errdetails.BadRequest {
	t.Helper()
	for _, d := range details {
		if br, ok := d.(*errdetails.BadRequest); ok {
			return br
		}
	}
	return nil
}

// TestProfilesUndecodable: a truncated profiles request, one with a bad
// varint inside its dictionary and one whose nesting is cut inside a sample
// are INVALID_ARGUMENT over gRPC and 400 over
// OTLP/HTTP, each with a BadRequest naming the place, and nothing is
// stored; the server goes on serving.
func TestProfilesUndecodable(t *testing.T) {
	dataDir := t.TempDir()
	srv := startServerHTTP(t, dataDir)
	conn := srv.dial(t)
	good, err := proto.Marshal(wireProfiles(t, collectorProfiles(7)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		body []byte
	}{
		{"truncated", good[:len(good)-5]},
		// A second dictionary occurrence (merged into the first, as
		// protobuf merges repeated singular messages) whose
		// location_table[0].mapping_index is an unterminated varint.
		{"bad varint inside the dictionary", append(bytes.Clone(good), 0x12, 0x04, 0x12, 0x02, 0x08, 0xff)},
		{"nesting cut inside a sample", cutInsideSample(t, good)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := conn.Invoke(callCtx(t), profilesExportMethod, tc.body, new(colprofilespb.ExportProfilesServiceResponse), grpc.ForceCodec(rawCodec{}))
			st := status.Convert(err)
			if st.Code() != codes.InvalidArgument {
				t.Fatalf("gRPC: %v, want InvalidArgument", err)
			}
			br := badRequestOf(t, st.Details())
			if br == nil || len(br.GetFieldViolations()) == 0 || br.GetFieldViolations()[0].GetDescription() == "" {
				t.Fatalf("gRPC: no BadRequest with a violation in %v", st.Details())
			}
			t.Logf("gRPC: %s; violation %v", st.Message(), br.GetFieldViolations()[0])

			resp, err := http.Post("http://"+srv.httpAddr+"/v1development/profiles", "application/x-protobuf", bytes.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("HTTP: status %d, want 400; body %q", resp.StatusCode, body)
			}
			var hst statuspb.Status
			if err := proto.Unmarshal(body, &hst); err != nil {
				t.Fatalf("HTTP: the 400 body is not a google.rpc.Status: %v", err)
			}
			found := false
			for _, d := range hst.GetDetails() {
				var br errdetails.BadRequest
				if d.UnmarshalTo(&br) == nil && len(br.GetFieldViolations()) > 0 {
					found = true
				}
			}
			if !found || !strings.Contains(hst.GetMessage(), "ExportProfilesServiceRequest") {
				t.Fatalf("HTTP: status %v lacks a BadRequest or does not name the message", &hst)
			}
		})
	}
	// Still serving, and a valid request is stored.
	if _, err := colprofilespb.NewProfilesServiceClient(conn).Export(callCtx(t), wireProfiles(t, collectorProfiles(8))); err != nil {
		t.Fatalf("valid Export after the refusals: %v", err)
	}
	srv.stop()
	if got := scanStore(t, dataDir, storage.Profiles, func() *colprofilespb.ExportProfilesServiceRequest {
		return new(colprofilespb.ExportProfilesServiceRequest)
	}); len(got) != 1 {
		t.Fatalf("%d records stored, want only the valid request", len(got))
	}
}

// cutInsideSample re-encodes req with the length of the first profile's
// first sample one byte longer than the sample: the nesting is truncated
// inside it (its enclosing lengths all still fit).
func cutInsideSample(t *testing.T, req []byte) []byte {
	t.Helper()
	m := new(colprofilespb.ExportProfilesServiceRequest)
	if err := proto.Unmarshal(req, m); err != nil {
		t.Fatal(err)
	}
	p := m.ResourceProfiles[0].ScopeProfiles[0].Profiles[0]
	first := p.Samples[0]
	// A marker value makes the sample findable in the encoding.
	first.Values = []int64{0x5eed5eed5eed}
	sb, err := proto.Marshal(first)
	if err != nil {
		t.Fatal(err)
	}
	out, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(out, sb)
	if i < 2 || out[i-1] != byte(len(sb)) || out[i-2] != 0x12 {
		t.Fatalf("cannot find the sample in the encoding")
	}
	// The sample's length claims one byte more than it has: its last
	// field runs into the next sample.
	out[i-1]++
	return out
}

// TestProfilesPartialSuccess: a profile with a dictionary index out of
// range (a sample's stack_index past the stack table) is rejected with
// rejected_profiles = 1 and a message naming it, over gRPC and OTLP/HTTP;
// the request's other profiles are stored, with the dictionary.
func TestProfilesPartialSuccess(t *testing.T) {
	dataDir := t.TempDir()
	srv := startServerHTTP(t, dataDir)
	client := colprofilespb.NewProfilesServiceClient(srv.dial(t))

	bad := func(seed uint64) *colprofilespb.ExportProfilesServiceRequest {
		req := wireProfiles(t, collectorProfiles(seed))
		req.ResourceProfiles[0].ScopeProfiles[0].Profiles[1].Samples[17].StackIndex = int32(len(req.Dictionary.StackTable)) + 1000
		return req
	}
	resp, err := client.Export(callCtx(t), bad(21))
	if err != nil {
		t.Fatalf("Export with one bad profile: %v, want OK with partial_success", err)
	}
	ps := resp.GetPartialSuccess()
	if ps.GetRejectedProfiles() != 1 || !strings.Contains(ps.GetErrorMessage(), "profiles[1]") || !strings.Contains(ps.GetErrorMessage(), "stack_index") {
		t.Fatalf("partial_success = %v, want rejected_profiles=1 naming profiles[1] and stack_index", ps)
	}
	t.Logf("gRPC partial success: %q", ps.GetErrorMessage())

	body, err := proto.Marshal(bad(22))
	if err != nil {
		t.Fatal(err)
	}
	hr, err := http.Post("http://"+srv.httpAddr+"/v1development/profiles", "application/x-protobuf", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	rb, _ := io.ReadAll(hr.Body)
	hr.Body.Close()
	var hresp colprofilespb.ExportProfilesServiceResponse
	if hr.StatusCode != http.StatusOK || proto.Unmarshal(rb, &hresp) != nil || hresp.GetPartialSuccess().GetRejectedProfiles() != 1 {
		t.Fatalf("HTTP: status %d, response %v", hr.StatusCode, &hresp)
	}
	srv.stop()

	stored := scanStore(t, dataDir, storage.Profiles, func() *colprofilespb.ExportProfilesServiceRequest {
		return new(colprofilespb.ExportProfilesServiceRequest)
	})
	if len(stored) != 2 {
		t.Fatalf("%d records stored, want 2", len(stored))
	}
	for i, seed := range []uint64{21, 22} {
		want := bad(seed)
		sp := want.ResourceProfiles[0].ScopeProfiles[0]
		sp.Profiles = sp.Profiles[:1] // the valid profile alone
		if !proto.Equal(stored[i], want) {
			t.Errorf("record %d is not the request without its bad profile:\n%s", i, diffProto(want, stored[i]))
		}
	}
}
