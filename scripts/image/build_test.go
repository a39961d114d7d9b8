package main

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// buildFake builds the image from a fake binary and CA bundle.
func buildFake(t *testing.T, created time.Time) []byte {
	t.Helper()
	dir := t.TempDir()
	bin, ca := filepath.Join(dir, "otlp-lite"), filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(bin, []byte("\x7fELF fake binary"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ca, []byte("certs"), 0o600); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	err := build(&buf, options{Binary: bin, CABundle: ca, RootFS: "rootfs", Version: "v1.0.0", Arch: "amd64", Created: created})
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestBuildReproducible(t *testing.T) {
	at := time.Unix(1_700_000_000, 0)
	a, b := buildFake(t, at), buildFake(t, at)
	if !bytes.Equal(a, b) {
		t.Fatal("the same inputs gave different archives")
	}
	if bytes.Equal(a, buildFake(t, at.Add(time.Second))) {
		t.Fatal("SOURCE_DATE_EPOCH does not reach the archive")
	}
}

// TestBuildLayout checks that the layer holds exactly what the Dockerfile's
// COPY instructions put there, owned as they say.
func TestBuildLayout(t *testing.T) {
	archive := filepath.Join(t.TempDir(), "img.tar")
	if err := os.WriteFile(archive, buildFake(t, time.Unix(0, 0)), 0o644); err != nil {
		t.Fatal(err)
	}
	img := readArchive(t, archive)
	type entry struct {
		typ      byte
		uid, gid int
		mode     int64
		data     string
	}
	passwd := string(mustRead(t, "rootfs/etc/passwd"))
	group := string(mustRead(t, "rootfs/etc/group"))
	want := map[string]entry{
		"/data":                              {tar.TypeDir, 65532, 65532, 0o755, ""},
		"/etc":                               {tar.TypeDir, 0, 0, 0o755, ""},
		"/etc/group":                         {tar.TypeReg, 0, 0, -1, group},
		"/etc/passwd":                        {tar.TypeReg, 0, 0, -1, passwd},
		"/etc/ssl":                           {tar.TypeDir, 0, 0, 0o755, ""},
		"/etc/ssl/certs":                     {tar.TypeDir, 0, 0, 0o755, ""},
		"/etc/ssl/certs/ca-certificates.crt": {tar.TypeReg, 0, 0, 0o644, "certs"},
		"/otlp-lite":                         {tar.TypeReg, 0, 0, 0o755, "\x7fELF fake binary"},
	}
	got := map[string]entry{}
	for p, f := range img.files {
		e := entry{f.hdr.Typeflag, f.hdr.Uid, f.hdr.Gid, f.hdr.Mode, string(f.data)}
		if w, ok := want[p]; ok && w.mode == -1 {
			e.mode = -1 // a context file keeps the checkout's mode
		}
		got[p] = e
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("layer =\n%+v\nwant\n%+v", got, want)
	}
	if !reflect.DeepEqual(img.config.Config, imageConfig("v1.0.0")) {
		t.Errorf("config = %+v, want %+v", img.config.Config, imageConfig("v1.0.0"))
	}
	if img.config.Architecture != "amd64" || img.config.OS != "linux" {
		t.Errorf("platform %s/%s", img.config.OS, img.config.Architecture)
	}
}
