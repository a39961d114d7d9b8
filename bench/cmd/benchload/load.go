package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// runLoad sends cfg.requests requests of p with the configured protocol
// and prints the summary line the side-by-side driver parses.
func runLoad(cfg config, p payload) error {
	var send func(requests int) error
	switch cfg.protocol {
	case "grpc":
		c, err := newGRPCClient(cfg, p)
		if err != nil {
			return err
		}
		defer c.close()
		send = func(n int) error { return parallel(n, cfg.concurrency, c.export) }
	case "grpc-stream":
		c, err := newGRPCClient(cfg, p)
		if err != nil {
			return err
		}
		defer c.close()
		send = func(n int) error { return c.stream(n, cfg.concurrency) }
	default:
		c := newHTTPClient(cfg, p)
		defer c.close()
		send = func(n int) error { return parallel(n, cfg.concurrency, c.export) }
	}
	start := time.Now()
	if err := send(cfg.requests); err != nil {
		return err
	}
	elapsed := time.Since(start)
	n := p.itemsIn(int64(cfg.requests))
	var bytes int64
	for i := range int64(cfg.requests) {
		bytes += int64(len(p.at(i).body))
	}
	fmt.Printf("requests=%d items=%d bytes_per_request=%d seconds=%.3f items_per_second=%.0f\n",
		cfg.requests, n, bytes/int64(max(cfg.requests, 1)), elapsed.Seconds(), float64(n)/elapsed.Seconds())
	return nil
}

// parallel calls export requests times from concurrency goroutines and
// returns the first error, after which no new call starts.
func parallel(requests, concurrency int, export func(i int64) error) error {
	var next atomic.Int64
	var failed atomic.Bool
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
			for i := next.Add(1); !failed.Load() && i <= int64(requests); i = next.Add(1) {
				if err := export(i - 1); err != nil {
					once.Do(func() { firstErr = err })
					failed.Store(true)
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return fmt.Errorf("export failed: %w", firstErr)
	}
	return nil
}
