package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/otlp-lite/otlp-lite/forward"
	"github.com/otlp-lite/otlp-lite/internal/wait"
	"github.com/otlp-lite/otlp-lite/otlpclient"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// replayStreamMaxPending is how many records one signal keeps in flight on
// its stream: enough to fill a WAN link, few enough that a restart resends
// little.
const replayStreamMaxPending = 256

// streamPending tracks records sent on a stream (forward.Window: the
// cursor only ever moves past a contiguous run of acknowledged records,
// since acks come out of order and a crash must not skip a record still in
// flight) and the first record this run will not deliver.
type streamPending struct {
	*forward.Window
	mu  sync.Mutex
	err error // the first outcome that is neither delivery nor refusal
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
	ccfg := otlpclient.Config{Endpoint: cfg.endpoint, TLS: cfg.client.tls, Signal: sig, RequestTimeout: -1, AttemptTimeout: cfg.timeout, Compression: cfg.client.codec,
		HTTP: cfg.client.wrap(otlpclient.NewHTTPClient(cfg.client.tls, 0, 0))}
	exp := otlpclient.NewStreamExporter(otlpclient.StreamConfig{Config: ccfg, MaxPending: replayStreamMaxPending})
	counts.exporter.Store(exp)

	pending := streamPending{Window: forward.NewWindow(src.Position())}
	commit := func() error {
		if err := src.CommitTo(pending.Position()); err != nil {
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
		if n := pending.Unfinished(); n > 0 {
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
			if !cfg.follow || !wait.For(ctx, followPoll) {
				return end(nil)
			}
			continue
		}
		if errors.Is(err, disk.ErrCorrupt) {
			counts.damaged.Add(1)
			fmt.Fprintf(stderr, "replay: %s: skipped damaged data: %v\n", sig, err)
			// Nothing to acknowledge: the cursor may pass the region
			// once the records before it are.
			pending.Finish(pending.Add(src.Position(), time.Time{}))
			continue
		}
		if g, ok := errors.AsType[*disk.GapError](err); ok {
			counts.noteGap(stderr, sig, g)
			pending.Finish(pending.Add(src.Position(), time.Time{}))
			continue
		}
		if err != nil {
			return end(fmt.Errorf("%s: %w", sig, err))
		}
		data := bytes.Clone(rec.Data) // the exporter keeps it until acknowledged
		items := int64(rec.Items)
		where := fmt.Sprintf("%s:%d", rec.Segment, rec.Offset)
		pr := pending.Add(src.Position(), rec.Time)
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
			case otlpclient.RefusesClient(err):
				// The target refuses us, not this record: stop, and
				// keep the cursor before it.
				pending.abandon(targetRefusal(where, err))
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
			pending.Finish(pr)
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
