package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoTemplatePackages fails if the binary links text/template or
// html/template, with or without Kafka. The reason is size, not taste:
// text/template calls reflect.Value.MethodByName, and once a binary can
// reach that the Go linker must keep every exported method of every
// reachable type (it cannot tell which a template might call by name), so
// method dead-code elimination is off for the whole program. The status
// page alone cost 1.9 MB that way (nokafka binary 10.06 MB → 11.95 MB),
// which put the small image over its 12,000,000 byte budget
// (scripts/image/image_test.go). The page is written by plain Go code
// (status_render.go) instead.
func TestNoTemplatePackages(t *testing.T) {
	for _, tags := range []string{"nokafka", ""} {
		out, err := exec.Command("go", "list", "-deps", "-tags", tags, ".").CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps -tags %q: %v\n%s", tags, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 10 {
			t.Fatalf("go list -deps -tags %q listed only %q", tags, deps)
		}
		for _, d := range deps {
			if d == "text/template" || d == "html/template" {
				t.Errorf("with -tags %q the binary depends on %s: its reflect.Value.MethodByName disables the linker's method dead-code elimination (+1.9 MB); write HTML with html.EscapeString instead", tags, d)
			}
		}
	}
}
