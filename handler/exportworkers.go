package handler

import (
	"fmt"
	"net/http"
	"runtime/debug"
	"sync"
	"time"
)

// exportWorkers serve unary gRPC exports on long-lived goroutines.
//
// net/http serves each request on a fresh goroutine whose stack starts at
// the process's average goroutine stack, a few KiB; a unary export's call
// depth (this handler, grpcwire's reads, the pipeline) made it grow and
// copy its stack once or twice per request: runtime.newstack was 6-8% of
// the server's CPU at 100 spans per request (bench/cmd/sidebyside
// profile) and about a sixth of the instructions of
// server.BenchmarkUnaryExport100x4. A worker keeps the stack it grew, and
// validates on it too (ingest.Ticket.CheckHere) rather than handing the
// request to a check worker, so a request still pays one hand-off and one
// wake-up, as it did for validation alone, and no stack growth.
//
// As in ingest's check pool, a job never waits for a worker: with none
// idle, one is started for it; a worker exits after exportWorkerIdle
// without a job. Every job holds a unit of the stream bound while it runs
// (Handler.ServeHTTP), so that bound is also the bound on busy workers,
// and idle ones are gone a second after a burst. A worker serves one
// request at a time, so a slow or stalled request holds its own worker
// and no other request's.
type exportWorkers struct {
	jobs chan *exportJob
}

// exportWorkerIdle is how long a worker waits for another job before it
// exits: long enough to serve the next requests of a busy client without
// growing a new stack, short enough that a burst's goroutines and their
// stacks are given back a second after it.
const exportWorkerIdle = time.Second

// exportJob is one request handed to a worker; jobs are pooled, so the
// hand-off allocates nothing.
type exportJob struct {
	h        *Handler
	w        http.ResponseWriter
	r        *http.Request
	panicked any
	done     chan struct{}
}

var exportJobs = sync.Pool{New: func() any { return &exportJob{done: make(chan struct{}, 1)} }}

func newExportWorkers() *exportWorkers { return &exportWorkers{jobs: make(chan *exportJob)} }

// serve serves the gRPC call r on a worker and returns when it is done. A
// panic there is raised again here, on net/http's goroutine, so that
// net/http handles it as it would have (http.ErrAbortHandler included).
func (ws *exportWorkers) serve(h *Handler, w http.ResponseWriter, r *http.Request) {
	j := exportJobs.Get().(*exportJob)
	j.h, j.w, j.r = h, w, r
	select {
	case ws.jobs <- j: // an idle worker took it
	default:
		go ws.work(j)
	}
	<-j.done
	p := j.panicked
	j.h, j.w, j.r, j.panicked = nil, nil, nil, nil
	exportJobs.Put(j)
	if p != nil {
		panic(p)
	}
}

// work serves j, then the jobs it is given, until it has none for
// exportWorkerIdle.
func (ws *exportWorkers) work(j *exportJob) {
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

func (j *exportJob) run() {
	defer func() {
		if p := recover(); p != nil {
			if p != http.ErrAbortHandler {
				p = &workerPanic{value: p, stack: debug.Stack()}
			}
			j.panicked = p
		}
		j.done <- struct{}{}
	}()
	j.h.serveGRPC(j.w, j.r, true)
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
