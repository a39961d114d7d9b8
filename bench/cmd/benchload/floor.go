package main

import (
	"fmt"
	"runtime"
	"slices"
	"syscall"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/otlpjson"
)

// runFloor measures the decode floor of p in this process and prints
//
//	floor_check_us_per_item=… floor_full_us_per_item=…
//
// check is otlpdecode.Check* on the protobuf request (the decode alone);
// full is everything the server must do to the request body as it arrives:
// decompress it (otlp-lite's compression package, into a reused buffer),
// transcode it from JSON (otlpjson, into a reused buffer), then Check. For
// an uncompressed protobuf request the two are the same work.
//
// CPU is getrusage(RUSAGE_SELF) user+system time around each loop, so it is
// charged the way the kernel charges a server pinned to the same core. The
// loops allocate nothing in steady state, so there is no garbage collection
// to account for.
func runFloor(cfg config, p payload) error {
	runtime.GOMAXPROCS(1)
	// One call of each decodes every request once.
	items := p.itemsIn(int64(len(p.reqs)))
	check := func() error {
		for _, req := range p.reqs {
			r, err := p.check(req.proto, nil)
			if err == nil && r.Items != req.items {
				err = fmt.Errorf("check saw %d items, want %d", r.Items, req.items)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	var raw, pb []byte
	full := func() error {
		for _, req := range p.reqs {
			if err := fullOne(p, req, &raw, &pb); err != nil {
				return err
			}
		}
		return nil
	}
	// Alternate short loops of the two and take each one's median: on a
	// shared core a neighbour's burst then spoils one loop, not a figure.
	const loops = 5
	var checkUS, fullUS []float64
	for range loops {
		us, err := cpuPerCall(check, cfg.floorTime/loops)
		if err != nil {
			return fmt.Errorf("floor: %w", err)
		}
		checkUS = append(checkUS, us)
		if us, err = cpuPerCall(full, cfg.floorTime/loops); err != nil {
			return fmt.Errorf("floor: %w", err)
		}
		fullUS = append(fullUS, us)
	}
	fmt.Printf("floor_check_us_per_item=%.4f floor_full_us_per_item=%.4f\n",
		median(checkUS)/float64(items), median(fullUS)/float64(items))
	return nil
}

// fullOne is what the server does to one request's body: decompress,
// transcode, Check, into reused buffers.
func fullOne(p payload, req request, raw, pb *[]byte) error {
	body := req.body
	var err error
	if p.codec != compression.Identity {
		if *raw, err = compression.Decompress((*raw)[:0], p.codec, body, 64<<20); err != nil {
			return err
		}
		body = *raw
	}
	if p.json {
		if *pb, err = otlpjson.Unmarshal((*pb)[:0], p.jsonType, body); err != nil {
			return err
		}
		body = *pb
	}
	r, err := p.check(body, nil)
	if err == nil && r.Items != req.items {
		err = fmt.Errorf("full decode saw %d items, want %d", r.Items, req.items)
	}
	return err
}

// cpuPerCall warms fn up, then calls it until at least seconds of process
// CPU time have passed, and returns the CPU µs per call.
func cpuPerCall(fn func() error, seconds float64) (float64, error) {
	for range 3 {
		if err := fn(); err != nil {
			return 0, err
		}
	}
	start := processCPU()
	budget := int64(seconds * 1e9)
	calls := 0
	for {
		// Read the clock every 16 calls: getrusage costs a system call.
		for range 16 {
			if err := fn(); err != nil {
				return 0, err
			}
		}
		calls += 16
		if used := processCPU() - start; used >= budget {
			return float64(used) / 1e3 / float64(calls), nil
		}
	}
}

// processCPU returns the user+system CPU time of the process in ns.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
