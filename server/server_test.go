package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/internal/pipenet"
)

func testLimits() *Limits {
	l := DefaultLimits()
	l.MaxConcurrentStreams, l.StreamWindow, l.ConnWindow = 100, 1<<20, 4<<20
	l.IdleTimeout, l.WriteByteTimeout = time.Minute, time.Minute
	return &l
}

var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Proto) })

// fetch makes one GET request and returns its body.
func fetch(c *http.Client, url string) (string, error) {
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}

// get is fetch failing the test on error.
func get(t *testing.T, c *http.Client, url string) string {
	t.Helper()
	body, err := fetch(c, url)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// connsFor makes n requests spaced by gap (fake time) and returns how many
// connections the client dialled for them.
func connsFor(t *testing.T, ln *pipenet.Listener, c *http.Client, n int, gap time.Duration) int64 {
	t.Helper()
	for range n {
		if got := get(t, c, "http://pipe/"); got != "HTTP/2.0" {
			t.Fatalf("served over %q, want HTTP/2.0 (h2c)", got)
		}
		time.Sleep(gap)
	}
	return ln.Dials()
}

// TestH2CConnectionOutlivesReadHeaderTimeout guards against
// golang/go#80876: an h2c connection in use must not be closed when
// ReadHeaderTimeout expires.
func TestH2CConnectionOutlivesReadHeaderTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := testLimits()
		l.ReadHeaderTimeout = 300 * time.Millisecond
		ln, _, c := servePipe(t, okHandler, Config{Limits: l})
		if n := connsFor(t, ln, c, 10, 150*time.Millisecond); n != 1 {
			t.Fatalf("%d connections for 1.5 s of requests with a 300 ms ReadHeaderTimeout: the h2c connection was dropped", n)
		}
	})
}

func TestMaxConnectionAgeSendsGoaway(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := testLimits()
		l.MaxConnectionAge, l.MaxConnectionAgeGrace = 200*time.Millisecond, time.Second
		ln, _, c := servePipe(t, okHandler, Config{Limits: l})
		// The first request past a connection's deadline (180 to 220 ms
		// after it was accepted) gets GOAWAY and the next one dials: with
		// a request every 100 ms, a connection serves 3 or 4 of the 8.
		if n := connsFor(t, ln, c, 8, 100*time.Millisecond); n < 2 || n > 3 {
			t.Fatalf("%d connections served 800 ms of requests with a 200 ms max age, want 2 or 3", n)
		}
	})
}

// TestServerShutdownGraceful: Shutdown calls the hook first, stops
// accepting, lets the request in flight finish and returns only then.
func TestServerShutdownGraceful(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var hooked, finished atomic.Bool
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-release
			finished.Store(true)
			io.WriteString(w, "done")
		})
		ln, srv, c := servePipe(t, h, Config{OnShutdown: func() { hooked.Store(true) }})
		resp := make(chan string)
		go func() {
			body, err := fetch(c, "http://pipe/")
			if err != nil {
				body = err.Error()
			}
			resp <- body
		}()
		synctest.Wait() // the request is in the handler

		shut := make(chan error)
		go func() { shut <- srv.Shutdown(context.Background()) }()
		time.Sleep(time.Minute)
		synctest.Wait()
		if !hooked.Load() {
			t.Fatal("Shutdown did not call OnShutdown")
		}
		select {
		case err := <-shut:
			t.Fatalf("Shutdown returned %v with a request in flight", err)
		default:
		}
		if _, err := ln.DialContext(context.Background(), "", ""); err == nil {
			t.Fatal("listener still accepts during Shutdown")
		}

		close(release)
		if got := <-resp; got != "done" {
			t.Fatalf("request in flight got %q", got)
		}
		if err := <-shut; err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
		if !finished.Load() {
			t.Fatal("Shutdown returned before the handler finished")
		}
	})
}

