package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/bits"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlpclient"
)

// The summary that loadgen and replay print when they end: what was sent
// and acknowledged, the rates, the latency percentiles, the refusals by
// reason and the retries; as text for a person, and as JSON with
// -summary-json.

// latencyHistogram counts durations in log-linear buckets: exact below
// 16µs, then 16 buckets per power of two, so a percentile read from it is
// at most 1/16 (6%) above the true value, in fixed memory (latencyBuckets
// counters, 4.6 KiB) however many requests are recorded. Safe for
// concurrent use.
type latencyHistogram struct {
	counts [latencyBuckets]atomic.Uint64
	n      atomic.Uint64
	max    atomic.Int64 // nanoseconds, exact
}

// latencyBuckets covers 0 to 2^40µs (12 days); longer is counted in the
// last bucket, whose percentiles are the maximum.
const latencyBuckets = 16 + 36*16

func latencyBucket(us uint64) int {
	if us < 16 {
		return int(us)
	}
	shift := bits.Len64(us) - 5 // us>>shift is in [16, 32)
	return min(16+shift*16+int(us>>shift)-16, latencyBuckets-1)
}

// latencyUpper is the largest duration counted in bucket i.
func latencyUpper(i int) time.Duration {
	if i < 16 {
		return time.Duration(i) * time.Microsecond
	}
	shift := (i - 16) / 16
	m := uint64(16 + (i-16)%16)
	return time.Duration((m+1)<<shift-1) * time.Microsecond
}

func (h *latencyHistogram) record(d time.Duration) {
	d = max(d, 0)
	h.counts[latencyBucket(uint64(d/time.Microsecond))].Add(1)
	h.n.Add(1)
	for {
		m := h.max.Load()
		if int64(d) <= m || h.max.CompareAndSwap(m, int64(d)) {
			return
		}
	}
}

// quantile returns the duration that a fraction q of the recorded ones do
// not exceed: the upper bound of its bucket, never above the maximum.
func (h *latencyHistogram) quantile(q float64) time.Duration {
	n := h.n.Load()
	if n == 0 {
		return 0
	}
	rank := uint64(q*float64(n) + 0.999999)
	rank = min(max(rank, 1), n)
	var seen uint64
	for i := range h.counts {
		if seen += h.counts[i].Load(); seen >= rank && i < latencyBuckets-1 {
			return min(latencyUpper(i), time.Duration(h.max.Load()))
		}
	}
	return time.Duration(h.max.Load())
}

// refusal is one reason requests were refused or failed, how often, and
// the message of the last one.
type refusal struct {
	Reason string `json:"reason"`
	Count  int64  `json:"count"`
	Last   string `json:"last_message"`
}

// clientRecorder collects, while requests run, what the summary needs
// beyond the exporters' counters. Safe for concurrent use.
type clientRecorder struct {
	latency latencyHistogram
	bytes   atomic.Int64 // request bytes acknowledged, uncompressed
	mu      sync.Mutex
	refused map[string]*refusal
}

// delivered records an acknowledged request of size bytes that took took
// from its first send to its acknowledgement, retries included.
func (r *clientRecorder) delivered(size int, took time.Duration) {
	r.bytes.Add(int64(size))
	r.latency.record(took)
}

// refusal records a refused attempt or a failed request by reason.
// Interruptions are not refusals and are not recorded.
func (r *clientRecorder) refusal(err error) {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, otlpclient.ErrClosed) {
		return
	}
	reason, msg := refusalReason(err)
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	msg = strings.Join(strings.Fields(msg), " ") // one line
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refused == nil {
		r.refused = map[string]*refusal{}
	}
	f := r.refused[reason]
	if f == nil {
		f = &refusal{Reason: reason}
		r.refused[reason] = f
	}
	f.Count++
	f.Last = msg
}

// refusals returns how many refusals were recorded.
func (r *clientRecorder) refusals() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var n int64
	for _, f := range r.refused {
		n += f.Count
	}
	return n
}

// refusalReason names what refused a request: a gRPC status code, an HTTP
// status, a stream acknowledgement's result code, the client giving up, or
// the transport.
func refusalReason(err error) (reason, msg string) {
	var re *otlpclient.RequestError
	var hr *otlpclient.HTTPError
	if errors.Is(err, otlpclient.ErrDropped) {
		return "dropped: not acknowledged within the request timeout", err.Error()
	}
	if errors.As(err, &re) && re.Stream != nil {
		err = re.Stream
	}
	if st, ok := errors.AsType[*grpcwire.Status](err); ok {
		return "gRPC " + st.Code.String(), st.Message
	}
	switch {
	case errors.As(err, &hr):
		return fmt.Sprintf("HTTP %d", hr.StatusCode), cmp.Or(hr.Message, hr.Status)
	case errors.As(err, &re):
		// A stream acknowledgement's result code (otlplite.v1 Ack) is
		// the message's first word; a request over the receiver's size
		// limit fails alone.
		if code, rest, ok := strings.Cut(re.Message, ": "); ok && code == strings.ToUpper(code) && !strings.Contains(code, " ") {
			return "stream " + code, rest
		}
		if strings.Contains(re.Message, "too large") {
			return "stream: request too large for the receiver", re.Message
		}
		return "stream: refused", re.Message
	case errors.Is(err, otlpclient.ErrStreamBroken):
		return "stream broken", err.Error()
	}
	return "transport", describeSendError(err, "")
}

