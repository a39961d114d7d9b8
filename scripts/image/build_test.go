package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// buildFake builds the image, for amd64 and arm64, from fake binaries,
// SBOMs and CA bundle.
func buildFake(t *testing.T, created time.Time) []byte {
	t.Helper()
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(ca, []byte("certs"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := options{CABundle: ca, RootFS: "rootfs", Version: "v1.0.0", DefaultArch: "arm64", Created: created}
	for _, arch := range []string{"amd64", "arm64"} {
		out := filepath.Join(dir, arch)
		if err := os.Mkdir(out, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, "otlp-lite"), []byte("\x7fELF fake "+arch+" binary"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, "otlp-lite.cdx.json"), []byte(`{"bomFormat":"CycloneDX","arch":"`+arch+`"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		o.Platforms = append(o.Platforms, platform{Arch: arch, Dir: out})
	}
	var buf bytes.Buffer
	if err := build(&buf, o); err != nil {
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
	a := readArchive(t, archive)
	type entry struct {
		typ      byte
		uid, gid int
		mode     int64
		data     string
	}
	passwd := string(mustRead(t, "rootfs/etc/passwd"))
	group := string(mustRead(t, "rootfs/etc/group"))
	for i, arch := range []string{"amd64", "arm64"} {
		if got := a.index.Manifests[i].Platform; got == nil || got.OS != "linux" || got.Architecture != arch {
			t.Errorf("index entry %d has platform %v, want linux/%s", i, got, arch)
		}
		img := a.images[arch]
		want := map[string]entry{
			"/data":                              {tar.TypeDir, 65532, 65532, 0o755, ""},
			"/etc":                               {tar.TypeDir, 0, 0, 0o755, ""},
			"/etc/group":                         {tar.TypeReg, 0, 0, -1, group},
			"/etc/passwd":                        {tar.TypeReg, 0, 0, -1, passwd},
			"/etc/ssl":                           {tar.TypeDir, 0, 0, 0o755, ""},
			"/etc/ssl/certs":                     {tar.TypeDir, 0, 0, 0o755, ""},
			"/etc/ssl/certs/ca-certificates.crt": {tar.TypeReg, 0, 0, 0o644, "certs"},
			"/otlp-lite":                         {tar.TypeReg, 0, 0, 0o755, "\x7fELF fake " + arch + " binary"},
			"/usr":                               {tar.TypeDir, 0, 0, 0o755, ""},
			"/usr/share":                         {tar.TypeDir, 0, 0, 0o755, ""},
			"/usr/share/sbom":                    {tar.TypeDir, 0, 0, 0o755, ""},
			sbomPath:                             {tar.TypeReg, 0, 0, 0o644, `{"bomFormat":"CycloneDX","arch":"` + arch + `"}`},
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
			t.Errorf("linux/%s layer =\n%+v\nwant\n%+v", arch, got, want)
		}
		if !reflect.DeepEqual(img.config.Config, imageConfig("v1.0.0")) {
			t.Errorf("config = %+v, want %+v", img.config.Config, imageConfig("v1.0.0"))
		}
		if img.config.Architecture != arch || img.config.OS != "linux" {
			t.Errorf("platform %s/%s, want linux/%s", img.config.OS, img.config.Architecture, arch)
		}
	}
}

// TestBuildDockerTags checks manifest.json's tags, what Docker's classic
// store names the images it loads: every platform as VERSION-ARCH, and
// -default-arch's as VERSION too.
func TestBuildDockerTags(t *testing.T) {
	dir := t.TempDir()
	archive := filepath.Join(dir, "img.tar")
	if err := os.WriteFile(archive, buildFake(t, time.Unix(0, 0)), 0o644); err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(bytes.NewReader(mustRead(t, archive)))
	for {
		hdr, err := tr.Next()
		if err != nil {
			t.Fatalf("no manifest.json: %v", err)
		}
		if hdr.Name != "manifest.json" {
			continue
		}
		var dm tarball.Manifest
		if err := json.NewDecoder(tr).Decode(&dm); err != nil {
			t.Fatal(err)
		}
		var tags [][]string
		for _, e := range dm {
			tags = append(tags, e.RepoTags)
		}
		want := [][]string{{"otlp-lite:v1.0.0-amd64"}, {"otlp-lite:v1.0.0", "otlp-lite:v1.0.0-arm64"}}
		if !reflect.DeepEqual(tags, want) {
			t.Errorf("manifest.json tags %q, want %q", tags, want)
		}
		return
	}
}
