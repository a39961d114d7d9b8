package forward

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/VictoriaMetrics/easyproto"
	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// request returns an ExportTraceServiceRequest with one span named
// "rec-N;", so that a destination can tell which record it got.
func request(n int) []byte {
	var mp easyproto.MarshalerPool
	m := mp.Get()
	sp := m.MessageMarshaler().AppendMessage(1).AppendMessage(2).AppendMessage(2)
	sp.AppendBytes(1, bytes.Repeat([]byte{1}, 16))
	sp.AppendBytes(2, bytes.Repeat([]byte{2}, 8))
	sp.AppendString(5, fmt.Sprintf("rec-%d;", n))
	return m.Marshal(nil)
}

func recordNumber(data []byte) int {
	i := bytes.Index(data, []byte("rec-"))
	if i < 0 {
		return -1
	}
	j := bytes.IndexByte(data[i:], ';')
	n, _ := strconv.Atoi(string(data[i+4 : i+j]))
	return n
}

// countSink is a destination's storage: it counts each record it stored,
// and refuses everything (UNAVAILABLE, 503) while down.
type countSink struct {
	mu     sync.Mutex
	stored map[int]int
	down   atomic.Bool
}

func (s *countSink) Write(_ context.Context, _ storage.Signal, data []byte, _ int) error {
	if s.down.Load() {
		return storage.ErrUnavailable
	}
	s.mu.Lock()
	s.stored[recordNumber(data)]++
	s.mu.Unlock()
	return nil
}

func (s *countSink) Close() error { return nil }

