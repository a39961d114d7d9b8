// Package cputime measures CPU time for the bench commands: what a piece
// of work costs this process (Of), and what another process, a server
// under load, has used so far (ProcessSeconds, from /proc; ProcessCPU, to
// the nanosecond, from its CPU clock).
package cputime

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
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

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat;
// it is 100 on every Linux architecture Go supports (proc(5)).
const clockTicks = 100

// cpuSeconds returns utime+stime of pid in seconds.
func ProcessSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	ticks, err := ParseStatTicks(b)
	if err != nil {
		return 0, err
	}
	return float64(ticks) / clockTicks, nil
}

// ParseStatTicks returns utime+stime, in clock ticks, of a /proc/PID/stat
// line (fields 14 and 15, proc(5)).
func ParseStatTicks(b []byte) (int64, error) {
	// comm (field 2) is in parentheses and may hold spaces and
	// parentheses: split after its last closing parenthesis, where field 3
	// starts.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("cannot parse /proc/PID/stat: no comm field")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("cannot parse /proc/PID/stat: %d fields after comm, want at least 13", len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil || utime < 0 || stime < 0 || utime > math.MaxInt64-stime {
		return 0, fmt.Errorf("cannot parse utime/stime of /proc/PID/stat: %q %q", f[11], f[12])
	}
	return utime + stime, nil
}

// ProcessCPU returns the CPU time another process has used so far, all
// its threads, those that exited included, in nanoseconds: its process
// CPU clock (clock_getcpuclockid(3): CPUCLOCK_SCHED of the pid, what
// utime+stime are apportioned from), where /proc/PID/stat counts in 10 ms
// ticks, too coarse for a round of a few hundred milliseconds.
func ProcessCPU(pid int) (time.Duration, error) {
	// MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED) of the kernel's
	// include/linux/posix-timers.h.
	const cpuclockSched = 2
	clock := ^uintptr(pid)<<3 | cpuclockSched
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clock, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0, fmt.Errorf("cannot read the CPU clock of process %d: %w", pid, e)
	}
	return time.Duration(ts.Nano()), nil
}
