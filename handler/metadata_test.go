package handler

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/otlp-lite/otlp-lite/storage"
)

// metadataSink records the client metadata of every write.
type metadataSink struct {
	mu  sync.Mutex
	got []string // fmt of each write's storage.Metadata
}

func (s *metadataSink) Write(ctx context.Context, _ storage.Signal, _ []byte, _ int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	md := storage.MetadataFrom(ctx)
	if md == nil {
		s.got = append(s.got, "none")
		return nil
	}
	s.got = append(s.got, fmt.Sprint([]storage.MetadataEntry(md)))
	return nil
}

func (s *metadataSink) Close() error { return nil }

func (s *metadataSink) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.got
	s.got = nil
	return g
}

// TestClientMetadata: the sink sees, under the configured names, the
// values of the configured headers only, in the order sent, over gRPC
// (metadata) and OTLP/HTTP (headers) alike, whatever their case; nothing
// when none is configured or none is sent.
func TestClientMetadata(t *testing.T) {
	sink := &metadataSink{}
	h := New(Config{Sink: sink, Logger: quietLogger(), MetadataKeys: []string{"X-Team", "x-route", "X-Absent"}})
	c := startHandler(t, h)
	body := traceRequest(goodID)

	// gRPC: the client's metadata, lower case on the wire.
	gc := withHeaders(c, map[string]string{"x-team": "checkout", "X-Route": "eu-1", "x-other": "not passed"})
	if _, err := gc.Invoke(context.Background(), traceExport, body); err != nil {
		t.Fatal(err)
	}
	// OTLP/HTTP, a header sent twice.
	req, _ := http.NewRequest("POST", c.BaseURL+"/v1/traces", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Add("x-team", "a")
	req.Header.Add("X-TEAM", "b")
	req.Header.Set("X-Other", "not passed")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP status %d", resp.StatusCode)
	}
	// None of the keys sent: no metadata at all.
	if _, err := c.Invoke(context.Background(), traceExport, body); err != nil {
		t.Fatal(err)
	}
	want := []string{"[{X-Team [checkout]} {x-route [eu-1]}]", "[{X-Team [a b]}]", "none"}
	if got := sink.take(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("sink saw %q, want %q", got, want)
	}

	// Not configured: nothing passed, whatever the request carries.
	sink2 := &metadataSink{}
	c2 := startHandler(t, New(Config{Sink: sink2, Logger: quietLogger()}))
	if _, err := withHeaders(c2, map[string]string{"x-team": "checkout"}).Invoke(context.Background(), traceExport, body); err != nil {
		t.Fatal(err)
	}
	if got := sink2.take(); fmt.Sprint(got) != "[none]" {
		t.Fatalf("without MetadataKeys the sink saw %q", got)
	}
}

func TestMetadataGet(t *testing.T) {
	md := storage.Metadata{{Key: "X-Team", Values: []string{"a", "b"}}}
	if got := md.Get("x-team"); fmt.Sprint(got) != "[a b]" {
		t.Errorf("Get(x-team) = %q", got)
	}
	if got := md.Get("x-route"); got != nil {
		t.Errorf("Get(x-route) = %q, want nil", got)
	}
	if storage.MetadataFrom(context.Background()) != nil {
		t.Error("metadata in a bare context")
	}
}
