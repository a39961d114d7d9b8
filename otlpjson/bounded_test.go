package otlpjson

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"testing"
)

// zeroBoundsJSON is a MetricsData whose one histogram point has n explicit
// bounds, each "0": two bytes of JSON that are eight of protobuf (a packed
// double), the largest growth a transcoding allows. With n = 15.7 M, 60
// MiB of JSON (61 KB gzipped) became 240 MiB of protobuf.
func zeroBoundsJSON(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"h","histogram":{"dataPoints":[{"explicitBounds":[`)
	b.WriteString(strings.Repeat("0,", n-1))
	b.WriteString(`0]}]}}]}]}]}`)
	return b.Bytes()
}

// chargeLog records UnmarshalBounded's charges.
type chargeLog struct {
	total, calls, largest int
	refuseAt              int // refuse the charge that passes this total (0: never)
}

var errRefused = errors.New("budget refused")

func (c *chargeLog) charge(n int) error {
	if c.refuseAt > 0 && c.total+n > c.refuseAt {
		return errRefused
	}
	c.total += n
	c.calls++
	c.largest = max(c.largest, n)
	return nil
}

// TestUnmarshalBoundedTooLarge: a JSON request whose protobuf form exceeds
// the limit is refused with ErrTooLarge while it is transcoded: the output
// never passes the limit by more than one value, and what was produced was
// charged in steps of ChargeStep. The same request under a limit it fits is
// transcoded as Unmarshal does, and charged exactly once for every byte.
func TestUnmarshalBoundedTooLarge(t *testing.T) {
	js := zeroBoundsJSON(1 << 20) // 2 MiB of JSON, 8 MiB of protobuf
	const limit = 1 << 20
	var c chargeLog
	dst := []byte("prefix")
	out, err := UnmarshalBounded(dst, MetricsData, js, Bound{Max: limit, Charge: c.charge})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	if string(out) != "prefix" {
		t.Fatalf("dst changed on error: %q", out[:min(len(out), 16)])
	}
	// Checked after every element: at most one element (8 bytes) past the
	// limit when it is found, all of it charged except that element.
	if c.total > limit || c.largest > ChargeStep+16 {
		t.Fatalf("charged %d bytes (largest step %d) for a %d-byte limit", c.total, c.largest, limit)
	}
	if c.total < limit-ChargeStep {
		t.Fatalf("charged only %d of the %d bytes produced", c.total, limit)
	}

	// The output grows by doubling: what it allocates on its way to the
	// limit is at most twice the limit (append's quarter steps were five
	// times).
	if !raceEnabled {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, _ = UnmarshalBounded(nil, MetricsData, js, Bound{Max: limit, Charge: c.charge})
		runtime.ReadMemStats(&after)
		if n := after.TotalAlloc - before.TotalAlloc; n > 3*limit {
			t.Fatalf("transcoding to a %d-byte limit allocated %d bytes", limit, n)
		}
	}

	want, err := Unmarshal(nil, MetricsData, js)
	if err != nil {
		t.Fatal(err)
	}
	c = chargeLog{}
	got, err := UnmarshalBounded(nil, MetricsData, js, Bound{Max: len(want), Charge: c.charge})
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("under a limit it fits: err %v, output equal %v", err, bytes.Equal(got, want))
	}
	if c.total != len(want) || c.largest > ChargeStep+16 {
		t.Fatalf("charged %d bytes in steps up to %d for %d bytes of output", c.total, c.largest, len(want))
	}
	if _, err := UnmarshalBounded(nil, MetricsData, js, Bound{Max: len(want) - 1}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("one byte over the limit: err %v", err)
	}
}

// TestUnmarshalBoundedString: a string or bytes value that would pass the
// limit is refused before it is copied, on the fast paths too.
func TestUnmarshalBoundedString(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	for _, js := range []string{
		`{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"` + big + `"}]}]}]}`,
		`{"resourceSpans":[{"resource":{"attributes":[{"key":"k","value":{"stringValue":"` + big + `"}}]}}]}`,
		`{"resourceSpans":[{"resource":{"attributes":[{"key":"` + big + `","value":{"intValue":"1"}}]}}]}`,
		`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"stringValue":"` + big + `"}}]}]}]}`,
	} {
		typ := TracesData
		if strings.HasPrefix(js, `{"resourceLogs"`) {
			typ = LogsData
		}
		var c chargeLog
		_, err := UnmarshalBounded(nil, typ, []byte(js), Bound{Max: 64 << 10, Charge: c.charge})
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("%s: err %v, want ErrTooLarge", js[:40], err)
		}
		if c.total > 64<<10 {
			t.Fatalf("%s: charged %d", js[:40], c.total)
		}
		if _, err := UnmarshalBounded(nil, typ, []byte(js), Bound{Max: 2 << 20}); err != nil {
			t.Fatalf("%s: under the limit: %v", js[:40], err)
		}
	}
}

// TestUnmarshalBoundedStatus: the details of a google.rpc.Status, which
// repeat keys at will, are bounded too.
func TestUnmarshalBoundedStatus(t *testing.T) {
	v := `{"field":"` + strings.Repeat("f", 1000) + `"}`
	js := `{"code":3,"details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[` +
		strings.Repeat(v+",", 999) + v + `]}]}`
	if _, err := UnmarshalBounded(nil, Status, []byte(js), Bound{Max: 100 << 10}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err %v, want ErrTooLarge", err)
	}
	if _, err := UnmarshalBounded(nil, Status, []byte(js), Bound{Max: 2 << 20}); err != nil {
		t.Fatal(err)
	}
}

// TestUnmarshalBoundedChargeRefused: a refusal of the charge stops the
// transcoding and is returned as is.
func TestUnmarshalBoundedChargeRefused(t *testing.T) {
	c := chargeLog{refuseAt: 3 * ChargeStep}
	_, err := UnmarshalBounded(nil, MetricsData, zeroBoundsJSON(1<<18), Bound{Charge: c.charge})
	if !errors.Is(err, errRefused) {
		t.Fatalf("err %v, want the charge's error", err)
	}
	if c.total > 3*ChargeStep {
		t.Fatalf("charged %d past the refusal", c.total)
	}
}

// TestUnmarshalBoundedAllocs: the bound costs no allocation.
func TestUnmarshalBoundedAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	var c chargeLog
	charge := c.charge
	for _, tc := range marshalCases() {
		if tc.t == Status {
			continue
		}
		js := []byte(tc.want)
		dst := make([]byte, 0, 64<<10)
		if n := testing.AllocsPerRun(100, func() {
			var err error
			if dst, err = UnmarshalBounded(dst[:0], tc.t, js, Bound{Max: 64 << 20, Charge: charge}); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s: UnmarshalBounded allocates %v times per run", tc.name, n)
		}
	}
}

// BenchmarkUnmarshalBounded is BenchmarkUnmarshal as the receiver calls
// it: bounded by the 64 MiB limit and charged to a budget.
func BenchmarkUnmarshalBounded(b *testing.B) {
	for _, p := range benchPayloads {
		b.Run(p.file[len("../testdata/otlp/"):], func(b *testing.B) {
			js, err := Marshal(nil, p.t, readBenchPayload(b, p.file))
			if err != nil {
				b.Fatal(err)
			}
			pb, err := Unmarshal(nil, p.t, js)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(js)))
			b.ReportAllocs()
			b.RunParallel(func(p2 *testing.PB) {
				var c chargeLog
				bound := Bound{Max: 64 << 20, Charge: c.charge}
				dst := make([]byte, 0, cap(pb))
				for p2.Next() {
					dst, _ = UnmarshalBounded(dst[:0], p.t, js, bound)
				}
			})
		})
	}
}