// clientSummary is the summary of a run, for -summary-json and the text.
type clientSummary struct {
	Command        string    `json:"command"`
	Endpoint       string    `json:"endpoint"`
	Seconds        float64   `json:"seconds"`
	Requests       int64     `json:"requests"` // handed to the client: acknowledged + failed + dropped
	Acknowledged   int64     `json:"acknowledged"`
	Failed         int64     `json:"failed"`  // refused for good
	Dropped        int64     `json:"dropped"` // given up: not acknowledged in time, or interrupted
	Items          int64     `json:"items"`   // in acknowledged requests
	RejectedItems  int64     `json:"rejected_items"`
	Bytes          int64     `json:"bytes"` // of acknowledged requests, uncompressed protobuf
	ItemsPerSec    float64   `json:"items_per_second"`
	MBPerSec       float64   `json:"mb_per_second"` // 10^6 bytes
	RequestsPerSec float64   `json:"requests_per_second"`
	Latency        latencyMS `json:"latency_ms"`
	Retries        int64     `json:"retries"`
	Refusals       []refusal `json:"refusals"`
	// LostRecords (replay) were deleted by retention before they could be
	// sent (disk.GapError); a gap of unknown size counts none.
	LostRecords int64 `json:"lost_records,omitempty"`
}

// latencyMS are the percentiles of the time from a request's first send to
// its acknowledgement, retries included, in milliseconds.
type latencyMS struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

// summary fills in what r recorded: bytes, latency, refusals, and the
// rates over elapsed.
func (r *clientRecorder) summary(s clientSummary, elapsed time.Duration) clientSummary {
	s.Seconds = elapsed.Seconds()
	s.Bytes = r.bytes.Load()
	if sec := elapsed.Seconds(); sec > 0 {
		s.ItemsPerSec = float64(s.Items) / sec
		s.MBPerSec = float64(s.Bytes) / 1e6 / sec
		s.RequestsPerSec = float64(s.Acknowledged) / sec
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	s.Latency = latencyMS{Count: int64(r.latency.n.Load()), P50: ms(r.latency.quantile(.5)), P90: ms(r.latency.quantile(.9)),
		P99: ms(r.latency.quantile(.99)), Max: ms(time.Duration(r.latency.max.Load()))}
	r.mu.Lock()
	s.Refusals = make([]refusal, 0, len(r.refused))
	for _, f := range r.refused {
		s.Refusals = append(s.Refusals, *f)
	}
	r.mu.Unlock()
	slices.SortFunc(s.Refusals, func(a, b refusal) int {
		if a.Count != b.Count {
			return int(b.Count - a.Count)
		}
		return strings.Compare(a.Reason, b.Reason)
	})
	return s
}

// writeText prints the summary for a person, after the command's own
// headline.
func (s *clientSummary) writeText(w io.Writer) {
	fmt.Fprintf(w, "  requests:  %d sent to %s in %.2fs: %d acknowledged, %d refused for good, %d dropped\n",
		s.Requests, s.Endpoint, s.Seconds, s.Acknowledged, s.Failed, s.Dropped)
	rejected := ""
	if s.RejectedItems > 0 {
		rejected = fmt.Sprintf(" (%d of them rejected by the receiver)", s.RejectedItems)
	}
	fmt.Fprintf(w, "  delivered: %d items%s, %.1f MB (uncompressed protobuf)\n", s.Items, rejected, float64(s.Bytes)/1e6)
	fmt.Fprintf(w, "  rate:      %.0f items/s, %.2f MB/s, %.1f requests/s\n", s.ItemsPerSec, s.MBPerSec, s.RequestsPerSec)
	if s.Latency.Count > 0 {
		fmt.Fprintf(w, "  latency:   p50 %s, p90 %s, p99 %s, max %s (of %d acknowledged requests, first send to acknowledgement)\n",
			fmtMS(s.Latency.P50), fmtMS(s.Latency.P90), fmtMS(s.Latency.P99), fmtMS(s.Latency.Max), s.Latency.Count)
	} else {
		fmt.Fprintln(w, "  latency:   none measured (nothing was acknowledged)")
	}
	fmt.Fprintf(w, "  retries:   %d\n", s.Retries)
	if s.LostRecords > 0 {
		fmt.Fprintf(w, "  lost:      %d records deleted by retention before they were sent\n", s.LostRecords)
	}
	if len(s.Refusals) == 0 {
		fmt.Fprintln(w, "  refusals:  none")
		return
	}
	fmt.Fprintln(w, "  refusals:  by reason, with the last message")
	for _, f := range s.Refusals {
		fmt.Fprintf(w, "    %-28s %6d  %q\n", f.Reason, f.Count, f.Last)
	}
}

func fmtMS(ms float64) string {
	switch {
	case ms >= 1000:
		return fmt.Sprintf("%.2fs", ms/1000)
	case ms >= 10:
		return fmt.Sprintf("%.0fms", ms)
	}
	return fmt.Sprintf("%.2fms", ms)
}

// summaryFlag registers -summary-json.
func summaryFlag(fs *flag.FlagSet) *string {
	return fs.String("summary-json", "", "also write the final summary as one JSON object to this file; - writes it to stdout instead of the text summary")
}

// printSummary writes the summary: the headline and the text on stdout,
// unless jsonPath is "-", and the JSON to jsonPath if it is set.
func printSummary(stdout io.Writer, jsonPath, headline string, s clientSummary) error {
	if jsonPath != "-" {
		fmt.Fprintln(stdout, headline)
		s.writeText(stdout)
	}
	if jsonPath == "" {
		return nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("cannot encode the summary: %w", err)
	}
	b = append(b, '\n')
	if jsonPath == "-" {
		_, err = stdout.Write(b)
		return err
	}
	if err := os.WriteFile(jsonPath, b, 0o644); err != nil {
		return fmt.Errorf("cannot write -summary-json: %w", err)
	}
	return nil
}
