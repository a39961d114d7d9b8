//go:build linux

package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// runContainer runs the image the way a container runtime would, without
// one: its layers unpacked into a root directory, the entrypoint and command
// from its config executed chrooted there as its user, in a network
// namespace of its own (so the ports it binds cannot collide with anything
// on the machine). It then checks from inside that namespace that the
// admin, OTLP/HTTP and OTLP/gRPC ports answer on an address other than
// 127.0.0.1 (so the listeners are bound to all interfaces), that an export
// is accepted, that SIGTERM stops it cleanly, and that the store wrote into
// the data volume as the image's user. It needs root (chroot, setuid and a
// new network namespace); elsewhere it is skipped.
//
// emu, when not "", is a static qemu-user emulator for an image of another
// architecture: copied into the root and run there with the entrypoint as
// its program, as binfmt_misc's F flag would run it. qemu forwards SIGTERM
// to the program.
func runContainer(t *testing.T, img *archiveImage, emu string) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for chroot, setuid and a network namespace")
	}
	cfg := img.config.Config
	uid, gid := parseUser(t, cfg.User)
	root := t.TempDir()
	unpack(t, img, root)

	var out bytes.Buffer
	dir := cfg.WorkingDir
	if dir == "" {
		dir = "/"
	}
	args := append(slices.Clone(cfg.Entrypoint), cfg.Cmd...)
	exe := cfg.Entrypoint[0]
	// Readiness within this long: much longer under emulation (qemu-user
	// translates each instruction; starting takes seconds on a loaded CI
	// machine rather than milliseconds).
	ready := 15 * time.Second
	if emu != "" {
		exe = "/.otlp-lite-test-" + filepath.Base(emu)
		b, err := os.ReadFile(emu)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, exe), b, 0o755); err != nil {
			t.Fatal(err)
		}
		args = append([]string{exe}, args...)
		ready = 90 * time.Second
	}
	// A literal Cmd: exec.Command would look the entrypoint up on this
	// machine's filesystem rather than in the chroot.
	cmd := &exec.Cmd{
		Path:   exe,
		Args:   args,
		Env:    cfg.Env,
		Dir:    dir,
		Stdout: &out,
		Stderr: &out,
		SysProcAttr: &syscall.SysProcAttr{
			Chroot:     root,
			Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}},
			Cloneflags: syscall.CLONE_NEWNET,
		},
	}
	if err := cmd.Start(); err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) {
			t.Skipf("cannot create a network namespace here: %v", err)
		}
		t.Fatalf("cannot start %s: %v", cfg.Entrypoint[0], err)
	}
	var waitErr error
	exited := make(chan struct{}) // closed once waitErr is set
	go func() { waitErr = cmd.Wait(); close(exited) }()
	defer func() {
		select {
		case <-exited:
		default:
			cmd.Process.Kill()
			<-exited
		}
	}()

	// Any address of 127.0.0.0/8 but 127.0.0.1 reaches a listener bound to
	// 0.0.0.0 and not one bound to localhost.
	const host = "127.0.0.2"
	port := func(flag string) string {
		_, p, err := net.SplitHostPort(serveSetting(cfg, flag))
		if err != nil {
			t.Fatalf("-%s: %v", flag, err)
		}
		return p
	}
	span := `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10",` +
		`"spanId":"0102030405060708","name":"image-test","kind":1,"startTimeUnixNano":"1","endTimeUnixNano":"2"}]}]}]}`
	err := inNetns(cmd.Process.Pid, func() error {
		if err := loopbackUp(); err != nil {
			return fmt.Errorf("cannot bring lo up: %w", err)
		}
		// Wait for readiness the way an orchestrator's probe would.
		admin := net.JoinHostPort(host, port("admin-addr"))
		deadline := time.Now().Add(ready)
		for {
			code, _, err := httpDo(admin, "GET", "/readyz", "", "")
			if err == nil && code == http.StatusOK {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("/readyz on %s: %d %v", admin, code, err)
			}
			select {
			case <-exited:
				return fmt.Errorf("exited before becoming ready: %v", waitErr)
			case <-time.After(100 * time.Millisecond):
			}
		}
		code, body, err := httpDo(net.JoinHostPort(host, port("http-addr")), "POST", "/v1/traces", "application/json", span)
		if err != nil || code != http.StatusOK {
			return fmt.Errorf("OTLP/HTTP export: %d %s %v", code, body, err)
		}
		c, err := net.DialTimeout("tcp", net.JoinHostPort(host, port("grpc-addr")), 5*time.Second)
		if err != nil {
			return fmt.Errorf("OTLP/gRPC port: %w", err)
		}
		return c.Close()
	})
	if err != nil {
		t.Fatalf("%v\noutput:\n%s", err, out.Bytes())
	}

	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
		if waitErr != nil {
			t.Fatalf("exit after SIGTERM: %v\noutput:\n%s", waitErr, out.Bytes())
		}
	case <-time.After(2 * ready):
		t.Fatalf("still running %v after SIGTERM\noutput:\n%s", 2*ready, out.Bytes())
	}

	// The accepted span is in the volume, written as the image's user.
	data := filepath.Join(root, serveSetting(cfg, "data-dir"))
	var stored int64
	filepath.WalkDir(data, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != uid {
			t.Errorf("%s is owned by %d, not the image's user %d", p, st.Uid, uid)
		}
		if fi.Mode().IsRegular() {
			stored += fi.Size()
		}
		return nil
	})
	how := "natively"
	if emu != "" {
		how = "under " + filepath.Base(emu)
	}
	t.Logf("ran %s: ready, one export accepted, stopped cleanly on SIGTERM, %d bytes stored", how, stored)
	if stored == 0 {
		t.Errorf("nothing stored under %s after an accepted export\noutput:\n%s", data, out.Bytes())
	}
}

