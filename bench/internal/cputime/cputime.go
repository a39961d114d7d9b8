// Package cputime measures the CPU time a piece of work costs this
// process, for the bench commands that compare encodings in-process.
package cputime

import (
	"syscall"
	"time"
)

// Of returns the process CPU time (user+system, getrusage) f takes, run
// rounds times after one warm-up run (pools, caches).
func Of(rounds int, f func()) time.Duration {
	f()
	var a, b syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &a)
	for range rounds {
		f()
	}
	syscall.Getrusage(syscall.RUSAGE_SELF, &b)
	t := func(r syscall.Rusage) time.Duration {
		return time.Duration(r.Utime.Nano() + r.Stime.Nano())
	}
	return t(b) - t(a)
}
