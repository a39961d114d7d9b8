package deploy

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const unitFile = "systemd/otlp-lite.service"

// unitSettings reads a unit file's [Service] section: every key with its
// values in order (a key may repeat).
func unitSettings(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kv := map[string][]string{}
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "[") {
			section = line
			continue
		}
		if section != "[Service]" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: %q is not KEY=VALUE", path, line)
		}
		kv[k] = append(kv[k], v)
	}
	return kv
}

// flagDefault returns the default of serve flag name in docs/flags.md.
func flagDefault(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../docs/flags.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?m)^\\| `-" + regexp.QuoteMeta(name) + "` \\| `([^`]*)` \\| `OTLP_LITE_").FindSubmatch(b)
	if m == nil {
		t.Fatalf("docs/flags.md: no default for -%s", name)
	}
	return string(m[1])
}

// TestSystemdUnit checks the unit's promises against the binary's
// defaults: the stop timeout covers -shutdown-timeout with room to close
// the log, the descriptor limit covers -max-connections with its reserve,
// the data directory is the state directory, the hardening is there, and
// every variable it or its environment file sets is a serve flag's.
func TestSystemdUnit(t *testing.T) {
	kv := unitSettings(t, unitFile)
	one := func(k string) string {
		if len(kv[k]) != 1 {
			t.Fatalf("%s: %s set %d times, want once", unitFile, k, len(kv[k]))
		}
		return kv[k][0]
	}
	if one("KillSignal") != "SIGTERM" {
		t.Errorf("KillSignal=%s: the receiver stops gracefully on SIGTERM", one("KillSignal"))
	}
	shutdown, err := time.ParseDuration(flagDefault(t, "shutdown-timeout"))
	if err != nil {
		t.Fatal(err)
	}
	stop, err := time.ParseDuration(one("TimeoutStopSec"))
	if err != nil {
		t.Fatalf("TimeoutStopSec: %v", err)
	}
	if stop != shutdown+10*time.Second {
		t.Errorf("TimeoutStopSec=%v, want -shutdown-timeout %v + 10s to sync and close the log", stop, shutdown)
	}
	maxConns, err := strconv.Atoi(flagDefault(t, "max-connections"))
	if err != nil {
		t.Fatal(err)
	}
	if nofile, err := strconv.Atoi(one("LimitNOFILE")); err != nil || nofile != maxConns+1024 {
		t.Errorf("LimitNOFILE=%s, want -max-connections %d + 1024", one("LimitNOFILE"), maxConns)
	}
	for k, want := range map[string]string{
		"DynamicUser": "yes", "ProtectSystem": "strict", "ProtectHome": "yes", "NoNewPrivileges": "yes",
		"PrivateTmp": "yes", "CapabilityBoundingSet": "", "StateDirectory": "otlp-lite",
		"RuntimeDirectory":        "otlp-lite", // unix: sockets in /run/otlp-lite (docs/configuration.md)
		"RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX",
	} {
		if got := one(k); got != want {
			t.Errorf("%s=%q, want %q", k, got, want)
		}
	}
	if kv["SystemCallFilter"][0] != "@system-service" {
		t.Errorf("SystemCallFilter=%v, want @system-service first", kv["SystemCallFilter"])
	}
	if one("Environment") != "OTLP_LITE_DATA_DIR=/var/lib/"+one("StateDirectory") {
		t.Errorf("Environment=%s: the log must be in the StateDirectory, the only writable path", one("Environment"))
	}
	if !strings.HasPrefix(one("EnvironmentFile"), "-/etc/otlp-lite/") {
		t.Errorf("EnvironmentFile=%s", one("EnvironmentFile"))
	}
	if strings.TrimSpace(strings.TrimPrefix(one("ExecStart"), "/usr/local/bin/otlp-lite")) != "serve" {
		t.Errorf("ExecStart=%s: settings belong in the environment", one("ExecStart"))
	}

	flags := serveFlags(t)
	env, err := os.ReadFile("systemd/otlp-lite.env")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range append(strings.Split(string(env), "\n"), kv["Environment"]...) {
		line = strings.TrimPrefix(strings.TrimSpace(line), "#")
		name, _, ok := strings.Cut(line, "=")
		if ok && strings.HasPrefix(name, "OTLP_LITE_") && !flags[name] {
			t.Errorf("%s is not the variable of any serve flag", name)
		}
	}
}

