// Command manifests writes the plain Kubernetes manifests in
// deploy/kubernetes: the Helm chart rendered with its default values, one
// file per template (`make deploy-manifests`, or `go generate` in deploy/).
// TestPlainManifestsAreTheDefaultRendering fails when they differ.
//
// Run from deploy/: go run ./cmd/manifests
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/otlp-lite/otlp-lite/deploy"
)

func main() {
	if err := run("helm/otlp-lite", "kubernetes"); err != nil {
		fmt.Fprintf(os.Stderr, "manifests: %v\n", err)
		os.Exit(1)
	}
}

func run(chart, outDir string) error {
	files, err := deploy.Render(chart)
	if err != nil {
		return err
	}
	old, _ := filepath.Glob(filepath.Join(outDir, "*.yaml"))
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(outDir, f.Name), []byte(deploy.PlainManifest(f)), 0o644); err != nil {
			return err
		}
	}
	return nil
}
