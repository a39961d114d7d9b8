package handler

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/internal/connstate"
	"github.com/otlp-lite/otlp-lite/internal/watchfile"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// isHealthPath reports whether path is a method of the gRPC health service.
func isHealthPath(path string) bool {
	service, _, ok := splitMethod(path)
	return ok && service == healthService
}

// Authenticator decides whether a request may send data. It sees only the
// headers: it runs before a byte of the body is read.
type Authenticator interface {
	Authenticate(r *http.Request) bool
}

// TokenFile authenticates "authorization: Bearer <token>" against the
// tokens in a file, one per line (blank lines and lines starting with # are
// ignored). A token is visible ASCII without spaces, since it travels in an
// HTTP header; a line that cannot be one (a "Bearer " prefix, control
// characters, binary data) makes the file invalid, naming the line, rather
// than adding a token that can never match. Tokens are compared in constant
// time, as SHA-256 digests so that not even their lengths leak, and never
// logged. Reload re-reads the file; Watch does so whenever it changes.
//
// A token may name its tenant (tenancy, tenant.go) after it, separated by
// spaces or tabs:
//
//	s3cr3t-token-of-team-a tenant=team-a
//
// Files without tenants read as before; a field other than tenant= is an
// error naming the line, as is a tenant name otlp.CheckTenantName refuses.
type TokenFile struct {
	path string
	mu   sync.RWMutex
	sums [][sha256.Size]byte
	// tenants[i] is the tenant of sums[i], "" for none.
	tenants    []string
	hasTenants bool
	mod        time.Time
	size       int64
	// loadedAt is when the tokens in force were loaded.
	loadedAt time.Time
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
	sums, tenants, hasTenants, err := parseTokenFile(tf.path, data)
	if err != nil {
		return err
	}
	if len(sums) == 0 {
		return fmt.Errorf("token file %s has no tokens", tf.path)
	}
	tf.mu.Lock()
	tf.sums, tf.mod, tf.size, tf.loadedAt = sums, fi.ModTime(), fi.Size(), time.Now()
	tf.tenants, tf.hasTenants = tenants, hasTenants
	tf.mu.Unlock()
	return nil
}

// parseTokenFile parses a token file's contents: the tokens' digests, each
// token's tenant ("" for none), and whether any names one.
func parseTokenFile(path string, data []byte) (sums [][sha256.Size]byte, tenants []string, hasTenants bool, err error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		token, rest := line, ""
		if i := strings.IndexAny(line, " \t"); i >= 0 && !strings.EqualFold(line[:i], "bearer") {
			// A "Bearer <token>" line stays whole: checkToken names
			// that mistake.
			token, rest = line[:i], line[i+1:]
		}
		if err := checkToken(token); err != nil {
			return nil, nil, false, fmt.Errorf("token file %s, line %d: %w", path, n, err)
		}
		tenant := ""
		for _, f := range strings.Fields(rest) {
			v, ok := strings.CutPrefix(f, "tenant=")
			if !ok {
				return nil, nil, false, fmt.Errorf("token file %s, line %d: after the token, want only tenant=NAME (a token is one word of visible ASCII)", path, n)
			}
			if tenant != "" {
				return nil, nil, false, fmt.Errorf("token file %s, line %d: tenant= is given twice", path, n)
			}
			if err := otlp.CheckClientTenantName(v); err != nil {
				return nil, nil, false, fmt.Errorf("token file %s, line %d: the tenant name %w", path, n, err)
			}
			tenant, hasTenants = v, true
		}
		sums = append(sums, sha256.Sum256([]byte(token)))
		tenants = append(tenants, tenant)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, false, fmt.Errorf("cannot read token file %s: %w", path, err)
	}
	return sums, tenants, hasTenants, nil
}

// checkToken says why line cannot be a bearer token, if it cannot. The
// message never quotes the line: it may be a secret.
func checkToken(line string) error {
	if len(line) > 7 && strings.EqualFold(line[:7], "bearer ") {
		return errors.New(`starts with "Bearer ": write the token alone, the client adds the scheme`)
	}
	for i := 0; i < len(line); i++ {
		if c := line[i]; c <= ' ' || c >= 0x7f {
			return fmt.Errorf("byte %d is not visible ASCII (a space, a control character or binary data): a bearer token travels in an HTTP header", i+1)
		}
	}
	return nil
}

