package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/otlp-lite/otlp-lite/compression"
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
	err     error            // first fatal error
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

func (p *streamPending) position() disk.Position {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.handled
}

// replaySignalStream replays one signal over otlplite.v1.StreamExporter:
// records are pipelined on one stream and acknowledged out of order; the
// exporter resends what a rotated or broken stream left unacknowledged and
// retries FailedRetryable after the server's delay.
func replaySignalStream(ctx context.Context, cfg replayConfig, sig storage.Signal, counts *replayCounts, stderr io.Writer) error {
	signal, err := otlpclient.ParseSignal(sig.String())
	if err != nil {
		return err
	}
	ccfg := otlpclient.Config{Endpoint: cfg.endpoint, TLS: replayTLS(cfg), Signal: signal, RequestTimeout: -1}
	if cfg.compression == "gzip" {
		ccfg.Compression = compression.Gzip
	}
	exp := otlpclient.NewStreamExporter(otlpclient.StreamConfig{Config: ccfg, MaxPending: replayStreamMaxPending})

	var consumer *disk.Consumer
	var reader *disk.Reader
	next := func() (disk.Record, disk.Position, error) {
		if consumer != nil {
			rec, err := consumer.Next()
			return rec, consumer.Position(), err
		}
		rec, err := reader.Next()
		return rec, reader.Position(), err
	}
	var pending streamPending
	commit := func() error { return nil }
	if cfg.cursor != "" {
		if consumer, err = disk.OpenConsumer(cfg.dataDir, cfg.cursor, sig); err != nil {
			return err
		}
		defer consumer.Close()
		pending.handled = consumer.Committed()
		commit = func() error {
			if err := consumer.CommitTo(pending.position()); err != nil {
				return fmt.Errorf("%s: %w", sig, err)
			}
			return nil
		}
	} else {
		reader = disk.NewReader(cfg.dataDir, sig, disk.Position{})
		defer reader.Close()
	}

	var wg sync.WaitGroup
	finish := func() error {
		// Wait for every record in flight (bounded by the caller's
		// context), then persist how far we got.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		exp.Close(cctx)
		wg.Wait()
		return commit()
	}
	lastCommit := time.Now()
	for {
		if time.Since(lastCommit) >= replayCommitEvery {
			if err := commit(); err != nil {
				finish()
				return err
			}
			lastCommit = time.Now()
		}
		rec, pos, err := next()
		if err == io.EOF {
			if !cfg.follow || !sleepCtx(ctx, followPoll) {
				return finish()
			}
			continue
		}
		if errors.Is(err, disk.ErrCorrupt) {
			counts.damaged.Add(1)
			fmt.Fprintf(stderr, "replay: %s: skipped damaged data: %v\n", sig, err)
			continue
		}
		if err != nil {
			finish()
			return fmt.Errorf("%s: %w", sig, err)
		}
		data := bytes.Clone(rec.Data) // the exporter keeps it until acknowledged
		items := int64(rec.Items)
		where := fmt.Sprintf("%s:%d", rec.Segment, rec.Offset)
		pr := pending.add(pos)
		wg.Add(1)
		err = exp.Send(ctx, data, func(err error) {
			defer wg.Done()
			var re *otlpclient.RequestError
			switch {
			case err == nil:
				counts.records.Add(1)
				counts.items.Add(items)
			case errors.As(err, &re):
				counts.failed.Add(1)
				fmt.Fprintf(stderr, "replay: %s: record at %s refused for good, skipped: %v\n", sig, where, err)
			default:
				// Dropped or the exporter closed: not delivered, so the
				// cursor must not pass it.
				return
			}
			pending.finish(pr)
		})
		if err != nil {
			wg.Done()
			if ctx.Err() != nil {
				return finish()
			}
			finish()
			return fmt.Errorf("%s: cannot send record at %s: %w", sig, where, err)
		}
	}
}
