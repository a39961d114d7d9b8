package server

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// UnixPrefix starts an address that names a Unix domain socket:
// "unix:/run/otlp-lite/otlp.sock" (an absolute or relative path; the
// filesystem namespace only).
const UnixPrefix = "unix:"

// DefaultUnixSocketMode is the permission bits of a socket Listen creates
// unless ListenConfig.UnixSocketMode says otherwise: the owner and its group
// may connect (connecting needs write permission), as Docker's and
// containerd's sockets; nobody else may.
const DefaultUnixSocketMode fs.FileMode = 0o660

// ListenConfig says how Listen opens its listeners.
type ListenConfig struct {
	// UnixSocketMode is the permission bits of each Unix socket file;
	// 0 means DefaultUnixSocketMode. The socket is given them before it
	// appears under its name (it is bound in a new directory of mode
	// 0700 beside it, chmod-ed, then linked under its name), so no client
	// of another user ever finds it with the process umask's permissions.
	UnixSocketMode fs.FileMode
}

// ParseAddr splits a listener address into its network and address:
// ("unix", path) for "unix:PATH", ("tcp", addr) for anything else.
func ParseAddr(addr string) (network, address string) {
	if path, ok := strings.CutPrefix(addr, UnixPrefix); ok {
		return "unix", path
	}
	return "tcp", addr
}

// CheckAddr says why addr cannot be listened on, if it cannot: a
// "unix:PATH" must name a path that fits a socket address, anything else
// must be host:port.
func CheckAddr(addr string) error {
	network, a := ParseAddr(addr)
	if network == "unix" {
		if a == "" {
			return errors.New("want unix:PATH, a socket file's path")
		}
		if a[0] == '@' {
			// Linux's abstract namespace has no file, so no permissions:
			// any process of the network namespace could connect.
			return errors.New("abstract Unix sockets (@name) are not supported: they have no permissions; give a path")
		}
		// sun_path is 108 bytes on Linux (104 on the BSDs) with its NUL;
		// the temporary name adds tempSuffixLen.
		if len(a)+tempSuffixLen > maxUnixPath {
			return fmt.Errorf("socket path longer than %d bytes (a Unix socket address holds %d)", maxUnixPath-tempSuffixLen, maxUnixPath)
		}
		return nil
	}
	if _, _, err := net.SplitHostPort(a); err != nil {
		return fmt.Errorf("want host:port (:4317 for every interface) or unix:PATH: %v", err)
	}
	return nil
}

const (
	maxUnixPath   = 103               // 104-byte sun_path of the BSDs less its NUL: the smallest of the systems Go serves
	tempSuffixLen = len(".tmp-") + 20 // MkdirTemp's random part (at most 10 digits) and "/s" fit
)

// Listen listens on every address, or returns an error and listens on
// none: TCP for host:port, a Unix socket for unix:PATH (see
// ListenConfig.Listen). A caller that must bind before it can build its
// handler (otlp-lite binds before opening its store, so a busy port is
// found at once) listens first and then calls Serve for each listener.
func Listen(addrs ...string) ([]net.Listener, error) {
	return ListenConfig{}.Listen(addrs...)
}