// distinct and total count the records stored once or more, and in all.
func (s *countSink) distinct() (distinct, total int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.stored {
		distinct++
		total += c
	}
	return
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// destination starts an otlp-lite handler over h2c (it serves OTLP/gRPC,
// the stream mode and OTLP/HTTP on one port), wrapped by wrap if not nil.
func destination(t *testing.T, wrap func(http.Handler) http.Handler) (*countSink, string) {
	t.Helper()
	return destinationCfg(t, handler.Config{}, wrap)
}

// destinationCfg is destination with more of the handler's configuration.
func destinationCfg(t *testing.T, cfg handler.Config, wrap func(http.Handler) http.Handler) (*countSink, string) {
	t.Helper()
	sink := &countSink{stored: map[int]int{}}
	cfg.Sink, cfg.Logger, cfg.RetryDelay = sink, quiet(), 20*time.Millisecond
	var h http.Handler = handler.New(cfg)
	if wrap != nil {
		h = wrap(h)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, Protocols: new(http.Protocols)}
	srv.Protocols.SetUnencryptedHTTP2(true)
	srv.Protocols.SetHTTP1(true)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return sink, ln.Addr().String()
}

func openStore(t *testing.T, dir string) *disk.Store {
	t.Helper()
	s, err := disk.Open(dir, disk.Options{HoldPrefix: CursorPrefix, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func store(t *testing.T, s *disk.Store, from, to int) {
	t.Helper()
	for n := from; n < to; n++ {
		if err := s.Write(context.Background(), storage.Traces, request(n), 1); err != nil {
			t.Fatal(err)
		}
	}
}

// waitFor polls cond until it holds or a generous deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond) // polling, not synchronisation
	}
}

func mustParse(t *testing.T, flag string) Destination {
	t.Helper()
	d, err := Parse(flag)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func metricValue(set *metrics.Set, series string) string {
	var b bytes.Buffer
	set.WritePrometheus(&b)
	for line := range strings.SplitSeq(b.String(), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			return v
		}
	}
	return ""
}

// TestForwardEachProtocol: every record reaches the destination over each
// protocol; a restart resends nothing that was acknowledged before a clean
// Close, and continues with what arrived meanwhile; the lag is zero at the
// end.
func TestForwardEachProtocol(t *testing.T) {
	for _, scheme := range []string{"grpc://", "stream://", "http://", "http+json"} {
		t.Run(scheme, func(t *testing.T) {
			dir := t.TempDir()
			st := openStore(t, dir)
			defer st.Close()
			sink, addr := destination(t, nil)
			url := scheme + addr + "?signals=traces&retry-initial-backoff=10ms&retry-max-backoff=100ms"
			if scheme == "http+json" {
				url = "http://" + addr + "/?signals=traces&encoding=json"
			}
			d := mustParse(t, "dst="+url)
			store(t, st, 0, 40)
			set := metrics.NewSet()
			f, err := New(Options{DataDir: dir, Store: st, Metrics: set, Logger: quiet()}, []Destination{d})
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, "40 records", func() bool { n, _ := sink.distinct(); return n == 40 })
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			store(t, st, 40, 60)
			set = metrics.NewSet()
			f, err = New(Options{DataDir: dir, Store: st, Metrics: set, Logger: quiet()}, []Destination{d})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			waitFor(t, "60 records", func() bool { n, _ := sink.distinct(); return n == 60 })
			waitFor(t, "lag 0", func() bool {
				return metricValue(set, `otlplite_forward_lag_records{destination="dst",signal="traces"}`) == "0"
			})
			if _, total := sink.distinct(); total != 60 {
				t.Fatalf("%d deliveries of 60 records: a clean restart resent acknowledged records", total)
			}
			if v := metricValue(set, `otlplite_forward_sent_records_total{destination="dst",signal="traces"}`); v != "20" {
				t.Fatalf("sent counter after the restart = %s, want 20", v)
			}
			if v := metricValue(set, `otlplite_forward_state{destination="dst",state="up"}`); v != "1" {
				t.Fatalf("state up = %s", v)
			}
		})
	}
}

// TestForwardDestinationDown: while the destination refuses everything
// (UNAVAILABLE with RetryInfo), the forwarder backs off and the lag grows;
// once it is back, everything arrives.
func TestForwardDestinationDown(t *testing.T) {
	for _, scheme := range []string{"grpc://", "stream://", "http://"} {
		t.Run(scheme, func(t *testing.T) {
			dir := t.TempDir()
			st := openStore(t, dir)
			defer st.Close()
			sink, addr := destination(t, nil)
			sink.down.Store(true)
			d := mustParse(t, "dst="+scheme+addr+"?retry-initial-backoff=10ms&retry-max-backoff=50ms")
			set := metrics.NewSet()
			f, err := New(Options{DataDir: dir, Store: st, Metrics: set, Logger: quiet()}, []Destination{d})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			store(t, st, 0, 30)
			waitFor(t, "state backing_off", func() bool {
				return metricValue(set, `otlplite_forward_state{destination="dst",state="backing_off"}`) == "1"
			})
			if v := metricValue(set, `otlplite_forward_lag_records{destination="dst",signal="traces"}`); v == "0" {
				t.Fatal("lag is zero while the destination is down")
			}
			sink.down.Store(false)
			waitFor(t, "30 records", func() bool { n, _ := sink.distinct(); return n == 30 })
			waitFor(t, "state up", func() bool {
				return metricValue(set, `otlplite_forward_state{destination="dst",state="up"}`) == "1"
			})
		})
	}
}

// TestForwardDeadLetter: a destination that refuses one record for good
// (400, INVALID_ARGUMENT) and accepts the rest: that record is in the
// dead-letter store, counted, and the others arrived; a partial success is
// dead-lettered too.
func TestForwardDeadLetter(t *testing.T) {
	for _, scheme := range []string{"grpc://", "http://"} {
		t.Run(scheme, func(t *testing.T) {
			dir := t.TempDir()
			st := openStore(t, dir)
			defer st.Close()
			sink, addr := destination(t, func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					body, _ := io.ReadAll(r.Body)
					r.Body = io.NopCloser(bytes.NewReader(body))
					if !bytes.Contains(body, []byte("rec-7;")) {
						next.ServeHTTP(w, r)
						return
					}
					if r.Header.Get("Content-Type") == "application/grpc" {
						w.Header().Set("Content-Type", "application/grpc")
						w.Header().Set("Grpc-Status", "3")
						w.Header().Set("Grpc-Message", "bad record")
						w.WriteHeader(http.StatusOK)
						return
					}
					http.Error(w, "bad record", http.StatusBadRequest)
				})
			})
			d := mustParse(t, "dst="+scheme+addr+"?compression=none")
			set := metrics.NewSet()
			store(t, st, 0, 20)
			f, err := New(Options{DataDir: dir, Store: st, Metrics: set, Logger: quiet()}, []Destination{d})
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, "19 records", func() bool { n, _ := sink.distinct(); return n == 19 })
			waitFor(t, "lag 0", func() bool {
				return metricValue(set, `otlplite_forward_lag_records{destination="dst",signal="traces"}`) == "0"
			})
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			if v := metricValue(set, `otlplite_forward_dead_lettered_records_total{destination="dst",signal="traces"}`); v != "1" {
				t.Fatalf("dead-lettered = %s, want 1", v)
			}
			var dead []int
			if err := disk.Scan(DeadLetterDir(dir, "dst"), storage.Traces, func(r disk.Record) error {
				dead = append(dead, recordNumber(r.Data))
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if len(dead) != 1 || dead[0] != 7 {
				t.Fatalf("dead letters %v, want [7]", dead)
			}
		})
	}
}

