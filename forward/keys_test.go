package forward

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

func TestRecordKey(t *testing.T) {
	for _, tc := range []struct {
		segment string
		offset  int64
		key     string
		id      uint64
	}{
		{"00000000000000000001.seg", 8, "L/traces/4294967304", 1<<32 | 8},
		{"00000000000000000007.seg", 1<<32 - 1, "L/traces/34359738367", 7<<32 | (1<<32 - 1)},
		{"00000000000000000007.seg", 1 << 32, "L/traces/7.4294967296", 0}, // does not pack
		{"00000000004294967296.seg", 8, "L/traces/4294967296.8", 0},
		{"00000000000000000000.seg", 0, "L/traces/0.0", 0}, // id 0 is not a stream id
		{"garbage", 8, "", 0},
	} {
		key, id := recordKey(sourceID("L", storage.Traces), tc.segment, tc.offset)
		if key != tc.key || id != tc.id {
			t.Errorf("recordKey(%s, %d) = %q, %d; want %q, %d", tc.segment, tc.offset, key, id, tc.key, tc.id)
		}
	}
	if key, id := recordKey(sourceID("", storage.Traces), "00000000000000000001.seg", 8); key != "" || id != 0 {
		t.Errorf("no log identity: key %q, id %d", key, id)
	}
	// A stream's key is the unary key of the same record.
	key, id := recordKey(sourceID("L", storage.Logs), "00000000000000000003.seg", 100)
	if got := otlp.StreamIdempotencyKey(sourceID("L", storage.Logs), id); got != key {
		t.Errorf("stream key %q, unary key %q", got, key)
	}
}

// keyRecorder remembers, per record number, the idempotency keys it was
// sent with (OTLP/HTTP header, gRPC metadata) and the stream client ids.
type keyRecorder struct {
	mu        sync.Mutex
	keys      map[int][]string
	clientIDs []string
}

func (k *keyRecorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "StreamExporter") {
			k.mu.Lock()
			k.clientIDs = append(k.clientIDs, r.Header.Get(otlp.StreamClientIDHeader))
			k.mu.Unlock()
			h.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		key := r.Header.Get(otlp.IdempotencyKeyHeader) // the same name as the gRPC metadata
		k.mu.Lock()
		n := recordNumber(body)
		k.keys[n] = append(k.keys[n], key)
		k.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	})
}

// TestForwardSendsKeys: each record is sent with a key made of the log's
// identity, the signal and its position, the same when a second run sends
// it again (the resend after a crash); a stream names itself with the
// log's identity and signal; NoIdempotencyKeys sends none. The
// destination, an otlp-lite, stores the keyed runs' records once.
func TestForwardSendsKeys(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	defer st.Close()
	store(t, st, 0, 10)
	logID, err := disk.LogID(dir)
	if err != nil {
		t.Fatal(err)
	}
	source := logID + "/traces"
	for _, scheme := range []string{"grpc://", "http://", "stream://"} {
		t.Run(scheme, func(t *testing.T) {
			kr := &keyRecorder{keys: map[int][]string{}}
			sink, addr := destination(t, kr.wrap)
			for run := range 3 {
				d := mustParse(t, "dst="+scheme+addr+"?signals=traces")
				d.NoCursor = true
				f, err := New(Options{DataDir: dir, Logger: quiet(), Once: true, LazyDeadLetters: true, NoIdempotencyKeys: run == 2}, []Destination{d})
				if err != nil {
					t.Fatal(err)
				}
				<-f.Done()
				f.Close()
			}
			// The destination (otlp-lite's handler, its window of keys on)
			// stored the two keyed runs once, the run without keys again.
			if distinct, total := sink.distinct(); distinct != 10 || total != 20 {
				t.Fatalf("the destination stored %d records (%d distinct), want 20: 10 once for the two keyed runs, 10 for the run without keys", total, distinct)
			}
			kr.mu.Lock()
			defer kr.mu.Unlock()
			if scheme == "stream://" {
				if len(kr.clientIDs) != 3 || kr.clientIDs[0] != source || kr.clientIDs[1] != source || kr.clientIDs[2] != "" {
					t.Fatalf("stream client ids %q, want %q twice then none", kr.clientIDs, source)
				}
				return
			}
			prefix := source + "/"
			if scheme == "http://" {
				prefix = `"` + prefix // a structured-field string
			}
			seen := map[string]bool{}
			for n := range 10 {
				keys := kr.keys[n]
				if len(keys) != 3 || keys[0] != keys[1] || !strings.HasPrefix(keys[0], prefix) || keys[2] != "" {
					t.Fatalf("record %d sent with keys %q: want the same %s/POSITION key twice, then none", n, keys, source)
				}
				if seen[keys[0]] {
					t.Fatalf("two records share the key %s", keys[0])
				}
				seen[keys[0]] = true
			}
		})
	}
}
