package main

import (
	"bytes"
	"strings"
	"testing"
)

// Every command prints its flags to stdout on -h and exits 0, and answers
// an unknown flag with one line on stderr that points at -h, exit 2.
func TestHelpAndUnknownFlag(t *testing.T) {
	for cmd, flagName := range map[string]string{
		"serve": "-grpc-addr", "export": "-data-dir", "replay": "-endpoint", "loadgen": "-endpoint", "stats": "-data-dir", "version": "-v",
	} {
		t.Run(cmd, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run([]string{cmd, "-h"}, &stdout, &stderr); code != 0 {
				t.Fatalf("%s -h exited %d", cmd, code)
			}
			if !strings.Contains(stdout.String(), flagName) || stderr.Len() != 0 {
				t.Fatalf("%s -h: stdout lacks %s or stderr is not empty:\nstdout: %.200s\nstderr: %s", cmd, flagName, stdout.String(), stderr.String())
			}
			stdout.Reset()
			stderr.Reset()
			if code := run([]string{cmd, "-no-such-flag"}, &stdout, &stderr); code != 2 {
				t.Fatalf("%s -no-such-flag exited %d", cmd, code)
			}
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], "-no-such-flag") || !strings.Contains(lines[0], cmd+" -h") {
				t.Fatalf("%s -no-such-flag: want one line naming the flag and pointing at -h, got:\n%s", cmd, stderr.String())
			}
		})
	}
}
