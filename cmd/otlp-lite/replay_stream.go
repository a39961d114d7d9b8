package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/otlp-lite/otlp-lite/otlpclient"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// replayStreamMaxPending is how many records one signal keeps in flight on
// its stream: enough to fill a WAN link, few enough that a restart resends
// little.
const replayStreamMaxPending = 256

// streamPending tracks records sent on a stream, in log order, so that the
// cursor only ever moves past a contiguous run of acknowledged records: acks
// come out of order, and a crash must not skip a record that was still in
// flight.
type streamPending struct {
	mu      sync.Mutex
	queue   []*pendingRecord // in log order
	handled disk.Position    // everything before it is acknowledged
	err     error            // the first outcome that is neither delivery nor refusal
}

type pendingRecord struct {
	next disk.Position // position after this record
	done bool
}

func (p *streamPending) add(next disk.Position) *pendingRecord {
	r := &pendingRecord{next: next}
	p.mu.Lock()
	p.queue = append(p.queue, r)
	p.mu.Unlock()
	return r
}

func (p *streamPending) finish(r *pendingRecord) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r.done = true
	n := 0
	for n < len(p.queue) && p.queue[n].done {
		p.handled = p.queue[n].next
		n++
	}
	p.queue = p.queue[n:]
}

// abandon records that a record will not be delivered by this run.
func (p *streamPending) abandon(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = err
	}
}

func (p *streamPending) abandoned() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

func (p *streamPending) position() disk.Position {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.handled
}

// left counts the records sent and neither delivered nor refused.
func (p *streamPending) left() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, r := range p.queue {
		if !r.done {
			n++
		}
	}
	return n
}

// afterStop returns a context that ends replayStopGrace after ctx does.
func afterStop(ctx context.Context) (context.Context, context.CancelFunc) {
	g, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(replayStopGrace, cancel) })
	return g, func() { stop(); cancel() }
}

// replaySignalStream replays one signal over otlplite.v1.StreamExporter:
// records are pipelined on one stream and acknowledged out of order; the
// exporter resends what a rotated or broken stream left unacknowledged,
// retries FailedRetryable after the server's delay, and fails alone a record
// over the receiver's message limit.
func replaySignalStream(ctx context.Context, cfg replayConfig, sig storage.Signal, counts *replayCounts, stderr io.Writer) error {
	src, err := openReplaySource(cfg, sig)
	if err != nil {
		return err
	}
	defer src.Close()
	ccfg := otlpclient.Config{Endpoint: cfg.endpoint, TLS: cfg.client.tls, Signal: sig, RequestTimeout: -1, Compression: cfg.client.codec,
		HTTP: cfg.client.wrap(otlpclient.NewHTTPClient(cfg.client.tls, 0, 0))}
	exp := otlpclient.NewStreamExporter(otlpclient.StreamConfig{Config: ccfg, MaxPending: replayStreamMaxPending})
	counts.exporter.Store(exp)

	var pending streamPending
	pending.handled = src.Position()
	commit := func() error {
		if err := src.CommitTo(pending.position()); err != nil {
			return fmt.Errorf("%s: %w", sig, err)
		}
		return nil
	}
	var wg sync.WaitGroup
	// end waits for every record in flight, for as long as the replay
	// runs and replayStopGrace after it is stopped (retrying, like the
	// unary protocols, while the receiver is down), persists how far the
	// acknowledgements got, and reports what is left.
	end := func(err error) error {
		cctx, cancel := afterStop(ctx)
		defer cancel()
		exp.Close(cctx)
		wg.Wait()
		errs := []error{err, commit()}
		if n := pending.left(); n > 0 {
			errs = append(errs, stoppedError(cfg, sig, fmt.Sprintf("%d records not acknowledged", n)))
		}
		return errors.Join(errs...)
	}
	lastCommit := time.Now()
	for {
		if err := pending.abandoned(); err != nil {
			// The cursor cannot pass that record: sending more would
			// only be sent again by the next run.
			return end(fmt.Errorf("%s: %w", sig, err))
		}
		if time.Since(lastCommit) >= replayCommitEvery {
			if err := commit(); err != nil {
				return end(err)
			}
			lastCommit = time.Now()
		}
		rec, err := src.Next()
		if err == io.EOF {
			if !cfg.follow || !sleepCtx(ctx, followPoll) {
				return end(nil)
			}
			continue
		}
		if errors.Is(err, disk.ErrCorrupt) {
			counts.damaged.Add(1)
			fmt.Fprintf(stderr, "replay: %s: skipped damaged data: %v\n", sig, err)
			// Nothing to acknowledge: the cursor may pass the region
			// once the records before it are.
			pending.finish(pending.add(src.Position()))
			continue
		}
		if err != nil {
			return end(fmt.Errorf("%s: %w", sig, err))
		}
		data := bytes.Clone(rec.Data) // the exporter keeps it until acknowledged
		items := int64(rec.Items)
		where := fmt.Sprintf("%s:%d", rec.Segment, rec.Offset)
		pr := pending.add(src.Position())
		wg.Add(1)
		sent := time.Now()
		err = exp.Send(ctx, data, func(err error) {
			defer wg.Done()
			if err != nil && ctx.Err() == nil {
				cfg.rec.refusal(err)
			}
			var re *otlpclient.RequestError
			switch {
			case err == nil:
				cfg.rec.delivered(len(data), time.Since(sent))
				counts.records.Add(1)
				counts.items.Add(items)
			case errors.As(err, &re) && re.Stream != nil && refusesEveryRecord(re.Stream.Code, 0):
				// The target refuses us, not this record: stop, and
				// keep the cursor before it.
				pending.abandon(targetRefusal(where, re.Stream))
				return
			case errors.As(err, &re):
				counts.failed.Add(1)
				fmt.Fprintf(stderr, "replay: %s: record at %s refused for good, skipped: %v\n", sig, where, err)
			default:
				// Not delivered (the exporter closed, or cannot reach
				// the receiver at all): the cursor must not pass it.
				if !errors.Is(err, otlpclient.ErrClosed) {
					pending.abandon(fmt.Errorf("record at %s not delivered: %w", where, err))
				}
				return
			}
			pending.finish(pr)
		})
		if err != nil {
			wg.Done()
			if ctx.Err() != nil {
				return end(nil)
			}
			return end(fmt.Errorf("%s: cannot send record at %s: %w", sig, where, err))
		}
	}
}
