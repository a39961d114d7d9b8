// Package otlplitebin builds the otlp-lite binary for the bench commands
// that run it as a server: from this checkout, or from another git
// revision of it (the build before a change, or another branch), with the
// same toolchain and flags, so that the two run side by side.
package otlplitebin

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Root returns the directory of the otlp-lite module the bench module
// uses (its replace directive: this checkout).
func Root() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/otlp-lite/otlp-lite").Output()
	if err != nil {
		return "", fmt.Errorf("cannot locate the otlp-lite module: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Build builds ./cmd/otlp-lite of the module in dir to bin (a default
// go build).
func Build(bin, dir string) error {
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/otlp-lite")
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("cannot build otlp-lite in %s: %w", dir, err)
	}
	return nil
}

// Unpack writes the tree of the git revision rev of the repository at
// root into dst (git archive: committed files only), for Build.
func Unpack(root, rev, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	cmd := exec.Command("sh", "-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "sh", root, rev, dst)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("cannot unpack otlp-lite at %s: %w", rev, err)
	}
	return nil
}

// Describe returns `git describe --always --dirty` of the repository at
// root, or "" if git cannot tell.
func Describe(root string) string {
	out, err := exec.Command("git", "-C", root, "describe", "--always", "--dirty").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// Commit returns the short commit hash rev names in the repository at
// root, or rev itself if git cannot tell.
func Commit(root, rev string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short", rev+"^{commit}").Output()
	if err != nil {
		return rev
	}
	return strings.TrimSpace(string(out))
}
