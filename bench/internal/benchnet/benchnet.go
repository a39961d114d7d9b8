// Package benchnet holds what the benchmark commands (sidebyside,
// fairness, benchload, streamcpu) share to start servers and talk to
// them: a free port, a wait for a listener, a grpc-go codec for raw bytes,
// and a scrape of a server's Prometheus page.
package benchnet

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/mem"
)

// FreePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// WaitListening waits until addr accepts connections, failing early if
// the server exits (e.g. because another process holds the port, which
// would otherwise be measured in its place).
func WaitListening(addr string, exited <-chan struct{}, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return errors.New("server exited before listening")
		default:
		}
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			return c.Close()
		}
		time.Sleep(20 * time.Millisecond) // polling a port another process opens
	}
	return fmt.Errorf("server did not listen on %s within %s", addr, timeout)
}

// RawCodec sends []byte messages as they are and keeps responses as
// bytes. Its name is "proto" so that requests carry the OTLP content-type
// application/grpc+proto; pass it with grpc.ForceCodecV2, never register
// it, so it replaces nothing globally.
type RawCodec struct{}

func (RawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(*v.(*[]byte))}, nil
}

func (RawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*[]byte) = data.Materialize()
	return nil
}

func (RawCodec) Name() string { return "proto" }

// Scrape reads a server's Prometheus text page (otlp-lite's admin
// /metrics) at url and returns each sample by its series as written, name
// and labels (e.g. `otlplite_storage_items{signal="traces"}`).
func Scrape(url string) (map[string]float64, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, fmt.Errorf("cannot scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("cannot scrape %s: %s", url, resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("cannot scrape %s: %w", url, err)
	}
	return out, nil
}
