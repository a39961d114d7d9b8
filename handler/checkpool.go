package handler

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/otlp-lite/otlp-lite/otlpdecode"
)

// checkPool runs validation (otlpdecode.Check*) on long-lived goroutines.
//
// net/http serves every request on a fresh goroutine with a small stack;
// the decoder's call depth made each of them grow and copy its stack, which
// cost 15% of server CPU at 100 spans per request (a profile of
// bench/cmd/sidebyside). Workers keep their grown stacks, and since there
// are GOMAXPROCS of them, validation is also never oversubscribed: a burst
// of requests queues here instead of thrashing the scheduler.
type checkPool struct {
	jobs chan *checkJob
}

// checkJob is one validation; it lives in requestBuffers so that handing it
// to a worker allocates nothing.
type checkJob struct {
	check func(src []byte, opts *otlpdecode.Options) (otlpdecode.Result, error)
	src   []byte
	opts  *otlpdecode.Options
	res   otlpdecode.Result
	err   error
	done  chan struct{}
}

func newCheckPool() *checkPool {
	p := &checkPool{jobs: make(chan *checkJob)}
	for range runtime.GOMAXPROCS(0) {
		go p.work(p.jobs)
	}
	return p
}

func (p *checkPool) work(jobs <-chan *checkJob) {
	for j := range jobs {
		j.res, j.err = runCheck(j)
		j.done <- struct{}{}
	}
}

// runCheck runs one validation, turning a panic into a *decoderPanic
// error: a decoder bug must fail the one request that found it (INTERNAL,
// with the stack logged), not end the process with every client's data in
// flight. The recover is deferred per job, which costs a few nanoseconds.
func runCheck(j *checkJob) (res otlpdecode.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &decoderPanic{value: r, stack: debug.Stack()}
		}
	}()
	return j.check(j.src, j.opts)
}

// decoderPanic is a panic inside a decoder, recovered.
type decoderPanic struct {
	value any
	stack []byte
}

func (e *decoderPanic) Error() string {
	return fmt.Sprintf("decoder panicked: %v", e.value)
}

// run validates src on a worker and returns the result.
func (p *checkPool) run(j *checkJob, check func([]byte, *otlpdecode.Options) (otlpdecode.Result, error), src []byte, opts *otlpdecode.Options) (otlpdecode.Result, error) {
	if j.done == nil {
		j.done = make(chan struct{}, 1)
	}
	j.check, j.src, j.opts = check, src, opts
	p.jobs <- j
	<-j.done
	res, err := j.res, j.err
	j.src, j.err = nil, nil
	return res, err
}

// stop ends the workers; the pool must not be used afterwards.
func (p *checkPool) stop() { close(p.jobs) }
