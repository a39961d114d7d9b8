package main

import (
	"bytes"
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
)

// `version` prints one line, as before -v existed.
func TestVersionLine(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"version"}, &stdout, &stderr); code != 0 || stderr.Len() != 0 {
		t.Fatalf("version exited %d, stderr %q", code, stderr.String())
	}
	want := "otlp-lite " + version + " "
	if lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], want) ||
		!strings.HasSuffix(lines[0], " "+runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH) {
		t.Fatalf("version printed %q, want one line %q... %s %s/%s", stdout.String(), want, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	}
	stdout.Reset()
	if code := run([]string{"version", "extra"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), `"extra"`) {
		t.Fatalf("version extra: exit %d, stderr %q; want 2 naming the argument", code, stderr.String())
	}
}

// `version -v` adds the build information in `go version -m`'s format:
// what debug.ParseBuildInfo reads back is the binary's own.
func TestVersionVerbose(t *testing.T) {
	var line, stderr bytes.Buffer
	run([]string{"version"}, &line, &stderr)
	var stdout bytes.Buffer
	if code := run([]string{"version", "-v"}, &stdout, &stderr); code != 0 || stderr.Len() != 0 {
		t.Fatalf("version -v exited %d, stderr %q", code, stderr.String())
	}
	first, rest, _ := strings.Cut(stdout.String(), "\n")
	if first+"\n" != line.String() {
		t.Errorf("version -v starts with %q, version prints %q", first, line.String())
	}
	got, err := debug.ParseBuildInfo(rest)
	if err != nil {
		t.Fatalf("version -v: cannot parse build info: %v\n%s", err, rest)
	}
	want, _ := debug.ReadBuildInfo()
	// ParseBuildInfo skips the "go" line; it comes first.
	if !strings.HasPrefix(rest, "go\t"+want.GoVersion+"\n") {
		t.Errorf("version -v build info starts %.40q, want the go line %s", rest, want.GoVersion)
	}
	got.GoVersion = want.GoVersion
	if got.String() != want.String() {
		t.Errorf("version -v build info =\n%s\nwant\n%s", got, want)
	}
}

// The real binary, built with a tag as the image is: `version -v` names
// the main module, each dependency at the version go.mod selects, the tags,
// the platform and (from a git checkout) the revision.
func TestVersionVerboseBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "otlp-lite")
	// -buildvcs=auto: stamped from a git checkout whatever GOFLAGS says.
	if out, err := exec.Command("go", "build", "-buildvcs=auto", "-tags", "nokafka", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version", "-v").Output()
	if err != nil {
		t.Fatalf("version -v: %v", err)
	}
	_, rest, _ := strings.Cut(string(out), "\n")
	got, err := debug.ParseBuildInfo(rest)
	if err != nil {
		t.Fatalf("cannot parse build info: %v\n%s", err, out)
	}
	file, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(rest, "go\t"+runtime.Version()+"\n") {
		t.Errorf("version -v build info starts %.40q, want the go line %s", rest, runtime.Version())
	}
	got.GoVersion = file.GoVersion
	if got.String() != file.String() {
		t.Errorf("version -v =\n%s\nthe binary's build info (go version -m):\n%s", got, file)
	}
	if got.Main.Path != "github.com/otlp-lite/otlp-lite" || got.Path != "github.com/otlp-lite/otlp-lite/cmd/otlp-lite" {
		t.Errorf("main module %q, package %q", got.Main.Path, got.Path)
	}
	settings := map[string]string{}
	for _, s := range got.Settings {
		settings[s.Key] = s.Value
	}
	for k, v := range map[string]string{"-tags": "nokafka", "GOARCH": runtime.GOARCH, "GOOS": runtime.GOOS} {
		if settings[k] != v {
			t.Errorf("build setting %s = %q, want %q", k, settings[k], v)
		}
	}
	// The versions the module graph selects, as `go list -m` reports them.
	listed, err := exec.Command("go", "list", "-deps", "-tags", "nokafka", "-f", "{{with .Module}}{{if not .Main}}{{.Path}}@{{.Version}}{{end}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var wantDeps, gotDeps []string
	for _, l := range strings.Fields(string(listed)) {
		if !slices.Contains(wantDeps, l) {
			wantDeps = append(wantDeps, l)
		}
	}
	for _, d := range got.Deps {
		gotDeps = append(gotDeps, d.Path+"@"+d.Version)
	}
	slices.Sort(wantDeps)
	slices.Sort(gotDeps)
	if !slices.Equal(gotDeps, wantDeps) || len(gotDeps) == 0 {
		t.Errorf("version -v lists deps\n%v\ngo list -deps selects\n%v", gotDeps, wantDeps)
	}
	// The go command stamps a clone (CI's), not a linked worktree (whose
	// .git is a file).
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Logf("not a git checkout (%v): vcs.revision not checked", err)
		return
	}
	if fi, err := os.Stat(filepath.Join(strings.TrimSpace(string(top)), ".git")); err != nil || !fi.IsDir() {
		t.Log("a linked git worktree: the go command records no VCS information, vcs.revision not checked")
		return
	}
	rev, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	if r := strings.TrimSpace(string(rev)); settings["vcs.revision"] != r {
		t.Errorf("vcs.revision = %q, the checkout is at %s", settings["vcs.revision"], r)
	}
}
