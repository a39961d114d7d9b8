package handler

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otlp-lite/otlp-lite/ingest"
)

// exportWorkers run the pipeline's work of unary gRPC exports
// (ingest.Pipeline.Export: admission, validation, the sink's write) on
// long-lived goroutines.
//
// net/http serves each request on a fresh goroutine whose stack starts at
// the process's average goroutine stack, a few KiB; the call depth of a
// unary export down to the hand-off to a check worker made it grow and
// copy its stack on every request: runtime.newstack was 6-8% of the
// server's CPU at 100 spans per request (bench/cmd/sidebyside profile). A
// worker keeps the stack it grew, and validates on it
// (ingest.Ticket.CheckHere) rather than handing the request on to a check
// worker, so a request still pays one hand-off and one wake-up, as it did
// for validation alone, from a shallower depth.
//
// The request is read and its response written on net/http's goroutine,
// not here: a request whose body stalls, or whose response its client
// does not read, holds that goroutine alone, as before, and no worker
// (cmd/otlp-lite TestHostileStalledStreamFlood and
// TestHostileUnreadResponses measure what each holds).
//
// There are at most maxExportWorkers, started when first needed and gone
// after exportWorkerIdle without a job. A request never waits for one:
// when none is idle and no more may start, it runs Export on its own
// goroutine, handing validation to the check pool, as before. So a burst
// costs no more memory than it did (with a worker per request in flight,
// each with a stack grown for validation, TestHostileUnreadResponses
// measured 3-5 KiB more per request), while the steady state, a few
// requests in flight per processor, runs on workers.
type exportWorkers struct {
	jobs chan *exportJob
	live atomic.Int32 // workers running
	max  int32        // maxExportWorkers()
	// pool holds idle exportJobs. It is the workers' own, not the
	// package's: a job's done channel belongs to the testing/synctest
	// bubble it was made in, and one made in a bubble and reused outside
	// it is a fatal error, so a Handler made in a bubble must not leave
	// its jobs to the others.
	pool sync.Pool
}

// maxExportWorkers bounds the workers: two per processor, so that the
// requests a processor has in flight (one in Export, one being read or
// answered) find one idle. Each keeps the stack validation grew it to,
// under 80 KiB at the default AnyValue depth limit, so they hold at most
// about 160 KiB per processor.
func maxExportWorkers() int32 { return int32(2 * runtime.GOMAXPROCS(0)) }

// exportWorkerIdle is how long a worker waits for another job before it
// exits: long enough to serve a busy client's next requests without
// growing a new stack, short enough that the goroutines are gone a second
// after the load.
const exportWorkerIdle = time.Second

// exportJob is one Export handed to a worker; jobs are pooled
// (exportWorkers.pool), so the hand-off allocates nothing.
type exportJob struct {
	p        *ingest.Pipeline
	ctx      context.Context
	req      ingest.Request
	res      ingest.Result
	err      error
	panicked any
	// goexit is set when Export called runtime.Goexit on the worker
	// (a sink's t.FailNow in a test): the caller does the same, so the
	// request is not answered OK with nothing stored.
	goexit bool
	done   chan struct{}
}

func newExportWorkers() *exportWorkers {
	ws := &exportWorkers{jobs: make(chan *exportJob), max: maxExportWorkers()}
	ws.pool.New = func() any { return &exportJob{done: make(chan struct{}, 1)} }
	return ws
}

// export is p.Export(ctx, req): on a worker, validation included, when
// one is idle or may start; else on the caller's goroutine. A panic on a
// worker is raised again here, on the caller's goroutine, so that
// net/http handles it as it would have.
func (ws *exportWorkers) export(p *ingest.Pipeline, ctx context.Context, req ingest.Request) (ingest.Result, error) {
	j := ws.pool.Get().(*exportJob)
	j.p, j.ctx, j.req = p, ctx, req
	req.Ticket.CheckHere(true)
	select {
	case ws.jobs <- j: // an idle worker took it
	default:
		if ws.live.Add(1) > ws.max {
			ws.live.Add(-1)
			req.Ticket.CheckHere(false)
			*j = exportJob{done: j.done}
			ws.pool.Put(j)
			return p.Export(ctx, req)
		}
		go ws.work(j)
	}
	<-j.done
	req.Ticket.CheckHere(false)
	res, err, panicked, goexit := j.res, j.err, j.panicked, j.goexit
	*j = exportJob{done: j.done}
	ws.pool.Put(j)
	if goexit {
		runtime.Goexit()
	}
	if panicked != nil {
		panic(panicked)
	}
	return res, err
}

// work runs j, then the jobs it is given, until it has none for
// exportWorkerIdle.
func (ws *exportWorkers) work(j *exportJob) {
	defer ws.live.Add(-1)
	var idle *time.Timer
	for {
		j.run()
		if idle == nil {
			idle = time.NewTimer(exportWorkerIdle)
		} else {
			idle.Reset(exportWorkerIdle)
		}
		select {
		case j = <-ws.jobs:
		case <-idle.C:
			return
		}
	}
}

// run runs j's Export and hands back its result, its panic, or its
// runtime.Goexit (which also ends the worker).
func (j *exportJob) run() {
	returned := false
	defer func() {
		if !returned {
			switch p := recover(); p {
			case nil:
				j.goexit = true
			case http.ErrAbortHandler:
				// net/http's own "abort quietly": raised
				// again as is, so it stays unlogged.
				j.panicked = p
			default:
				j.panicked = &workerPanic{value: p, stack: debug.Stack()}
			}
		}
		j.done <- struct{}{}
	}()
	j.res, j.err = j.p.Export(j.ctx, j.req)
	returned = true
}

// workerPanic is a panic on an export worker, with the worker's stack
// (the one net/http logs is its own goroutine's, which only waited).
type workerPanic struct {
	value any
	stack []byte
}

func (p *workerPanic) String() string {
	return fmt.Sprintf("%v (on an export worker)\n%s", p.value, p.stack)
}