// TestServerShutdownTimeout: past its context's deadline Shutdown closes
// the connections, so handlers see their request cancelled, and returns
// the context's error.
func TestServerShutdownTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		handlerDone := make(chan error, 1)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
			handlerDone <- r.Context().Err()
		})
		_, srv, c := servePipe(t, h, Config{})
		reqErr := make(chan error)
		go func() {
			_, err := fetch(c, "http://pipe/")
			reqErr <- err
		}()
		synctest.Wait()

		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		start := time.Now()
		if err := srv.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Shutdown: %v, want context.DeadlineExceeded", err)
		}
		if d := time.Since(start); d != 5*time.Second {
			t.Fatalf("Shutdown returned after %v, want the 5 s timeout", d)
		}
		if err := <-handlerDone; err == nil {
			t.Fatal("handler's context not cancelled")
		}
		if err := <-reqErr; err == nil {
			t.Fatal("request succeeded after its connection was closed")
		}
	})
}

// shutdownHandler has a Shutdown method, as *handler.Handler does.
type shutdownHandler struct {
	http.Handler
	calls *[]string
}

func (h shutdownHandler) Shutdown() { *h.calls = append(*h.calls, "handler") }

func TestServerShutdownHook(t *testing.T) {
	for _, tc := range []struct {
		name string
		hook bool
		want string
	}{
		{"handler's Shutdown method", false, "handler"},
		{"OnShutdown overrides it", true, "hook"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls []string
			cfg := Config{}
			if tc.hook {
				cfg.OnShutdown = func() { calls = append(calls, "hook") }
			}
			srv := New(shutdownHandler{okHandler, &calls}, cfg)
			if err := srv.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			if strings.Join(calls, ",") != tc.want {
				t.Fatalf("Shutdown called %v, want %s", calls, tc.want)
			}
		})
	}
}

func TestServerConnectionMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := metrics.NewSet()
		ln, _, c := servePipe(t, okHandler, Config{Metrics: reg})
		connsFor(t, ln, c, 3, 0)
		synctest.Wait()
		var buf bytes.Buffer
		reg.WritePrometheus(&buf)
		for _, want := range []string{"otlplite_open_connections 1\n", "otlplite_connections_total 1\n"} {
			if !strings.Contains(buf.String(), want) {
				t.Errorf("metrics lack %q:\n%s", want, buf.String())
			}
		}
	})
}

// serveTCP serves h with cfg on 127.0.0.1:0 and returns the address.
func serveTCP(t *testing.T, h http.Handler, cfg Config) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := New(h, cfg)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func TestServerPlainHTTP1OnH2CPort(t *testing.T) {
	addr := serveTCP(t, okHandler, Config{Limits: testLimits()})
	if got := get(t, http.DefaultClient, "http://"+addr+"/"); got != "HTTP/1.1" {
		t.Fatalf("HTTP/1.1 GET served as %q", got)
	}
}

// TestServerListenAndServe: ListenAndServe binds every address, Addrs
// reports them with their ports, and Shutdown ends it with
// http.ErrServerClosed.
func TestServerListenAndServe(t *testing.T) {
	srv := New(okHandler, Config{Addrs: []string{"127.0.0.1:0", "127.0.0.1:0"}})
	done := make(chan error, 1)
	go func() { done <- srv.ListenAndServe() }()
	for deadline := time.Now().Add(10 * time.Second); len(srv.Addrs()) < 2; runtime.Gosched() {
		if time.Now().After(deadline) {
			t.Fatal("ListenAndServe did not bind its addresses")
		}
	}
	for _, a := range srv.Addrs() {
		if got := get(t, http.DefaultClient, "http://"+a.String()+"/"); got != "HTTP/1.1" {
			t.Fatalf("%s served %q", a, got)
		}
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		t.Fatalf("ListenAndServe returned %v, want http.ErrServerClosed", err)
	}
}

// TestServerListenAllOrNone: a busy address fails Listen and
// ListenAndServe, naming the address.
func TestServerListenAllOrNone(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addrs := []string{"127.0.0.1:0", busy.Addr().String()}
	if lns, err := Listen(addrs...); err == nil || !strings.Contains(err.Error(), busy.Addr().String()) {
		t.Fatalf("Listen(%v) = %v, %v; want an error naming the busy address", addrs, lns, err)
	}
	srv := New(okHandler, Config{Addrs: addrs})
	if err := srv.ListenAndServe(); err == nil || errors.Is(err, http.ErrServerClosed) {
		t.Fatalf("ListenAndServe with a busy address: %v", err)
	}
	if a := srv.Addrs(); len(a) != 0 {
		t.Fatalf("Addrs after a failed ListenAndServe: %v", a)
	}
}
