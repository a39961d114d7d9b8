package handler

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
)

// Authenticator decides whether a request may send data. It sees only the
// headers: it runs before a byte of the body is read.
type Authenticator interface {
	Authenticate(r *http.Request) bool
}

// TokenFile authenticates "authorization: Bearer <token>" against the
// tokens in a file, one per line (blank lines and lines starting with # are
// ignored). Tokens are compared in constant time, as SHA-256 digests so that
// not even their lengths leak, and never logged. Reload re-reads the file;
// Watch does so whenever it changes.
type TokenFile struct {
	path string
	mu   sync.RWMutex
	sums [][sha256.Size]byte
	mod  time.Time
	size int64
}

// NewTokenFile reads the tokens in path. A file with no tokens is an error:
// it would refuse every request.
func NewTokenFile(path string) (*TokenFile, error) {
	tf := &TokenFile{path: path}
	if err := tf.Reload(); err != nil {
		return nil, err
	}
	return tf, nil
}

// Reload re-reads the file. On error the previous tokens stay in force.
func (tf *TokenFile) Reload() error {
	fi, err := os.Stat(tf.path)
	if err != nil {
		return fmt.Errorf("cannot read token file: %w", err)
	}
	data, err := os.ReadFile(tf.path)
	if err != nil {
		return fmt.Errorf("cannot read token file: %w", err)
	}
	var sums [][sha256.Size]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sums = append(sums, sha256.Sum256([]byte(line)))
	}
	if len(sums) == 0 {
		return fmt.Errorf("token file %s has no tokens", tf.path)
	}
	tf.mu.Lock()
	tf.sums, tf.mod, tf.size = sums, fi.ModTime(), fi.Size()
	tf.mu.Unlock()
	return nil
}

// changed reports whether the file's modification time or size differs
// from what was last loaded.
func (tf *TokenFile) changed() bool {
	fi, err := os.Stat(tf.path)
	if err != nil {
		return false
	}
	tf.mu.RLock()
	defer tf.mu.RUnlock()
	return !fi.ModTime().Equal(tf.mod) || fi.Size() != tf.size
}

// Watch polls the file every interval until stop is closed and reloads it
// when it changes, reporting reload errors to onError.
func (tf *TokenFile) Watch(interval time.Duration, stop <-chan struct{}, onError func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if tf.changed() {
				if err := tf.Reload(); err != nil && onError != nil {
					onError(err)
				}
			}
		}
	}
}

// Authenticate implements Authenticator.
func (tf *TokenFile) Authenticate(r *http.Request) bool {
	v := r.Header.Get("Authorization")
	const prefix = "bearer "
	if len(v) <= len(prefix) || !strings.EqualFold(v[:len(prefix)], prefix) {
		return false
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(v[len(prefix):])))
	tf.mu.RLock()
	defer tf.mu.RUnlock()
	ok := 0
	for i := range tf.sums {
		// Check every token, so the time taken does not say which matched.
		ok |= subtle.ConstantTimeCompare(sum[:], tf.sums[i][:])
	}
	return ok == 1
}

// authenticate answers an unauthenticated request and reports false. gRPC
// health checks are exempt (load balancers probe without credentials), as
// are CORS preflights (browsers send them without credentials).
func (h *Handler) authenticate(w http.ResponseWriter, r *http.Request, grpc bool) bool {
	if h.auth == nil || h.auth.Authenticate(r) {
		return true
	}
	st := grpcwire.Errorf(grpcwire.Unauthenticated, "missing or invalid bearer token: send the header authorization: Bearer <token>")
	if grpc {
		if service, _, ok := splitMethod(r.URL.Path); ok && service == healthService {
			return true
		}
		call, early := grpcwire.StartCall(w, r, h.limits)
		if early != nil {
			// StartCall answered a malformed call itself.
			h.recordRefusal(r, transportGRPC, 0, early)
			return false
		}
		h.refuseGRPC(call, transportGRPC, st)
		call.Close()
		return false
	}
	if r.Method == http.MethodOptions && h.cors.enabled() {
		return true
	}
	// CORS headers on the 401 too, so a browser client sees the 401
	// rather than an opaque CORS failure.
	h.cors.apply(w, r)
	w.Header().Set("WWW-Authenticate", `Bearer realm="otlp-lite"`)
	h.writeHTTPError(w, r, requestEncoding(r), http.StatusUnauthorized, st)
	return false
}
