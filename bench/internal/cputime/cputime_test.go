package cputime

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// ProcessCPU reads this process's CPU clock, which only grows, and names
// a process that does not exist in its error.
func TestProcessCPU(t *testing.T) {
	a, err := ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	var r syscall.Rusage
	for { // some work, until getrusage sees CPU used after a
		syscall.Getrusage(syscall.RUSAGE_SELF, &r)
		if r.Utime.Nano()+r.Stime.Nano() > a.Nanoseconds() {
			break
		}
	}
	b, err := ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if a <= 0 || b <= a {
		t.Fatalf("CPU clock %v then %v, want positive and growing", a, b)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skip(err)
	}
	if _, err := ProcessCPU(gone.Process.Pid); err == nil {
		t.Fatal("no error for a process that exited and was reaped")
	}
}
