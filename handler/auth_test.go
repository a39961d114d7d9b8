package handler

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
)

// newTestTokenFile writes content to a token file in a temporary directory
// and opens it; the path is returned for tests that rewrite the file.
func newTestTokenFile(t *testing.T, content string) (*TokenFile, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens")
	os.WriteFile(path, []byte(content), 0o600)
	tf, err := NewTokenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return tf, path
}

func TestTokenAuth(t *testing.T) {
	tf, path := newTestTokenFile(t, "# ingest tokens\nalpha-token\n\n  beta-token  \n")
	sink := &memSink{}
	c := startHandler(t, New(Config{Sink: sink, Logger: quietLogger(), Auth: tf}))
	invoke := func(token string) error {
		ctx := context.Background()
		req, _ := http.NewRequestWithContext(ctx, "POST", c.BaseURL+traceExport, strings.NewReader(string(frame(traceRequest(goodID)))))
		req.Header.Set("Content-Type", "application/grpc")
		if token != "" {
			req.Header.Set("Authorization", token)
		}
		resp, err := c.HTTP.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		buf := make([]byte, 1024)
		for {
			if _, err := resp.Body.Read(buf); err != nil {
				break
			}
		}
		code := resp.Header.Get("Grpc-Status")
		if code == "" {
			code = resp.Trailer.Get("Grpc-Status")
		}
		if code != "0" {
			return &grpcwire.Status{Code: grpcwire.Unauthenticated, Message: code}
		}
		return nil
	}
	for token, ok := range map[string]bool{"Bearer alpha-token": true, "bearer beta-token": true, "": false,
		"Bearer wrong": false, "Basic alpha-token": false, "Bearer alpha-tokenX": false, "Bearer ": false} {
		if err := invoke(token); (err == nil) != ok {
			t.Errorf("token %q: err=%v, want ok=%v", token, err, ok)
		}
	}
	if n := len(sink.all()); n != 2 {
		t.Fatalf("stored %d requests, want 2 (refused ones must not reach storage)", n)
	}
	// OTLP/HTTP gets 401 with a Status body.
	resp, _ := http.Post(c.BaseURL+"/v1/traces", "application/x-protobuf", strings.NewReader(""))
	resp.Body.Close()
	if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("HTTP: %d", resp.StatusCode)
	}
	// Health checks need no token.
	if _, err := c.Invoke(context.Background(), "/grpc.health.v1.Health/Check", healthRequest("")); err != nil {
		t.Fatalf("health: %v", err)
	}
	// Rotating the file takes effect on reload.
	time.Sleep(10 * time.Millisecond)
	os.WriteFile(path, []byte("gamma-token\n"), 0o600)
	stop := make(chan struct{})
	defer close(stop)
	go tf.Watch(10*time.Millisecond, stop, nil)
	deadline := time.Now().Add(3 * time.Second)
	for invoke("Bearer gamma-token") != nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if invoke("Bearer gamma-token") != nil || invoke("Bearer alpha-token") == nil {
		t.Fatal("token file change not picked up")
	}
	os.WriteFile(path, []byte("\n# nothing\n"), 0o600)
	if err := tf.Reload(); err == nil {
		t.Fatal("empty token file accepted")
	}
	if invoke("Bearer gamma-token") != nil {
		t.Fatal("a failed reload dropped the tokens in force")
	}
}

// Lines that cannot be bearer tokens make the file invalid, naming the line
// and never quoting it; a reload that fails keeps the tokens in force.
func TestTokenFileRejectsImpossibleTokens(t *testing.T) {
	for name, tc := range map[string]struct {
		content, want string
	}{
		"bearer prefix":    {"# tokens\nok-token\nBearer s3cret\n", `line 3: starts with "Bearer "`},
		"inner space":      {"two words\n", "line 1: after the token, want only tenant=NAME"},
		"bad tenant":       {"tok tenant=a/b\n", "line 1: the tenant name has byte 2"},
		"two tenants":      {"tok tenant=a tenant=b\n", "line 1: tenant= is given twice"},
		"control":          {"ok\nbad\x01token\n", "line 2: byte 4 is not visible ASCII"},
		"binary":           {"\xff\xfe\x00junk\n", "line 1: byte 1 is not visible ASCII"},
		"only comments":    {"# nothing\n\n", "has no tokens"},
		"lowercase scheme": {"bearer abc\n", `line 1: starts with "Bearer "`},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tokens")
			os.WriteFile(path, []byte(tc.content), 0o600)
			_, err := NewTokenFile(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("the error quotes the secret: %v", err)
			}
		})
	}
	tf, path := newTestTokenFile(t, "good-token\n")
	os.WriteFile(path, []byte("Bearer good-token\n"), 0o600)
	if err := tf.Reload(); err == nil {
		t.Fatal("a bad reload succeeded")
	}
	if n, _ := tf.Tokens(); n != 1 || !tf.Authenticate(bearerRequest("good-token")) {
		t.Fatalf("after a bad reload: %d tokens; the old one must stay in force", n)
	}
}

func bearerRequest(token string) *http.Request {
	r, _ := http.NewRequest("POST", "/", nil)
	r.Header.Set("Authorization", "Bearer "+token)
	return r
}

// Watch reports each reload with the tokens in force, a deleted file once
// (keeping the tokens), and the recovery.
func TestTokenFileWatchReports(t *testing.T) {
	tf, path := newTestTokenFile(t, "one\n")
	synctest.Test(t, func(t *testing.T) {
		type report struct {
			n   int
			err string
		}
		var reports []report
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			tf.Watch(time.Second, stop, func(n int, err error) {
				r := report{n: n}
				if err != nil {
					r.err = err.Error()
				}
				reports = append(reports, r)
			})
		}()
		step := func(change func()) {
			change()
			time.Sleep(time.Second)
			synctest.Wait()
		}
		step(func() { os.WriteFile(path, []byte("one\ntwo\nthree\n"), 0o600) })
		step(func() { os.Remove(path) })
		step(func() {}) // still deleted: not reported again
		step(func() { os.WriteFile(path, []byte("four\n"), 0o600) })
		close(stop)
		<-done
		if len(reports) != 3 || reports[0] != (report{n: 3}) || reports[1].n != 3 || !strings.Contains(reports[1].err, "cannot read token file") || reports[2] != (report{n: 1}) {
			t.Fatalf("reports %+v", reports)
		}
	})
}
