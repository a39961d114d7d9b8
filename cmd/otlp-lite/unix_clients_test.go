package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// unixSocket returns a socket path in t.TempDir(), or skips the test when
// that directory is too long for a socket address (108 bytes with the NUL).
func unixSocket(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if len(p) > 107 {
		t.Skipf("t.TempDir() gives a socket path of %d bytes, more than a Unix socket address holds (set TMPDIR to a shorter directory)", len(p))
	}
	return p
}

// storedRecords returns the records of sig in dataDir, each as its bytes.
func storedRecords(t *testing.T, dataDir string, sig storage.Signal) []string {
	t.Helper()
	var recs []string
	if err := disk.Scan(dataDir, sig, func(r disk.Record) error {
		recs = append(recs, string(r.Data))
		return nil
	}); err != nil {
		t.Fatalf("scan of %s: %v", dataDir, err)
	}
	slices.Sort(recs)
	return recs
}

// requireSameRecords fails unless dst holds exactly src's records of sig,
// byte for byte: every field of every record found again.
func requireSameRecords(t *testing.T, what, src, dst string, sig storage.Signal) {
	t.Helper()
	want, got := storedRecords(t, src, sig), storedRecords(t, dst, sig)
	if len(want) == 0 {
		t.Fatalf("%s: the source holds no %s", what, sig)
	}
	if !slices.Equal(want, got) {
		t.Fatalf("%s: %d %s records stored, want the source's %d byte for byte", what, len(got), sig, len(want))
	}
}

// TestUnixSocketClients: our clients reach `serve -grpc-addr unix:PATH`
// over the socket. replay sends a data directory over each protocol (grpc,
// http, stream) to its own receiver, which then holds the source's records
// byte for byte; loadgen sends over unary gRPC and the stream; a second
// otlp-lite forwards to the three sockets with grpc://unix:PATH,
// http://unix:///PATH and stream://unix:PATH destinations, every span
// arriving once.
func TestUnixSocketClients(t *testing.T) {
	if testing.Short() {
		t.Skip("runs servers")
	}
	src := t.TempDir()
	fillSource(t, src, "r", 12, 6)

	type receiver struct {
		proto, sock, dir string
		srv              *serveProc
	}
	var rcv []*receiver
	for _, proto := range []string{"grpc", "http", "stream"} {
		r := &receiver{proto: proto, sock: unixSocket(t, proto+".sock"), dir: t.TempDir()}
		r.srv = startServe(t, r.dir, "unix:"+r.sock)
		if r.srv.addr != "unix:"+r.sock {
			t.Fatalf("serve listens on %q, want unix:%s", r.srv.addr, r.sock)
		}
		rcv = append(rcv, r)
	}

	for _, r := range rcv {
		stdout, stderr, code := runCmd(t, "replay", "-data-dir", src, "-endpoint", "unix:"+r.sock, "-insecure", "-protocol", r.proto)
		if code != 0 || !strings.Contains(stdout, "replayed 18 records") {
			t.Fatalf("replay -protocol %s to unix:%s: exit %d\n%s%s", r.proto, r.sock, code, stdout, stderr)
		}
	}

	// loadgen: unary gRPC to the first socket, the stream to the third.
	for _, lg := range []struct {
		mode string
		r    *receiver
	}{{"unary", rcv[0]}, {"stream", rcv[2]}} {
		stdout, stderr, code := runCmd(t, "loadgen", "-endpoint", "unix:"+lg.r.sock, "-mode", lg.mode, "-batches", "10", "-spans-per-batch", "3", "-idempotency-keys")
		if code != 0 {
			t.Fatalf("loadgen -mode %s to unix:%s: exit %d\n%s%s", lg.mode, lg.r.sock, code, stdout, stderr)
		}
	}

	// forward: a second otlp-lite sends what it receives to all three.
	fwdDir := t.TempDir()
	fwd := startServe(t, fwdDir, "", "-forward", "g=grpc://unix:"+rcv[0].sock+"?signals=traces",
		"-forward", "h=http://unix://"+rcv[1].sock+"?signals=traces&compression=none",
		"-forward", "s=stream://unix:"+rcv[2].sock+"?signals=traces")
	var fwdIDs []string
	for i := range 20 {
		id := fmt.Sprintf("f%d", i)
		if err := sendIDs(context.Background(), fwd.client(), storage.Traces, nil, id); err != nil {
			t.Fatal(err)
		}
		fwdIDs = append(fwdIDs, id)
	}
	for _, r := range rcv {
		waitStored(t, r.dir, storage.Traces, fwdIDs)
	}
	waitForwarded(t, fwdDir)
	fwd.stop(t)

	for _, r := range rcv {
		r.srv.stop(t)
	}
	for _, r := range rcv {
		what := "replay -protocol " + r.proto + " and forward " + r.proto + "://unix:"
		got := storedIDs(t, r.dir, storage.Traces)
		for _, id := range fwdIDs {
			if got[id] != 1 {
				t.Fatalf("%s: forwarded span %s stored %d times, want once", what, id, got[id])
			}
		}
		requireSameRecords(t, what, src, r.dir, storage.Logs)
		// The traces are the source's, the forwarded ones and loadgen's.
		srcTraces := storedRecords(t, src, storage.Traces)
		dstTraces := storedRecords(t, r.dir, storage.Traces)
		for _, rec := range srcTraces {
			if !slices.Contains(dstTraces, rec) {
				t.Fatalf("%s: a source traces record is missing", what)
			}
		}
		loadgenRecords := 0
		for _, rec := range dstTraces {
			if !slices.Contains(srcTraces, rec) && !bytes.Contains([]byte(rec), []byte("storage-test")) {
				loadgenRecords++
			}
		}
		want := 0
		if r.proto != "http" {
			want = 10
		}
		if loadgenRecords != want {
			t.Fatalf("%s: %d loadgen batches stored, want %d", what, loadgenRecords, want)
		}
	}
}