// unpack writes the image's files under root with their modes and owners.
func unpack(t *testing.T, img *archiveImage, root string) {
	t.Helper()
	paths := sortedKeys(img.files)
	for _, p := range paths {
		f := img.files[p]
		dst := filepath.Join(root, filepath.FromSlash(p))
		var err error
		switch f.hdr.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(dst, 0o755)
		case tar.TypeReg:
			err = os.WriteFile(dst, f.data, 0o600)
		case tar.TypeSymlink:
			err = os.Symlink(f.hdr.Linkname, dst)
		default:
			t.Fatalf("%s: unexpected entry type %c", p, f.hdr.Typeflag)
		}
		if err == nil && f.hdr.Typeflag != tar.TypeSymlink {
			err = os.Chmod(dst, fs.FileMode(f.hdr.Mode).Perm())
		}
		if err == nil {
			err = os.Lchown(dst, f.hdr.Uid, f.hdr.Gid)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// inNetns runs fn on an OS thread moved into the network namespace of
// process pid. The thread is never unlocked, so Go discards it afterwards
// instead of reusing it for other goroutines.
func inNetns(pid int, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		ns, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", pid))
		if err != nil {
			done <- err
			return
		}
		defer ns.Close()
		nr, ok := sysSetns[runtime.GOARCH]
		if !ok {
			done <- fmt.Errorf("setns: syscall number unknown on %s", runtime.GOARCH)
			return
		}
		if _, _, errno := syscall.RawSyscall(nr, ns.Fd(), syscall.CLONE_NEWNET, 0); errno != 0 {
			done <- fmt.Errorf("setns: %w", errno)
			return
		}
		done <- fn()
	}()
	return <-done
}

// sysSetns is setns(2)'s number (package syscall lacks SYS_SETNS on
// amd64).
var sysSetns = map[string]uintptr{"amd64": 308, "arm64": 268, "riscv64": 268, "386": 346, "arm": 375, "ppc64le": 350, "s390x": 339}

// loopbackUp does `ip link set lo up`: a new network namespace starts with
// its loopback interface down.
func loopbackUp() error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	var ifr [40]byte // struct ifreq: name[16], then flags (short)
	copy(ifr[:], "lo")
	ioctl := func(req uintptr) error {
		if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), req, uintptr(unsafe.Pointer(&ifr[0]))); errno != 0 {
			return errno
		}
		return nil
	}
	if err := ioctl(syscall.SIOCGIFFLAGS); err != nil {
		return err
	}
	flags := binary.NativeEndian.Uint16(ifr[16:])
	binary.NativeEndian.PutUint16(ifr[16:], flags|syscall.IFF_UP)
	return ioctl(syscall.SIOCSIFFLAGS)
}

// httpDo sends one HTTP/1.1 request on a connection dialled from the
// calling goroutine (http.Client would dial from another goroutine, on a
// thread outside the namespace).
func httpDo(addr, method, path, contentType, body string) (int, string, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return 0, "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	req := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\nConnection: close\r\n", method, path, addr, len(body))
	if contentType != "" {
		req += "Content-Type: " + contentType + "\r\n"
	}
	if _, err := c.Write([]byte(req + "\r\n" + body)); err != nil {
		return 0, "", err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, err = bufio.NewReader(resp.Body).WriteTo(&b)
	return resp.StatusCode, b.String(), err
}
