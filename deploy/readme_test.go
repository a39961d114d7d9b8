package deploy

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// readmeDeployLines returns the shell lines of the README's "Deploying"
// section, comments and the line continuation of none removed.
func readmeDeployLines(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "\n## Deploying\n")
	if start < 0 {
		t.Fatal("README.md has no Deploying section")
	}
	end := strings.Index(text[start+1:], "\n## ")
	section := text[start : start+1+end]
	var lines []string
	in := false
	sc := bufio.NewScanner(strings.NewReader(section))
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "```sh"):
			in = true
		case strings.HasPrefix(l, "```"):
			in = false
		case in:
			if i := strings.Index(l, " #"); i >= 0 {
				l = l[:i]
			}
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
	}
	return lines
}

// Every command of the README's Deploying section is run here as far as a
// machine without a cluster or a running systemd allows, exactly as
// written otherwise: each `helm install` line is the chart rendered with
// its values files as Helm's install does (checked like the chart's own
// tests), `kubectl apply -f` names the plain manifests, the `install`
// lines are run as written into a scratch root (every source exists, the
// unit then names the binary and the environment file where they were
// installed), and `systemctl enable` is run offline on that root
// (`--root`), which is what it does to a real one before `--now` starts
// the service. `make` targets named must exist.
func TestReadmeDeployCommands(t *testing.T) {
	lines := readmeDeployLines(t)
	if len(lines) < 8 {
		t.Fatalf("the Deploying section has %d command lines, want the helm, kubectl and systemd ones: %q", len(lines), lines)
	}
	mk, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	var installed []string
	seen := map[string]bool{}
	for _, line := range lines {
		t.Run(line, func(t *testing.T) {
			for _, cmd := range strings.Split(line, "&&") {
				args := strings.Fields(cmd)
				if len(args) > 0 && args[0] == "sudo" {
					args = args[1:]
				}
				if len(args) == 0 {
					t.Fatal("an empty command")
				}
				seen[args[0]] = true
				switch args[0] {
				case "make":
					for _, a := range args[1:] {
						if strings.Contains(a, "=") {
							continue
						}
						if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(a) + `:`).Match(mk) {
							t.Errorf("make %s: the Makefile has no such target", a)
						}
					}
				case "helm":
					helmInstall(t, args)
				case "kubectl":
					if len(args) != 4 || args[1] != "apply" || args[2] != "-f" || filepath.Clean(args[3]) != "deploy/kubernetes" {
						t.Fatalf("want kubectl apply -f deploy/kubernetes/, got %q", args)
					}
					files, _ := filepath.Glob("kubernetes/*.yaml")
					if len(files) == 0 {
						t.Fatal("deploy/kubernetes holds no manifests")
					}
				case "install":
					installed = append(installed, runInstall(t, root, args))
				case "systemctl":
					systemctl(t, root, args)
				default:
					t.Fatalf("a command this test does not know how to run: %q", args)
				}
			}
		})
	}
	for _, c := range []string{"helm", "kubectl", "install", "systemctl", "make"} {
		if !seen[c] {
			t.Errorf("the Deploying section has no %s line", c)
		}
	}
	// The unit, as installed, starts the binary and reads the environment
	// file where the README installed them.
	unit := unitSettings(t, filepath.Join(root, "etc/systemd/system/otlp-lite.service"))
	exe := strings.Fields(unit["ExecStart"][0])[0]
	env := strings.TrimPrefix(unit["EnvironmentFile"][0], "-")
	for _, p := range []string{exe, env} {
		if !slices.Contains(installed, p) {
			t.Errorf("the unit names %s, which the README's install lines do not install (%q)", p, installed)
		}
	}
	if fi, err := os.Stat(filepath.Join(root, exe)); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("the installed binary %s is not executable: %v", exe, err)
	}
}

// helmInstall checks `helm install NAME CHART [-f VALUES]...` by rendering
// CHART with VALUES as the install would.
func helmInstall(t *testing.T, args []string) {
	if len(args) < 4 || args[1] != "install" {
		t.Fatalf("want helm install NAME CHART [-f VALUES]..., got %q", args)
	}
	if args[2] != ReleaseName {
		t.Errorf("release %q: the chart's checks and the manifests assume %q", args[2], ReleaseName)
	}
	chart := strings.TrimPrefix(filepath.Clean(args[3]), "deploy/")
	var values []string
	for i := 4; i < len(args); i++ {
		if args[i] != "-f" || i+1 == len(args) {
			t.Fatalf("want only -f VALUES after the chart, got %q", args[i:])
		}
		i++
		values = append(values, strings.TrimPrefix(filepath.Clean(args[i]), "deploy/"))
	}
	rendered, err := Render(chart, values...)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, decodeAll(t, rendered), serveFlags(t))
}

// runInstall runs an install(1) line with its destination under root and
// returns the destination as written.
func runInstall(t *testing.T, root string, args []string) string {
	if len(args) < 3 {
		t.Fatalf("install: want SOURCE DEST, got %q", args)
	}
	dst := args[len(args)-1]
	if !filepath.IsAbs(dst) {
		t.Fatalf("install: destination %s is not absolute", dst)
	}
	src := args[len(args)-2]
	cmd := slices.Clone(args[:len(args)-1])
	if src == "bin/otlp-lite" {
		// What `make build` (the line before) writes.
		cmd[len(cmd)-1] = otlpLiteBinary(t)
	} else {
		cmd[len(cmd)-1] = filepath.Join("..", src)
	}
	if !slices.Contains(cmd, "-D") {
		// A real root has the directory; the scratch one makes it.
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(dst)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd = append(cmd, filepath.Join(root, dst))
	if out, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%q: %v\n%s", cmd, err, out)
	}
	return dst
}

// systemctl runs `systemctl enable` offline on root (--root); daemon-reload
// and --now need a running manager, which a test machine has not.
func systemctl(t *testing.T, root string, args []string) {
	switch {
	case len(args) == 2 && args[1] == "daemon-reload":
		return
	case len(args) >= 3 && args[1] == "enable":
	default:
		t.Fatalf("a systemctl command this test does not know: %q", args)
	}
	units := slices.DeleteFunc(slices.Clone(args[2:]), func(a string) bool { return a == "--now" })
	if len(units) != 1 || strings.TrimSuffix(units[0], ".service") != "otlp-lite" {
		t.Fatalf("systemctl enable %q: want the unit otlp-lite", units)
	}
	sc, err := exec.LookPath("systemctl")
	if err != nil {
		t.Skip("systemctl not found: install systemd (make deploy-test installs it as root with apt-get)")
	}
	out, err := exec.Command(sc, "--root="+root, "enable", units[0]).CombinedOutput()
	if err != nil {
		t.Fatalf("systemctl --root enable %s: %v\n%s", units[0], err, out)
	}
	wants, _ := filepath.Glob(filepath.Join(root, "etc/systemd/system/*.wants/otlp-lite.service"))
	if len(wants) == 0 {
		t.Fatalf("systemctl enable linked nothing: %s", out)
	}
}
