package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/otlp-lite/otlp-lite/bench/internal/dataset"
	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/otlpjson"
)

// TestPayloads checks that every protocol, compression and signal gives a
// body that, undone the way the server undoes it (decompress, transcode
// JSON), is a request Check accepts with the advertised number of items,
// and that bad combinations are refused.
func TestPayloads(t *testing.T) {
	for _, tc := range []struct {
		protocol, compression, signal string
		items, attrs                  int
		dataset                       string
		wantItems                     int
		wantErr                       string
	}{
		{protocol: "grpc", compression: "none", signal: "traces", items: 500, attrs: 10, wantItems: 500},
		{protocol: "grpc", compression: "gzip", signal: "traces", items: 100, attrs: 4, wantItems: 100},
		{protocol: "grpc", compression: "zstd", signal: "logs", items: 50, attrs: 6, wantItems: 50},
		{protocol: "grpc-stream", compression: "none", signal: "metrics", items: 510, wantItems: 510},
		{protocol: "http-proto", compression: "gzip", signal: "metrics", items: 100, wantItems: 90},
		{protocol: "http-json", compression: "none", signal: "traces", items: 20, attrs: 3, wantItems: 20},
		{protocol: "http-json", compression: "zstd", signal: "logs", items: 20, attrs: 3, wantItems: 20},
		{protocol: "grpc-stream", compression: "gzip", signal: "traces", items: 1, wantErr: "uncompressed only"},
		{protocol: "udp", compression: "none", signal: "traces", items: 1, wantErr: "unknown -protocol"},
		{protocol: "grpc", compression: "brotli", signal: "traces", items: 1, wantErr: "bad -compression"},
		{protocol: "grpc", compression: "none", signal: "traces", items: 512, dataset: "traces"},
		{protocol: "http-json", compression: "gzip", signal: "metrics", items: 1000, dataset: "metrics"},
		{protocol: "grpc", compression: "none", signal: "metrics", items: 1, dataset: "traces", wantErr: "does not hold"},
		{protocol: "grpc", compression: "none", signal: "profiles", items: 1, wantErr: "unknown -signal"},
	} {
		name := tc.protocol + "/" + tc.compression + "/" + tc.signal + "/" + tc.dataset
		t.Run(name, func(t *testing.T) {
			cfg := config{protocol: tc.protocol, compression: tc.compression, signal: tc.signal, items: tc.items, attrs: tc.attrs}
			if tc.dataset != "" {
				dir := dataset.Dir()
				if dir == "" {
					t.Skip("no ../shared/datasets")
				}
				cfg.dataset = filepath.Join(dir, dataset.Files[tc.dataset])
			}
			p, err := newPayload(cfg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.dataset != "" {
				// About -items each, none much larger: a metric is not split.
				if len(p.reqs) < 50 || p.reqs[0].items < tc.items || p.reqs[0].items > 2*tc.items {
					t.Fatalf("%d requests, the first of %d items; want many of about %d", len(p.reqs), p.reqs[0].items, tc.items)
				}
			} else if len(p.reqs) != 1 || p.reqs[0].items != tc.wantItems {
				t.Fatalf("payload has %d requests, the first of %d items, want one of %d", len(p.reqs), p.reqs[0].items, tc.wantItems)
			}
			for _, req := range p.reqs {
				checkRequest(t, p, req)
			}
		})
	}
}

// checkRequest undoes a request's body as the server does and checks it.
func checkRequest(t *testing.T, p payload, req request) {
	t.Helper()
	body := req.body
	var err error
	if p.codec != compression.Identity {
		if body, err = compression.Decompress(nil, p.codec, body, 64<<20); err != nil {
			t.Fatalf("cannot decompress the body: %s", err)
		}
	}
	if p.json {
		if body, err = otlpjson.Unmarshal(nil, p.jsonType, body); err != nil {
			t.Fatalf("cannot transcode the body: %s", err)
		}
	} else if string(body) != string(req.proto) {
		t.Fatal("decompressed body differs from the protobuf request")
	}
	r, err := p.check(body, nil)
	if err != nil || r.Items != req.items || r.Rejected != 0 {
		t.Fatalf("Check: %d items, %d rejected, err %v; want %d items", r.Items, r.Rejected, err, req.items)
	}
}