// TestUnixEndpointFlags: loadgen and replay take unix:PATH and
// unix:///PATH; TLS to a socket needs -tls-server-name (a path names no
// host), and a bad socket endpoint is a one-line usage error.
func TestUnixEndpointFlags(t *testing.T) {
	long := "unix:/" + strings.Repeat("d", 120)
	for _, tc := range []struct {
		cmd      func([]string, io.Writer, io.Writer) int
		args     []string
		wantText string
	}{
		{replayContextBackground, []string{"-endpoint", "unix:/run/otlp.sock"}, "cannot verify the server of unix:/run/otlp.sock: a socket path names no host, so the name its certificate has must be given: add -tls-server-name NAME (or -insecure for h2c)"},
		{loadgen, []string{"-endpoint", "unix:///run/otlp.sock", "-tls"}, "add -tls-server-name NAME"},
		{loadgen, []string{"-endpoint", "unix://host/otlp.sock"}, "is not host:port or unix:PATH: unix://HOST/... names a host, a socket has none"},
		{replayContextBackground, []string{"-endpoint", long, "-insecure"}, "more than the 107 a Unix socket address holds"},
	} {
		var stdout, stderr bytes.Buffer
		if code := tc.cmd(tc.args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.wantText) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want 2 and one line with %q", tc.args, code, stderr.String(), tc.wantText)
		}
	}
}

// TestEndpointWithoutHost: -endpoint :PORT, the local system as net.Dial
// reads it, is taken as before unix:PATH was (h2c), and over TLS without
// -tls-server-name is a usage error that says what to add, not crypto/tls's
// handshake error.
func TestEndpointWithoutHost(t *testing.T) {
	if err := checkEndpoint(":4317", "-insecure"); err != nil {
		t.Errorf("checkEndpoint(:4317) = %v, want nil", err)
	}
	var stdout, stderr bytes.Buffer
	if code := loadgen([]string{"-endpoint", ":4317", "-tls"}, &stdout, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), "names no host") || !strings.Contains(stderr.String(), "add -tls-server-name NAME") {
		t.Errorf("loadgen -endpoint :4317 -tls: exit %d, stderr %q; want 2 and what to add", code, stderr.String())
	}
}

// TestUnixEndpointMissing: loadgen to a socket nobody created fails,
// naming the socket and what to check.
func TestUnixEndpointMissing(t *testing.T) {
	sock := unixSocket(t, "none.sock")
	stdout, stderr, code := runCmd(t, "loadgen", "-endpoint", "unix:"+sock, "-batches", "1", "-spans-per-batch", "1", "-request-timeout", "300ms")
	if code == 0 || !strings.Contains(stderr, sock) || !strings.Contains(stdout, "is -endpoint its socket") {
		t.Fatalf("loadgen to a missing socket: exit %d\n%s%s", code, stdout, stderr)
	}
}