// Tokens returns how many tokens are in force and when they were loaded.
func (tf *TokenFile) Tokens() (n int, loadedAt time.Time) {
	tf.mu.RLock()
	defer tf.mu.RUnlock()
	return len(tf.sums), tf.loadedAt
}

// changed reports whether the file's modification time or size differs
// from what was last loaded, or whether it can no longer be read (deleted,
// say), which Reload then reports.
func (tf *TokenFile) changed() bool {
	tf.mu.RLock()
	mod, size := tf.mod, tf.size
	tf.mu.RUnlock()
	return watchfile.Changed(tf.path, mod, size)
}

// Watch polls the file every interval until stop is closed and reloads it
// when it changes. It calls report after each reload with the number of
// tokens in force and the reload's error (nil on success; on error the
// previous tokens stay in force); a failure that persists (a deleted file)
// is reported once, not at every poll.
func (tf *TokenFile) Watch(interval time.Duration, stop <-chan struct{}, report func(tokens int, err error)) {
	watchfile.Watch(interval, stop, tf.changed, tf.Reload, func(err error) {
		if report != nil {
			n, _ := tf.Tokens()
			report(n, err)
		}
	})
}

// HasTenants reports whether any token names a tenant: the binary turns
// tenancy on when one does.
func (tf *TokenFile) HasTenants() bool {
	tf.mu.RLock()
	defer tf.mu.RUnlock()
	return tf.hasTenants
}

// Authenticate implements Authenticator.
func (tf *TokenFile) Authenticate(r *http.Request) bool {
	_, ok := tf.AuthenticateTenant(r)
	return ok
}

// AuthenticateTenant implements TenantAuthenticator: the tenant is the
// one the matching token's line names, "" if none.
func (tf *TokenFile) AuthenticateTenant(r *http.Request) (string, bool) {
	v := r.Header.Get("Authorization")
	const prefix = "bearer "
	if len(v) <= len(prefix) || !strings.EqualFold(v[:len(prefix)], prefix) {
		return "", false
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(v[len(prefix):])))
	tf.mu.RLock()
	defer tf.mu.RUnlock()
	ok, match := 0, 0
	for i := range tf.sums {
		// Check every token, so the time taken does not say which matched.
		eq := subtle.ConstantTimeCompare(sum[:], tf.sums[i][:])
		ok |= eq
		match = subtle.ConstantTimeSelect(eq, i, match)
	}
	if ok != 1 {
		return "", false
	}
	return tf.tenants[match], true
}

// authenticate answers an unauthenticated request and reports false. gRPC
// health checks are exempt (load balancers probe without credentials), as
// are CORS preflights (browsers send them without credentials).
//
// With tenancy on, tenant is the tenant the credentials name, if any.
//
// A request that passes (without auth: any request but a health check)
// marks its connection authenticated (connstate): the server sheds
// connections that never did first, and keeps them within their own share
// of the connection limit, so tokenless clients cannot displace
// authenticated ones.
func (h *Handler) authenticate(w http.ResponseWriter, r *http.Request, grpc bool) (tenant string, ok bool) {
	if h.auth == nil {
		if !grpc || !isHealthPath(r.URL.Path) {
			connstate.FromContext(r.Context()).SetAuthenticated()
		}
		return "", true
	}
	if ta, isTA := h.auth.(TenantAuthenticator); isTA && h.ten != nil {
		tenant, ok = ta.AuthenticateTenant(r)
	} else {
		ok = h.auth.Authenticate(r)
	}
	if ok {
		connstate.FromContext(r.Context()).SetAuthenticated()
		return tenant, true
	}
	st := grpcwire.Errorf(grpcwire.Unauthenticated, "missing or invalid bearer token: send the header authorization: Bearer <token>")
	if grpc {
		if isHealthPath(r.URL.Path) {
			return "", true
		}
		call, early := grpcwire.StartCall(w, r, h.limits)
		if early != nil {
			// StartCall answered a malformed call itself.
			h.recordRefusal(r, ingest.GRPC, 0, early)
			return "", false
		}
		h.refuseGRPC(call, ingest.GRPC, st)
		call.Close()
		return "", false
	}
	if r.Method == http.MethodOptions && h.cors.enabled() {
		return "", true
	}
	// CORS headers on the 401 too, so a browser client sees the 401
	// rather than an opaque CORS failure.
	h.cors.apply(w, r)
	w.Header().Set("WWW-Authenticate", `Bearer realm="otlp-lite"`)
	h.writeHTTPError(w, r, requestEncoding(r), http.StatusUnauthorized, st)
	return "", false
}
