package ingest

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/otlp-lite/otlp-lite/otlpdecode"
)

// checkPool runs validation (otlpdecode.Check*) on long-lived goroutines.
//
// net/http serves every request on a fresh goroutine with a small stack;
// the decoder's call depth made each of them grow and copy its stack, which
// cost 15% of server CPU at 100 spans per request (a profile of
// bench/cmd/sidebyside). Workers keep their grown stacks: GOMAXPROCS of
// them for good, so that validation is normally never oversubscribed.
//
// A job never waits for a worker, though: when every worker is busy, run
// starts another (up to maxCheckWorkers), which stays while it finds work
// and exits after checkWorkerIdle without any. A queue in front of a fixed
// set of workers let one client take validation from everyone: a 61 KB
// gzip request of 31 million empty spans costs about 2 s of validation, so
// two of them at a time (at about 61 KB/s) occupied both workers of a
// two-core host, and every other request, however small, waited its turn
// behind them (an honest export took 3.5 s instead of 12 ms). With a worker
// per job in flight the scheduler shares the processors between all of
// them, and the number of jobs in flight is bounded by the admission
// budget, not by this pool.
type checkPool struct {
	jobs chan *checkJob
	// extra counts the workers started beyond the permanent ones.
	extra atomic.Int32
}

// maxCheckWorkers bounds the workers started beyond the permanent ones:
// each keeps the stack the decoder grew it to (under 80 KiB at the default
// AnyValue depth limit, otlpdecode.DefaultMaxAnyValueDepth), so 256 of them
// hold at most about 20 MiB. Past it, a job waits for a worker, as every
// job did before: that takes 256 requests in validation at once, each
// holding a share of the admission budget.
const maxCheckWorkers = 256

// checkWorkerIdle is how long a worker started for a burst waits for
// another job before it exits: long enough to serve the rest of a burst
// without starting again (a start grows a new stack), short enough that a
// burst's goroutines are gone a second after it.
const checkWorkerIdle = time.Second

// checkJob is one validation; it lives in the Ticket so that handing it
// to a worker allocates nothing.
type checkJob struct {
	check func(src []byte, opts *otlpdecode.Options) (otlpdecode.Result, error)
	src   []byte
	opts  *otlpdecode.Options
	res   otlpdecode.Result
	err   error
	done  chan struct{}
	// here runs the validation on the calling goroutine
	// (Ticket.CheckHere).
	here bool
}

// CheckHere makes the ticket's validation run on the goroutine that calls
// Export instead of a check worker, for callers that are long-lived
// goroutines themselves, whose stacks have grown to what the decoder
// needs (package handler's export workers): the hand-off would then cost
// two goroutine switches for nothing. Validation keeps the check pool's
// promise (every job in flight has a goroutine of its own, none waits for
// another's) as long as each such caller serves one request at a time.
// The caller turns it off again before it gives the ticket back.
func (t *Ticket) CheckHere(on bool) { t.check.here = on }

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

// workExtra is a worker started for a burst: it exits when the pool stops
// or after checkWorkerIdle without a job.
func (p *checkPool) workExtra(jobs <-chan *checkJob) {
	defer p.extra.Add(-1)
	idle := time.NewTimer(checkWorkerIdle)
	defer idle.Stop()
	for {
		select {
		case j, ok := <-jobs:
			if !ok {
				return
			}
			j.res, j.err = runCheck(j)
			j.done <- struct{}{}
			idle.Reset(checkWorkerIdle)
		case <-idle.C:
			return
		}
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
	if j.done == nil && !j.here {
		j.done = make(chan struct{}, 1)
	}
	j.check, j.src, j.opts = check, src, opts
	if j.here {
		res, err := runCheck(j)
		j.src = nil
		return res, err
	}
	select {
	case p.jobs <- j: // an idle worker took it
	default:
		// Every worker is busy: start one rather than queue behind
		// them (see checkPool), unless maxCheckWorkers are running.
		if p.extra.Add(1) <= maxCheckWorkers {
			go p.workExtra(p.jobs)
		} else {
			p.extra.Add(-1)
		}
		p.jobs <- j
	}
	<-j.done
	res, err := j.res, j.err
	j.src, j.err = nil, nil
	return res, err
}

// stop ends the workers; the pool must not be used afterwards.
func (p *checkPool) stop() { close(p.jobs) }