// TestForwardRefusedClient: a destination that refuses the client (401)
// puts the destination in state failing and skips nothing; once it
// accepts, every record arrives and nothing was dead-lettered.
func TestForwardRefusedClient(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	defer st.Close()
	var refuse atomic.Bool
	refuse.Store(true)
	sink, addr := destination(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if refuse.Load() {
				http.Error(w, "who are you", http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	d := mustParse(t, "dst=http://"+addr+"?retry-initial-backoff=10ms&retry-max-backoff=50ms&header=Authorization:Bearer%20x")
	set := metrics.NewSet()
	store(t, st, 0, 10)
	f, err := New(Options{DataDir: dir, Store: st, Metrics: set, Logger: quiet()}, []Destination{d})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	waitFor(t, "state failing", func() bool {
		return metricValue(set, `otlplite_forward_state{destination="dst",state="failing"}`) == "1"
	})
	refuse.Store(false)
	waitFor(t, "10 records", func() bool { n, _ := sink.distinct(); return n == 10 })
	if v := metricValue(set, `otlplite_forward_dead_lettered_records_total{destination="dst",signal="traces"}`); v != "0" {
		t.Fatalf("dead-lettered = %s, want 0: a refusal of the client is no verdict on the data", v)
	}
}

// TestForwardTwoDestinations: one destination down does not slow the
// other; the down one catches up once it is back; retention (max-age)
// keeps what the down one has not received.
func TestForwardTwoDestinations(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	defer st.Close()
	up, upAddr := destination(t, nil)
	down, downAddr := destination(t, nil)
	down.down.Store(true)
	dests := []Destination{
		mustParse(t, "up=stream://"+upAddr),
		mustParse(t, "down=grpc://"+downAddr+"?retry-initial-backoff=10ms&retry-max-backoff=50ms"),
	}
	f, err := New(Options{DataDir: dir, Store: st, Logger: quiet()}, dests)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	store(t, st, 0, 100)
	waitFor(t, "100 records at the up destination", func() bool { n, _ := up.distinct(); return n == 100 })
	if n, _ := down.distinct(); n != 0 {
		t.Fatalf("the down destination stored %d", n)
	}
	down.down.Store(false)
	waitFor(t, "100 records at the other", func() bool { n, _ := down.distinct(); return n == 100 })
}

func TestParseURL(t *testing.T) {
	good := map[string]func(Destination) bool{
		"a=grpc://h:4317": func(d Destination) bool {
			return d.Protocol == GRPC && d.TLS == nil && d.Endpoint == "h:4317" && len(d.Signals) == 3
		},
		"a=grpcs://h:4317?tls-server-name=x": func(d Destination) bool { return d.TLS != nil && d.TLS.ServerName == "x" },
		"a=streams://[::1]:4317": func(d Destination) bool {
			return d.Protocol == Stream && d.Endpoint == "[::1]:4317" && d.InFlight == DefaultStreamInFlight
		},
		"a=https://h:4318/otlp/?encoding=json":    func(d Destination) bool { return d.Protocol == HTTP && d.Path == "/otlp" && d.JSON },
		"a=http://h:4318?signals=logs,traces":     func(d Destination) bool { return len(d.Signals) == 2 && d.Signals[0] == storage.Logs },
		"a=grpc://h:4317?signals=traces,profiles": func(d Destination) bool { return len(d.Signals) == 2 && d.Signals[1] == storage.Profiles },
		"a=grpc://h:1?header=X-Scope-OrgID:t-a&header=b:c": func(d Destination) bool {
			return d.Header.Get("X-Scope-OrgID") == "t-a" && d.Header.Get("B") == "c"
		},
		"a=grpc://h:1?start=now&retry-max-backoff=1m&inflight=3&compression=none&timeout=2s": func(d Destination) bool {
			return d.Start == disk.StartEnd && d.Backoff.Max == time.Minute && d.InFlight == 3 && d.Timeout == 2*time.Second
		},
	}
	for in, ok := range good {
		d, err := Parse(in)
		if err != nil || !ok(d) {
			t.Errorf("Parse(%q) = %+v, %v", in, d, err)
		}
	}
	bad := map[string]string{
		"nourl":                                 "want NAME=URL",
		"a/b=grpc://h:1":                        "invalid destination name",
		"a=ftp://h:1":                           "unknown scheme",
		"a=grpc://h":                            "no host:port",
		"a=grpc://h:1/x":                        "only for http",
		"a=grpc://h:1?signals=spans":            "signals=spans",
		"a=grpc://h:1?compression=lz4":          "compression=lz4",
		"a=http://h:1?compression=zstd":         "not part of OTLP/HTTP",
		"a=grpc://h:1?encoding=json":            "only for http",
		"a=grpc://h:1?header=novalue":           "want Name:Value",
		"a=grpc://h:1?start=later":              "start=later",
		"a=grpc://h:1?timeout=-1s":              "timeout=-1s",
		"a=grpc://h:1?inflight=0":               "inflight=0",
		"a=grpc://h:1?tls-ca=x":                 "need a TLS scheme",
		"a=grpcs://h:1?tls-ca=/nonexistent":     "tls-ca",
		"a=grpcs://h:1?tls-cert=x":              "together",
		"a=grpc://h:1?color=red":                "unknown parameter",
		"a=grpc://h:1?start=now&start=now":      "given 2 times",
		"a=grpc://u:p@h:1":                      "user info",
		"a=grpc://h:1?retry-initial-backoff=1m": "more than retry-max-backoff",
	}
	for in, want := range bad {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q) = %v, want one line containing %q", in, err, want)
		}
	}
}

// TestForwardSinkScheme: a destination that is a storage.Sink (how the
// Kafka forwarder plugs in) gets every record; ErrUnavailable is retried,
// the scheme's own parameters are its own, the common ones still apply.
func TestForwardSinkScheme(t *testing.T) {
	sink := &countSink{stored: map[int]int{}}
	sink.down.Store(true)
	var gotTopic string
	RegisterScheme("memsink", func(host string, q url.Values) (func(*slog.Logger) (storage.Sink, error), error) {
		gotTopic = q.Get("topic")
		q.Del("topic")
		return func(*slog.Logger) (storage.Sink, error) { return sink, nil }, nil
	})
	defer delete(schemes, "memsink")
	if _, err := Parse("k=memsink://b1:9092,b2:9092/?topic=x&color=red"); err == nil || !strings.Contains(err.Error(), `unknown parameter "color"`) {
		t.Fatalf("unknown parameter: %v", err)
	}
	d := mustParse(t, "k=memsink://b1:9092,b2:9092/?topic=spans&signals=traces&retry-initial-backoff=10ms&retry-max-backoff=50ms")
	if gotTopic != "spans" || d.Protocol != Sink || d.String() != "memsink://b1:9092,b2:9092" {
		t.Fatalf("parsed %+v (topic %q)", d, gotTopic)
	}
	dir := t.TempDir()
	st := openStore(t, dir)
	defer st.Close()
	store(t, st, 0, 25)
	f, err := New(Options{DataDir: dir, Store: st, Logger: quiet()}, []Destination{d})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	waitFor(t, "retries", func() bool { return f.dests[0].State() == BackingOff })
	sink.down.Store(false)
	waitFor(t, "25 records", func() bool { n, _ := sink.distinct(); return n == 25 })
}

// TestForwardPartialSuccess: the destination validates UTF-8 and this
// log holds a record with a span whose name is not (stored by a receiver
// that does not validate): the destination keeps the valid span and
// answers with a partial success; the whole record is dead-lettered and
// counted, over each protocol.
func TestForwardPartialSuccess(t *testing.T) {
	for _, scheme := range []string{"grpc://", "stream://", "http://"} {
		t.Run(scheme, func(t *testing.T) {
			dir := t.TempDir()
			st := openStore(t, dir)
			defer st.Close()
			sink, addr := destinationCfg(t, handler.Config{Decode: otlpdecode.Options{ValidateUTF8: true}}, nil)
			var mp easyproto.MarshalerPool
			m := mp.Get()
			ss := m.MessageMarshaler().AppendMessage(1).AppendMessage(2)
			for _, name := range []string{"rec-1;", "bad-\xff"} {
				sp := ss.AppendMessage(2)
				sp.AppendBytes(1, bytes.Repeat([]byte{1}, 16))
				sp.AppendBytes(2, bytes.Repeat([]byte{2}, 8))
				sp.AppendString(5, name)
			}
			if err := st.Write(context.Background(), storage.Traces, m.Marshal(nil), 2); err != nil {
				t.Fatal(err)
			}
			store(t, st, 2, 5)
			set := metrics.NewSet()
			f, err := New(Options{DataDir: dir, Store: st, Metrics: set, Logger: quiet()}, []Destination{mustParse(t, "dst="+scheme+addr+"?signals=traces")})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			waitFor(t, "4 records", func() bool { n, _ := sink.distinct(); return n == 4 })
			waitFor(t, "the dead letter", func() bool {
				return metricValue(set, `otlplite_forward_dead_lettered_records_total{destination="dst",signal="traces"}`) == "1"
			})
			if v := metricValue(set, `otlplite_forward_rejected_items_total{destination="dst",signal="traces"}`); v != "1" {
				t.Fatalf("rejected items = %s, want 1", v)
			}
		})
	}
}

// TestForwardTenantHeader: each record's tenant (stored by a receiver with
// tenancy on) travels in tenant-header, per request, over grpc and http;
// stream:// refuses the parameter.
func TestForwardTenantHeader(t *testing.T) {
	if _, err := Parse("a=stream://h:1?tenant-header=X-Scope-OrgID"); err == nil || !strings.Contains(err.Error(), "grpc and http") {
		t.Fatalf("tenant-header over stream: %v", err)
	}
	for _, scheme := range []string{"grpc://", "http://"} {
		t.Run(scheme, func(t *testing.T) {
			dir := t.TempDir()
			st := openStore(t, dir)
			defer st.Close()
			var mu sync.Mutex
			seen := map[int]string{}
			sink, addr := destination(t, func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					body, _ := io.ReadAll(r.Body)
					r.Body = io.NopCloser(bytes.NewReader(body))
					mu.Lock()
					seen[recordNumber(body)] = r.Header.Get("X-Scope-OrgID")
					mu.Unlock()
					next.ServeHTTP(w, r)
				})
			})
			for n := range 6 {
				tenant := "team-a"
				if n%2 == 1 {
					tenant = "team-b"
				}
				if err := st.Write(otlp.WithTenant(context.Background(), tenant), storage.Traces, request(n), 1); err != nil {
					t.Fatal(err)
				}
			}
			f, err := New(Options{DataDir: dir, Store: st, Logger: quiet()}, []Destination{mustParse(t, "dst="+scheme+addr+"?signals=traces&compression=none&tenant-header=X-Scope-OrgID")})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			waitFor(t, "6 records", func() bool { n, _ := sink.distinct(); return n == 6 })
			mu.Lock()
			defer mu.Unlock()
			for n := range 6 {
				want := "team-a"
				if n%2 == 1 {
					want = "team-b"
				}
				if seen[n] != want {
					t.Fatalf("record %d arrived with tenant %q, want %q (all: %v)", n, seen[n], want, seen)
				}
			}
		})
	}
}
