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

// writeTree creates files (path → content; a trailing / makes a directory)
// under dir.
func writeTree(t *testing.T, dir string, files map[string]string, mode os.FileMode) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if name[len(name)-1] == '/' {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, 0o755); err != nil { // whatever the umask
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	// Directories 0755 whatever the umask, as the expectations assume.
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return os.Chmod(p, 0o755)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// packRepositoryDockerfile packs the real Dockerfile from a stand-in build
// stage holding a fake binary, and returns the archive bytes.
func packRepositoryDockerfile(t *testing.T, stage string, created time.Time) []byte {
	t.Helper()
	var buf bytes.Buffer
	err := pack(&buf, packOptions{
		Dockerfile: mustRead(t, "../../Dockerfile"),
		BuildArgs:  map[string]string{"VERSION": "v1.0.0"},
		Sources:    copySources{context: "../..", stages: map[string]string{"build": stage}},
		Image:      image{Name: "otlp-lite", Tag: "v1.0.0", OS: "linux", Arch: "amd64", Created: created},
	})
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func newStage(t *testing.T) string {
	stage := t.TempDir()
	writeTree(t, stage, map[string]string{"out/otlp-lite": "\x7fELF fake binary"}, 0o755)
	writeTree(t, stage, map[string]string{"etc/ssl/certs/ca-certificates.crt": "certs", "out/data/": ""}, 0o644)
	return stage
}

func TestPackReproducible(t *testing.T) {
	stage := newStage(t)
	at := time.Unix(1_700_000_000, 0)
	a := packRepositoryDockerfile(t, stage, at)
	b := packRepositoryDockerfile(t, stage, at)
	if !bytes.Equal(a, b) {
		t.Fatal("the same inputs gave different archives")
	}
	if c := packRepositoryDockerfile(t, stage, at.Add(time.Second)); bytes.Equal(a, c) {
		t.Fatal("SOURCE_DATE_EPOCH does not reach the archive")
	}
}

// TestPackLayout checks that the layer holds exactly what the Dockerfile's
// COPY instructions put there, owned as they say.
func TestPackLayout(t *testing.T) {
	archive := filepath.Join(t.TempDir(), "img.tar")
	if err := os.WriteFile(archive, packRepositoryDockerfile(t, newStage(t), time.Unix(0, 0)), 0o644); err != nil {
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
	if v := img.config.Config.Labels["org.opencontainers.image.version"]; v != "v1.0.0" {
		t.Errorf("version label %q", v)
	}
	if img.config.Architecture != "amd64" || img.config.Config.Env[0] != defaultPath {
		t.Errorf("config = %+v", img.config)
	}
}

// TestCopySemantics follows Docker's COPY rules for files, directories,
// trailing slashes, existing directories, --chown and --chmod.
func TestCopySemantics(t *testing.T) {
	ctx := t.TempDir()
	writeTree(t, ctx, map[string]string{"a": "A", "dir/x": "X", "dir/sub/y": "Y", "dir/empty/": ""}, 0o640)
	df := `FROM scratch
COPY a /one/two/
COPY a /renamed
COPY --chown=7:8 dir /tree
COPY --chmod=0600 a /tree
`
	st, err := parseDockerfile([]byte(df), nil)
	if err != nil {
		t.Fatal(err)
	}
	l := newLayer(time.Unix(0, 0))
	for _, c := range st.Copies {
		if err := l.apply(c, copySources{context: ctx}); err != nil {
			t.Fatal(err)
		}
	}
	type entry struct {
		typ      byte
		uid, gid int
		mode     int64
	}
	want := map[string]entry{
		"/one":        {tar.TypeDir, 0, 0, 0o755},
		"/one/two":    {tar.TypeDir, 0, 0, 0o755},
		"/one/two/a":  {tar.TypeReg, 0, 0, 0o640},
		"/renamed":    {tar.TypeReg, 0, 0, 0o640},
		"/tree":       {tar.TypeDir, 7, 8, 0o755},
		"/tree/x":     {tar.TypeReg, 7, 8, 0o640},
		"/tree/sub":   {tar.TypeDir, 7, 8, 0o755},
		"/tree/sub/y": {tar.TypeReg, 7, 8, 0o640},
		"/tree/empty": {tar.TypeDir, 7, 8, 0o755},
		"/tree/a":     {tar.TypeReg, 0, 0, 0o600}, // into the existing directory
	}
	got := map[string]entry{}
	for p, e := range l.entries {
		got[p] = entry{e.typ, e.uid, e.gid, e.mode}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("layer =\n%+v\nwant\n%+v", got, want)
	}

	st, err = parseDockerfile([]byte("FROM scratch\nCOPY ../a /escape\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := newLayer(time.Unix(0, 0)).apply(st.Copies[0], copySources{context: ctx}); err == nil {
		t.Error("COPY ../a left the build context")
	}
	st, err = parseDockerfile([]byte("FROM scratch\nCOPY --from=build /x /x\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := newLayer(time.Unix(0, 0)).apply(st.Copies[0], copySources{context: ctx}); err == nil {
		t.Error("COPY --from a stage without a directory succeeded")
	}
}
