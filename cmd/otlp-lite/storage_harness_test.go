package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/VictoriaMetrics/easyproto"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// Helpers shared by the storage tests of this package (crash consistency,
// disk full, replay): a real otlp-lite binary run as a child process, and
// hand-built OTLP requests whose items carry unique ids.

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// otlpLiteBinary builds the otlp-lite command once per test process.
func otlpLiteBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "otlp-lite-bin")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "otlp-lite")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// serveProc is an `otlp-lite serve` child process.
type serveProc struct {
	cmd  *exec.Cmd
	addr string // gRPC host:port
	mu   sync.Mutex
	log  bytes.Buffer
	done chan struct{}
}

var grpcAddrRE = regexp.MustCompile(`grpc_addr=(\S+)`)

// startServe starts `otlp-lite serve` on dataDir with a loopback port (addr,
// or any free one if empty), waits until it listens, and stops it (SIGKILL)
// when the test ends if it is still running.
func startServe(t *testing.T, dataDir, addr string, extra ...string) *serveProc {
	t.Helper()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	args := append([]string{"serve", "-data-dir", dataDir, "-grpc-addr", addr, "-http-addr", "", "-admin-addr", "", "-log-level", "info"}, extra...)
	p := &serveProc{cmd: exec.Command(otlpLiteBinary(t), args...), done: make(chan struct{})}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.log.WriteString(line + "\n")
			p.mu.Unlock()
			if m := grpcAddrRE.FindStringSubmatch(line); m != nil {
				select {
				case ready <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, stderr)
		p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.kill() })
	select {
	case p.addr = <-ready:
	case <-p.done:
		t.Fatalf("otlp-lite serve exited before listening:\n%s", p.logs())
	case <-time.After(20 * time.Second):
		p.kill()
		t.Fatalf("otlp-lite serve did not start listening:\n%s", p.logs())
	}
	return p
}

func (p *serveProc) logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// kill SIGKILLs the process and waits for it.
func (p *serveProc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop shuts the server down gracefully (SIGTERM) and waits.
func (p *serveProc) stop(t *testing.T) {
	t.Helper()
	// serve installs its SIGTERM handler before it logs that it serves,
	// which startServe waited for: a signal now shuts it down gracefully.
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.kill()
		t.Fatalf("otlp-lite serve did not stop on SIGTERM:\n%s", p.logs())
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("otlp-lite serve exited with %d:\n%s", code, p.logs())
	}
}

func (p *serveProc) client() *grpcwire.Client { return grpcwire.NewClient(p.addr, nil) }

// freeAddr returns a loopback address nobody listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

const (
	methodTraces = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
	methodLogs   = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"
)

var reqMarshalers easyproto.MarshalerPool

// tracesRequest builds an ExportTraceServiceRequest with one span per id,
// the id as the span's name, and pad bytes of padding in a span attribute.
func tracesRequest(pad []byte, ids ...string) []byte {
	m := reqMarshalers.Get()
	defer reqMarshalers.Put(m)
	rs := m.MessageMarshaler().AppendMessage(1) // resource_spans
	res := rs.AppendMessage(1)                  // resource
	kv := res.AppendMessage(1)                  // attributes
	kv.AppendString(1, "service.name")
	kv.AppendMessage(2).AppendString(1, "storage-test")
	ss := rs.AppendMessage(2) // scope_spans
	ss.AppendMessage(1).AppendString(1, "scope")
	for i, id := range ids {
		span := ss.AppendMessage(2)
		span.AppendBytes(1, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, byte(i + 1)})
		span.AppendBytes(2, []byte{1, 2, 3, 4, 5, 6, 7, byte(i + 1)})
		span.AppendString(5, id)
		if len(pad) > 0 {
			a := span.AppendMessage(9)
			a.AppendString(1, "pad")
			a.AppendMessage(2).AppendBytes(7, pad)
		}
	}
	return m.Marshal(nil)
}