// Listen listens on every address, or returns an error and listens on none.
//
// A unix:PATH whose file exists is taken over only if it is a socket that
// nobody answers on (left by a process that crashed): another file is never
// removed, and a socket a live process serves is an error, as a busy port
// is. The socket file is removed when its listener is closed, unless
// another process has replaced it meanwhile.
func (lc ListenConfig) Listen(addrs ...string) ([]net.Listener, error) {
	var lns []net.Listener
	for _, addr := range addrs {
		ln, err := lc.listen(addr)
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, fmt.Errorf("cannot listen on %s: %w", addr, err)
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

func (lc ListenConfig) listen(addr string) (net.Listener, error) {
	network, a := ParseAddr(addr)
	if network == "tcp" {
		return net.Listen("tcp", a)
	}
	if err := CheckAddr(addr); err != nil {
		return nil, err
	}
	mode := lc.UnixSocketMode
	if mode == 0 {
		mode = DefaultUnixSocketMode
	}
	return listenUnix(a, mode.Perm())
}

// staleProbeTimeout bounds the connect that tells a live socket from a
// stale one: a live server accepts within the backlog at once.
const staleProbeTimeout = time.Second

func listenUnix(path string, mode fs.FileMode) (net.Listener, error) {
	if err := removeStale(path); err != nil {
		return nil, err
	}
	// The socket is bound in a directory of its own, which only this
	// user may enter (MkdirTemp's 0700; a umask only takes bits away):
	// bind gives it the umask's permissions, and until the chmod below no
	// other user can reach it to connect, nor replace it with a symlink
	// for the chmod to follow. The directory's name is random, so nobody
	// can prepare it.
	dir, err := os.MkdirTemp(filepath.Dir(path), filepath.Base(path)+".tmp-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(dir) // empty by then: the socket is linked out, or failed
	tmp := filepath.Join(dir, "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, err
	}
	// The listener removes the file under its final name itself.
	ln.SetUnlinkOnClose(false)
	defer os.Remove(tmp)
	fail := func(err error) (net.Listener, error) {
		ln.Close()
		return nil, err
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return fail(err)
	}
	if beforeUnixPublish != nil {
		beforeUnixPublish(tmp)
	}
	// Published with link(2), which fails if the name exists: a socket
	// another process put there since removeStale (two starts at once)
	// is never replaced, as rename(2) would replace it.
	if err := os.Link(tmp, path); err != nil {
		switch {
		case errors.Is(err, fs.ErrExist):
			return fail(fmt.Errorf("%s is in use: another process created it while this one started", path))
		case errors.Is(err, syscall.EPERM) || errors.Is(err, errors.ErrUnsupported):
			// A filesystem without hard links: checked again, then
			// renamed (a socket created between the two is replaced).
			if err := removeStale(path); err != nil {
				return fail(err)
			}
			if err := os.Rename(tmp, path); err != nil {
				return fail(err)
			}
		default:
			return fail(err)
		}
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return fail(err)
	}
	return &unixListener{UnixListener: ln, path: path, file: fi, addr: &net.UnixAddr{Name: path, Net: "unix"}}, nil
}

// beforeUnixPublish, when set (tests), is called with the bound socket's
// temporary name before it is published under its own.
var beforeUnixPublish func(tmp string)

// removeStale removes path if it is a socket nobody accepts connections
// on; it fails if path is another kind of file or a live socket, and does
// nothing if there is no file.
func removeStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("%s exists and is not a socket: not removing it", path)
	}
	c, err := net.DialTimeout("unix", path, staleProbeTimeout)
	if err == nil {
		c.Close()
		return fmt.Errorf("%s is in use: another process accepts connections on it", path)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		// EACCES (not ours to probe), a timeout (a live server with a full
		// backlog): not provably stale.
		return fmt.Errorf("%s exists and cannot be probed: %w", path, err)
	}
	// The file probed is the one removed: a socket another process has
	// put in its place since (it took the stale one over first) stays.
	if now, err := os.Lstat(path); err != nil || !os.SameFile(now, fi) {
		return fmt.Errorf("%s changed while it was probed: another process is taking it over", path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot remove stale socket %s: %w", path, err)
	}
	return nil
}

// unixListener is a Unix socket listener created by Listen: it removes its
// socket file when closed (if the file is still the one it created), and
// gives each connection an address of its own (unixPeer).
type unixListener struct {
	*net.UnixListener
	path string
	file fs.FileInfo
	addr *net.UnixAddr
	once atomic.Bool
}

func (l *unixListener) Addr() net.Addr { return l.addr }

func (l *unixListener) Accept() (net.Conn, error) {
	c, err := l.UnixListener.AcceptUnix()
	if err != nil {
		return nil, err
	}
	return &unixConn{UnixConn: c, peer: newUnixPeer(c)}, nil
}

func (l *unixListener) Close() error {
	err := l.UnixListener.Close()
	if l.once.CompareAndSwap(false, true) {
		if fi, serr := os.Lstat(l.path); serr == nil && os.SameFile(fi, l.file) {
			os.Remove(l.path)
		}
	}
	return err
}

// unixPeerListener gives each connection of a Unix listener not created
// by Listen a unixPeer address.
type unixPeerListener struct{ *net.UnixListener }

func (l unixPeerListener) Accept() (net.Conn, error) {
	c, err := l.UnixListener.AcceptUnix()
	if err != nil {
		return nil, err
	}
	return &unixConn{UnixConn: c, peer: newUnixPeer(c)}, nil
}

// unixConn is a connection accepted on a Unix socket, whose RemoteAddr is
// the unixPeer that names it.
type unixConn struct {
	*net.UnixConn
	peer unixPeer
}

func (c *unixConn) RemoteAddr() net.Addr { return c.peer }

// unixConnSeq numbers the connections accepted on Unix sockets.
var unixConnSeq atomic.Uint64

// unixPeer is the client address of a Unix socket connection. A client's
// socket has no name (its RemoteAddr is ""), which would make every Unix
// client one peer in the request log and in what is counted per
// connection (health Watch streams). So it is the process the kernel
// says connected (SO_PEERCRED, on Linux) and a number unique to the
// connection: "unix:pid:1234,uid:1000,conn:7" ("unix:conn:7" where the
// credentials are unknown).
type unixPeer struct{ s string }

func (p unixPeer) Network() string { return "unix" }
func (p unixPeer) String() string  { return p.s }

func newUnixPeer(c *net.UnixConn) unixPeer {
	seq := strconv.FormatUint(unixConnSeq.Add(1), 10)
	if cred := peerCred(c); cred != "" {
		return unixPeer{UnixPrefix + cred + ",conn:" + seq}
	}
	return unixPeer{UnixPrefix + "conn:" + seq}
}