// TestSystemdAnalyzeVerify runs `systemd-analyze verify` on the unit,
// pointed at the built binary (verify checks that ExecStart's command
// exists): any warning fails, an unknown key included. It also reports
// `systemd-analyze security`'s exposure score, which must stay "OK".
// Skipped, saying why, where systemd-analyze is missing (`make
// deploy-test` installs Debian's systemd package as root).
func TestSystemdAnalyzeVerify(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not found: install systemd (make deploy-test installs it as root with apt-get)")
	}
	unit, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	bin := otlpLiteBinary(t)
	text := strings.Replace(string(unit), "ExecStart=/usr/local/bin/otlp-lite ", "ExecStart="+bin+" ", 1)
	if text == string(unit) {
		t.Fatal("ExecStart is not /usr/local/bin/otlp-lite")
	}
	path := filepath.Join(t.TempDir(), "otlp-lite.service")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}

	out, err = exec.Command(analyze, "security", "--offline=yes", path).CombinedOutput()
	m := regexp.MustCompile(`Overall exposure level for \S+: ([0-9.]+) (\S+)`).FindSubmatch(out)
	if m == nil {
		t.Logf("systemd-analyze security --offline gave no score (%v); not checked", err)
		return
	}
	t.Logf("systemd-analyze security: exposure %s %s", m[1], m[2])
	if score, _ := strconv.ParseFloat(string(m[1]), 64); score > 2 {
		t.Errorf("exposure %s %s, want at most 2.0 (it was 1.4 when the unit was written)", m[1], m[2])
	}
}

// TestSystemdSyscallFilterCoversTheReceiver runs the receiver under strace
// through a life like the unit's (start, an OTLP/HTTP export stored with
// zstd segments, the status page and /metrics, a gRPC health check, a
// SIGTERM stop) and checks that every system call it made is one the
// unit's SystemCallFilter lines allow, as systemd-analyze expands their
// groups: a filter that killed or refused the service in production would
// pass systemd-analyze verify. Skipped without strace or systemd-analyze.
func TestSystemdSyscallFilterCoversTheReceiver(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not found: install systemd (make deploy-test installs it as root with apt-get)")
	}
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace not found: install strace (make deploy-test installs it as root with apt-get)")
	}
	allowed := map[string]bool{}
	for _, line := range unitSettings(t, unitFile)["SystemCallFilter"] {
		deny := strings.HasPrefix(line, "~")
		for _, name := range strings.Fields(strings.TrimPrefix(line, "~")) {
			for _, call := range expandSyscalls(t, analyze, name, map[string]bool{}) {
				allowed[call] = !deny
			}
		}
	}
	if len(allowed) < 100 {
		t.Fatalf("the filter expands to %d system calls", len(allowed))
	}

	dir := t.TempDir()
	trace := filepath.Join(dir, "strace.txt")
	env := []string{
		"OTLP_LITE_DATA_DIR=" + filepath.Join(dir, "data"), "OTLP_LITE_STORAGE_COMPRESSION=zstd",
		"OTLP_LITE_GRPC_ADDR=127.0.0.1:0", "OTLP_LITE_HTTP_ADDR=127.0.0.1:0", "OTLP_LITE_ADMIN_ADDR=127.0.0.1:0",
	}
	// strace follows threads (-f); the traced process is the receiver
	// itself, whose pid starts the trace's first line.
	var tracedPid int
	stopTraced := func() error {
		if tracedPid == 0 {
			b, _ := os.ReadFile(trace)
			first, _, _ := strings.Cut(string(b), " ")
			tracedPid, _ = strconv.Atoi(first)
		}
		if tracedPid <= 0 {
			return os.ErrNotExist
		}
		return syscall.Kill(tracedPid, syscall.SIGTERM)
	}
	runTraced(t, strace, []string{"-f", "-qq", "-o", trace, otlpLiteBinary(t), "serve"}, env, stopTraced)

	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	call := regexp.MustCompile(`(?m)^\d+\s+(?:<\.\.\. )?([a-z0-9_]+)[( ]`)
	used := map[string]bool{}
	for _, m := range call.FindAllStringSubmatch(string(b), -1) {
		used[m[1]] = true
	}
	if !used["fsync"] && !used["fdatasync"] || !used["accept4"] {
		t.Fatalf("the trace has no fsync or accept4: it did not see the export (%d calls)", len(used))
	}
	var refused []string
	for c := range used {
		if c != "exit" && c != "exit_group" && !allowed[c] {
			refused = append(refused, c)
		}
	}
	slices.Sort(refused)
	if len(refused) > 0 {
		t.Errorf("the receiver calls %v, which the unit's SystemCallFilter refuses", refused)
	}
	t.Logf("%d distinct system calls, all allowed by the filter", len(used))
}

// expandSyscalls returns the system calls of a systemd-analyze
// syscall-filter group (its nested groups expanded), or name itself.
func expandSyscalls(t *testing.T, analyze, name string, seen map[string]bool) []string {
	t.Helper()
	if !strings.HasPrefix(name, "@") {
		return []string{name}
	}
	if seen[name] {
		return nil
	}
	seen[name] = true
	out, err := exec.Command(analyze, "syscall-filter", name).Output()
	if err != nil {
		t.Fatalf("systemd-analyze syscall-filter %s: %v", name, err)
	}
	var calls []string
	for i, line := range strings.Split(string(out), "\n") {
		line = strings.TrimSpace(line)
		if i == 0 || line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		calls = append(calls, expandSyscalls(t, analyze, line, seen)...)
	}
	return calls
}
