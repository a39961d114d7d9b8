package server

import (
	"bufio"
	"context"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/VictoriaMetrics/metrics"
)

// peerHandler answers with the request's RemoteAddr.
var peerHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.RemoteAddr) })

// unixClient is an HTTP/1.1 client of the socket at path.
func unixClient(path string) *http.Client {
	return &http.Client{Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", path)
		}}}
}

// A unix: address is served with the socket mode asked for; each client
// is named by its process and a connection number; closing the listener
// removes the socket file.
func TestListenUnix(t *testing.T) {
	path := filepath.Join(t.TempDir(), "otlp.sock")
	lns, err := ListenConfig{UnixSocketMode: 0o600}.Listen("unix:" + path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != fs.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket file mode %v, want a socket with 0600", fi.Mode())
	}
	if got := lns[0].Addr().String(); got != path {
		t.Fatalf("Addr() = %q, want %q", got, path)
	}
	srv := New(peerHandler, Config{})
	go srv.Serve(lns[0])
	c := unixClient(path)
	want := regexp.MustCompile(`^unix:pid:` + strconv.Itoa(os.Getpid()) + `,uid:` + strconv.Itoa(os.Getuid()) + `,conn:\d+$`)
	a, b := get(t, c, "http://unix/"), get(t, c, "http://unix/")
	if !want.MatchString(a) || !want.MatchString(b) || a == b {
		t.Fatalf("peers %q and %q: want two distinct %v", a, b, want)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Fatalf("directory holds %d files, want only the socket (no temporary name left)", len(entries))
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Fatalf("socket file after Shutdown: %v, want it removed", err)
	}
}

// A socket file left by a crashed process is replaced; a live socket and a
// file that is not a socket are errors, and neither is removed.
func TestListenUnixStale(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "stale.sock")
	ul, err := net.ListenUnix("unix", &net.UnixAddr{Name: stale, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ul.SetUnlinkOnClose(false)
	ul.Close() // the file stays, nobody listens: a crash
	lns, err := Listen("unix:" + stale)
	if err != nil {
		t.Fatalf("stale socket not taken over: %v", err)
	}
	// Now live: a second listener must not take it.
	if _, err := Listen("unix:" + stale); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("Listen on a live socket: %v, want an error saying it is in use", err)
	}
	lns[0].Close()

	regular := filepath.Join(dir, "data")
	if err := os.WriteFile(regular, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Listen("127.0.0.1:0", "unix:"+regular); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("Listen on a regular file: %v, want an error saying it is not a socket", err)
	}
	if b, err := os.ReadFile(regular); err != nil || string(b) != "keep" {
		t.Fatalf("regular file after Listen: %q, %v", b, err)
	}
}

// The file a closed listener removes is its own: a socket another process
// put in its place stays.
func TestListenUnixCloseKeepsReplacement(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	lns, err := Listen("unix:" + path)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(path)
	other, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	lns[0].Close()
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("the replacement socket was removed: %v", err)
	}
}

func TestCheckAddr(t *testing.T) {
	for addr, ok := range map[string]bool{
		"localhost:4317": true, ":4317": true, "unix:/run/otlp-lite/otlp.sock": true, "unix:rel.sock": true,
		"localhost": false, "unix:": false, "unix:@otlp": false, "unix:/" + strings.Repeat("a", 100): false,
	} {
		if err := CheckAddr(addr); (err == nil) != ok {
			t.Errorf("CheckAddr(%q) = %v, want ok=%v", addr, err, ok)
		}
	}
}

// -max-connections counts Unix connections as TCP ones: at the limit the
// oldest idle one is shed for a new one.
func TestMaxConnectionsUnix(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	lns, err := Listen("unix:" + path)
	if err != nil {
		t.Fatal(err)
	}
	limits := DefaultLimits()
	limits.MaxConnections = 1
	reg := metrics.NewSet()
	srv := New(okHandler, Config{Limits: &limits, Metrics: reg})
	go srv.Serve(lns[0])
	t.Cleanup(func() { srv.Close() })
	dial := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c, bufio.NewReader(c)
	}
	c1, r1 := dial()
	if st, err := rawGet(c1, r1); err != nil || st != "200 OK" {
		t.Fatalf("first connection: %q, %v", st, err)
	}
	// The server marks a connection idle just after its response: wait
	// for it, or the second connection finds none idle to shed and is
	// refused (as TestMaxConnectionsShedsOldestIdle waits).
	waitFor(t, func() bool { return connsIn(srv.conns, http.StateIdle) == 1 })
	c2, r2 := dial()
	if st, err := rawGet(c2, r2); err != nil || st != "200 OK" {
		t.Fatalf("second connection: %q, %v", st, err)
	}
	if _, err := rawGet(c1, r1); err == nil {
		t.Fatal("the idle first connection was not shed")
	}
	if got := reg.GetOrCreateCounter(`otlplite_connections_dropped_total{reason="shed_idle"}`).Get(); got != 1 {
		t.Fatalf("shed_idle = %d, want 1", got)
	}
}

// A socket another process starts serving at the path between Listen's
// check and its publishing of its own socket (two starts at once, a
// restart racing the old process) is not replaced: Listen fails as on a
// live socket, and the other process keeps serving.
func TestListenUnixDoesNotReplaceLiveSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "race.sock")
	var other net.Listener
	beforeUnixPublish = func(string) {
		var err error
		if other, err = net.Listen("unix", path); err != nil {
			t.Error(err)
		}
	}
	defer func() { beforeUnixPublish = nil }()
	lns, err := Listen("unix:" + path)
	if other == nil {
		t.Fatal("the hook did not run")
	}
	defer other.Close()
	if err == nil {
		lns[0].Close()
		t.Fatal("Listen replaced a live socket that appeared before it published its own")
	}
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("the other process's socket is gone: %v", err)
	}
	c.Close()
}

// Before its mode is set the socket is bound where only this process's
// user can reach it (a directory of mode 0700 of its own), so no other
// user can connect in the window the umask's permissions leave open, nor
// put a symlink under its name for chmod to follow.
func TestListenUnixBindsInPrivateDir(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.sock")
	var tmpDir string
	beforeUnixPublish = func(tmp string) { tmpDir = filepath.Dir(tmp) }
	defer func() { beforeUnixPublish = nil }()
	lns, err := Listen("unix:" + path)
	if err != nil {
		t.Fatal(err)
	}
	defer lns[0].Close()
	if tmpDir == dir {
		t.Fatalf("the socket is bound in %s itself, readable by whoever may enter it", dir)
	}
	if filepath.Dir(tmpDir) != dir {
		t.Fatalf("bound in %s, not in a directory of %s's own", tmpDir, dir)
	}
	if _, err := os.Stat(tmpDir); !os.IsNotExist(err) {
		t.Fatalf("the private directory %s is left behind: %v", tmpDir, err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("directory holds %d entries, want the socket alone", len(ents))
	}
}
