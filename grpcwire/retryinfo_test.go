package grpcwire

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"testing"
	"time"

	"github.com/VictoriaMetrics/easyproto"
)

// A status with a retry delay also carries it as google.rpc.retryinfo-bin
// metadata, as a trailer and in a Trailers-Only response, and only then.
func TestRetryInfoMetadata(t *testing.T) {
	for _, tc := range []struct {
		name      string
		delay     time.Duration
		started   bool
		wantDelay time.Duration
		want      bool
	}{
		{"trailers-only", 1500 * time.Millisecond, false, 1500 * time.Millisecond, true},
		{"trailer", 2*time.Second + 5, true, 2*time.Second + 5, true},
		{"explicit zero", -1, false, 0, true},
		{"none", 0, false, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := startH2C(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				call, st := StartCall(w, r, Limits{})
				if st != nil {
					return
				}
				if tc.started {
					call.WriteHeaders()
				}
				call.WriteStatus(&Status{Code: Unavailable, Message: "later", RetryDelay: tc.delay})
			}))
			c := NewClient(addr, nil)
			req, _ := http.NewRequestWithContext(context.Background(), "POST", c.BaseURL+"/x.Y/Z", bytes.NewReader([]byte{0, 0, 0, 0, 0}))
			req.Header.Set("Content-Type", "application/grpc")
			resp, err := c.HTTP.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var body bytes.Buffer
			body.ReadFrom(resp.Body)
			resp.Body.Close()
			v := resp.Header.Get("google.rpc.retryinfo-bin") + resp.Trailer.Get("google.rpc.retryinfo-bin")
			if (v != "") != tc.want {
				t.Fatalf("retryinfo-bin %q, want present %v", v, tc.want)
			}
			if !tc.want {
				return
			}
			raw, err := base64.RawStdEncoding.DecodeString(v)
			if err != nil {
				t.Fatal(err)
			}
			dur, _, _ := easyproto.GetMessageData(raw, 1)
			sec, _, _ := easyproto.GetInt64(dur, 1)
			ns, _, _ := easyproto.GetInt32(dur, 2)
			if got := time.Duration(sec)*time.Second + time.Duration(ns); got != tc.wantDelay {
				t.Fatalf("delay %v, want %v", got, tc.wantDelay)
			}
		})
	}
}