// logsRequest builds an ExportLogsServiceRequest with one log record per
// id, the id as its string body.
func logsRequest(ids ...string) []byte {
	m := reqMarshalers.Get()
	defer reqMarshalers.Put(m)
	rl := m.MessageMarshaler().AppendMessage(1)
	rl.AppendMessage(1)
	sl := rl.AppendMessage(2)
	for _, id := range ids {
		lr := sl.AppendMessage(2)
		lr.AppendFixed64(1, uint64(time.Now().UnixNano()))
		lr.AppendMessage(5).AppendString(1, id)
	}
	return m.Marshal(nil)
}

// itemIDs returns the ids in a stored TracesData (span names) or LogsData
// (string bodies).
func itemIDs(t *testing.T, sig storage.Signal, data []byte) []string {
	t.Helper()
	var ids []string
	var fc easyproto.FieldContext
	// walk descends one level into each message field with the given
	// number, calling leaf at the end of path.
	var walk func(b []byte, path []uint32, leaf func([]byte))
	walk = func(b []byte, path []uint32, leaf func([]byte)) {
		for len(b) > 0 {
			var err error
			if b, err = fc.NextField(b); err != nil {
				t.Fatalf("stored record does not parse: %v", err)
			}
			if fc.FieldNum != path[0] {
				continue
			}
			v, ok := fc.MessageData()
			if !ok {
				t.Fatalf("field %d is not a message", fc.FieldNum)
			}
			if len(path) == 1 {
				leaf(v)
			} else {
				walk(v, path[1:], leaf)
			}
		}
	}
	switch sig {
	case storage.Traces:
		walk(data, []uint32{1, 2, 2}, func(span []byte) {
			var f easyproto.FieldContext
			for len(span) > 0 {
				span, _ = f.NextField(span)
				if f.FieldNum == 5 {
					s, _ := f.String()
					// easyproto strings alias the record buffer, which the
					// reader reuses.
					ids = append(ids, strings.Clone(s))
				}
			}
		})
	case storage.Logs:
		walk(data, []uint32{1, 2, 2, 5}, func(body []byte) {
			var f easyproto.FieldContext
			for len(body) > 0 {
				body, _ = f.NextField(body)
				if f.FieldNum == 1 {
					s, _ := f.String()
					// easyproto strings alias the record buffer, which the
					// reader reuses.
					ids = append(ids, strings.Clone(s))
				}
			}
		})
	}
	return ids
}

// storedIDs scans a data directory and returns how often each item id is
// stored. Any damage reported by the scan fails the test.
func storedIDs(t *testing.T, dataDir string, sig storage.Signal) map[string]int {
	t.Helper()
	got := map[string]int{}
	err := disk.Scan(dataDir, sig, func(r disk.Record) error {
		ids := itemIDs(t, sig, r.Data)
		if len(ids) != r.Items {
			t.Fatalf("record at %s:%d holds %d items, its header says %d", r.Segment, r.Offset, len(ids), r.Items)
		}
		for _, id := range ids {
			got[id]++
		}
		return nil
	})
	if err != nil {
		t.Fatalf("scan of %s found damage: %v", sig, err)
	}
	return got
}

// sendIDs sends one request holding ids through c and returns its error.
func sendIDs(ctx context.Context, c *grpcwire.Client, sig storage.Signal, pad []byte, ids ...string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var err error
	switch sig {
	case storage.Traces:
		_, err = c.Invoke(ctx, methodTraces, tracesRequest(pad, ids...))
	case storage.Logs:
		_, err = c.Invoke(ctx, methodLogs, logsRequest(ids...))
	default:
		panic("unsupported signal")
	}
	return err
}

func joinIDs(ids map[string]int) string {
	var b strings.Builder
	n := 0
	for id := range ids {
		if n == 10 {
			b.WriteString(" ...")
			break
		}
		b.WriteString(" " + id)
		n++
	}
	return b.String()
}
