//go:build !linux

package main

import "testing"

func runContainer(t *testing.T, img *archiveImage, emu string) {
	t.Skip("running the image without a container runtime needs Linux namespaces")
}
