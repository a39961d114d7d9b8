package ingest

import (
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otlp-lite/otlp-lite/otlpdecode"
)

// TestCheckPoolNoHeadOfLineBlocking: while every permanent worker is busy
// with a long validation (a hostile request of millions of empty items
// takes seconds), a small request is validated at once on a worker started
// for it, instead of waiting behind them; the workers started for the
// burst exit once idle. Before, the small request waited until a long one
// ended.
func TestCheckPoolNoHeadOfLineBlocking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newCheckPool()
		defer p.stop()
		release := make(chan struct{})
		slow := func([]byte, *otlpdecode.Options) (otlpdecode.Result, error) {
			<-release
			return otlpdecode.Result{Items: 1}, nil
		}
		fast := func([]byte, *otlpdecode.Options) (otlpdecode.Result, error) { return otlpdecode.Result{Items: 2}, nil }
		// One slow job per permanent worker, and one more.
		n := runtime.GOMAXPROCS(0) + 1
		slowDone := make(chan struct{}, n)
		for range n {
			go func() {
				var j checkJob
				p.run(&j, slow, nil, nil)
				slowDone <- struct{}{}
			}()
		}
		synctest.Wait()
		fastDone := make(chan otlpdecode.Result, 1)
		go func() {
			var j checkJob
			res, _ := p.run(&j, fast, nil, nil)
			fastDone <- res
		}()
		synctest.Wait()
		select {
		case res := <-fastDone:
			if res.Items != 2 {
				t.Errorf("fast job result %+v", res)
			}
		default:
			t.Error("a small validation waited behind long ones: no worker took it while every worker was busy")
			defer func() { <-fastDone }()
		}
		close(release)
		for range n {
			<-slowDone
		}
		// The workers started for the burst exit once idle.
		synctest.Wait()
		if got := p.extra.Load(); got == 0 {
			t.Fatal("no worker was started for the burst")
		}
		time.Sleep(checkWorkerIdle + time.Second)
		synctest.Wait()
		if got := p.extra.Load(); got != 0 {
			t.Errorf("%d burst workers still running after %v idle", got, checkWorkerIdle)
		}
	})
}
