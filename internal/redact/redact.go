// Package redact decides what is secret, and hides it in every output of
// the process: flag errors, logs, /config, the status page, /metrics and
// pprof's command line all pass what they print through it, so that there
// is one rule, not one per output.
//
// Two layers, each covering what the other cannot:
//
//   - By structure: Name says whether a value called so (a flag, a URL
//     parameter, a header, an environment variable) is a secret; URL hides
//     the secrets a URL carries (its userinfo, credential headers in
//     header=Name:Value, secret parameters) even when it does not parse;
//     Args hides them in a command line. These need no registration and
//     work on secrets of any length.
//   - By value: every secret the process is given (Register: a SASL
//     password, a forwarding destination's credential header) is replaced
//     wherever it shows up in free text (String, Line): an error a library
//     formats, a destination's response echoing our Authorization header, a
//     Kafka client's log line.
//
// It imports nothing of the module: every layer can use it.
package redact

import (
	"encoding/json"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
)

// Mark is what every output shows instead of a secret.
const Mark = "<redacted>"

// secretWords are the parts of a name that make its value a secret:
// passwords, tokens, credentials and the headers that carry them
// (Authorization, Proxy-Authorization, Cookie, Set-Cookie, X-Auth-Token,
// X-Api-Key...). Matching by part of the name, not by a list of names, is
// deliberate: a header or parameter we never heard of is judged by the
// same rule, and a false positive only hides a value.
var secretWords = []string{"passw", "pwd", "secret", "token", "auth", "cookie", "credential", "apikey", "private"}

// lastWords are the last words of names whose values are secrets, where
// the same word elsewhere is not: X-Api-Key but not
// kafka-message-key-from-metadata-key-traces, X-Session but not
// kafka-consume-session-timeout.
var lastWords = []string{"key", "session", "sessionid", "sid"}

// locationWords end names whose value says where a secret is, or whose it
// is, not what it is: -auth-token-file is a path (the file's contents are
// secret), sasl-password-env a variable's name, sasl-username an identity.
var locationWords = []string{"file", "env", "path", "dir", "mechanism", "username", "user"}

// Name reports whether the value of something called name (a flag such as
// kafka-sasl-password, a URL parameter, a request or record header, an
// environment variable) is a secret. The rule, on the lower-cased name:
//
//   - not if its last word (words are split at anything but letters and
//     digits) is a location: file, env, path, dir, or an identity:
//     mechanism, user, username;
//   - not if a word is tls: tls-key, tls-cert, tls-ca name files (client
//     TLS key paths are not secret; key material is, and is never printed);
//   - yes if it contains passw, pwd, secret, token, auth, cookie,
//     credential, apikey or private, or its last word is key, session,
//     sessionid or sid (or it ends in session-id): X-Api-Key, api_key,
//     X-Session-Id; not kafka-message-key-from-metadata-key-traces nor
//     kafka-consume-session-timeout.
func Name(name string) bool {
	n := strings.ToLower(name)
	words := strings.FieldsFunc(n, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(words) == 0 {
		return false
	}
	last := words[len(words)-1]
	if slices.Contains(locationWords, last) || slices.Contains(words, "tls") {
		return false
	}
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	if len(words) > 1 && words[len(words)-2] == "session" && last == "id" {
		return true // X-Session-Id
	}
	return slices.Contains(lastWords, last)
}

// Value returns value, or Mark if it is a secret by its name (Name) and
// not empty: an unset secret shows as unset.
func Value(name, value string) string {
	if value != "" && Name(name) {
		return Mark
	}
	return value
}

// urlSecret is one secret in a URL's text: raw[start:end].
type urlSecret struct{ start, end int }

// urlSecrets finds the secrets of raw, which need not parse as a URL (a
// refused URL is quoted in errors too): the userinfo after :// (its
// password, or all of it without one: a lone user is often a token), the
// value of each query parameter whose name is a secret, and of each
// header=Name:Value whose Name is (all of it if it has no colon: a
// malformed header cannot be judged).
func urlSecrets(raw string) []urlSecret {
	var out []urlSecret
	if i := strings.Index(raw, "://"); i >= 0 {
		rest := raw[i+3:]
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 {
			start := i + 3
			if c := strings.IndexByte(rest[:at], ':'); c >= 0 {
				start += c + 1
			}
			if start < i+3+at {
				out = append(out, urlSecret{start, i + 3 + at})
			}
		}
	}
	q := strings.IndexByte(raw, '?')
	if q < 0 {
		return out
	}
	for pos := q + 1; pos < len(raw); {
		end := strings.IndexAny(raw[pos:], "&;")
		if end < 0 {
			end = len(raw) - pos
		}
		param := raw[pos : pos+end]
		if k, v, ok := strings.Cut(param, "="); ok && v != "" {
			vstart := pos + len(k) + 1
			switch key := unescape(k); {
			case key == "header":
				hv := unescape(v)
				name, _, hasColon := strings.Cut(hv, ":")
				switch {
				case !hasColon:
					out = append(out, urlSecret{vstart, pos + end})
				case Name(name):
					// The value starts after the first colon, written
					// raw or as %3A.
					if c := colonIn(v); c >= 0 && c < len(v) {
						out = append(out, urlSecret{vstart + c, pos + end})
					}
				}
			case Name(key):
				out = append(out, urlSecret{vstart, pos + end})
			}
		}
		pos += end + 1
	}
	return out
}

// colonIn returns the index in v (as written) just past its first colon,
// raw or percent-encoded, or -1.
func colonIn(v string) int {
	for i := 0; i < len(v); i++ {
		if v[i] == ':' {
			return i + 1
		}
		if v[i] == '%' && i+2 < len(v) && v[i+1] == '3' && (v[i+2] == 'a' || v[i+2] == 'A') {
			return i + 3
		}
	}
	return -1
}

func unescape(s string) string {
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s
}

// URL returns raw with each of its secrets replaced by Mark: the password
// of its userinfo (all of the userinfo without one), the value of a query
// parameter whose name is a secret (Name), the value of a header=Name:Value
// parameter whose Name is a secret (all of it if it has no colon). raw need
// not parse: what an operator mistyped is shown, redacted, in the error.
func URL(raw string) string {
	secrets := urlSecrets(raw)
	if len(secrets) == 0 {
		return raw
	}
	var b strings.Builder
	last := 0
	for _, s := range secrets {
		b.WriteString(raw[last:s.start])
		b.WriteString(Mark)
		last = s.end
	}
	b.WriteString(raw[last:])
	return b.String()
}

// URLSecrets returns the secrets of raw (see URL), each as written and
// decoded, for Register: an error may quote either form.
func URLSecrets(raw string) []string {
	var out []string
	for _, s := range urlSecrets(raw) {
		v := raw[s.start:s.end]
		out = append(out, v, unescape(v))
	}
	return out
}

// Args returns a command line with its secrets hidden: the value of a
// flag whose name is a secret (-kafka-sasl-password X, or =X), the secrets
// of every URL (URL), and every registered secret (String). It needs no
// list of the command's flags: a flag given as -name followed by a word
// is taken to have that word as its value when its name is a secret.
func Args(args []string) []string {
	out := make([]string, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if name, ok := flagName(a); ok {
			if n, v, hasValue := strings.Cut(name, "="); hasValue {
				out[i] = String(URL(a[:len(a)-len(v)] + Value(n, v)))
				continue
			}
			out[i] = a
			if Name(name) && i+1 < len(args) {
				i++
				out[i] = Value(name, args[i])
			}
			continue
		}
		out[i] = String(URL(a))
	}
	return out
}

// flagName returns a's name (and =value) without its dashes, if a is a flag.
func flagName(a string) (string, bool) {
	if len(a) < 2 || a[0] != '-' || a == "--" {
		return "", false
	}
	a = strings.TrimPrefix(a[1:], "-")
	return a, a != "" && a[0] != '-'
}

// MinLen is the shortest secret Register remembers: a shorter value would
// be found inside ordinary words and numbers everywhere (and is too weak to
// protect much); where structure says a value is a secret (Name, URL,
// Args), it is hidden whatever its length.
const MinLen = 4

// values is the set of registered secrets (every form), replacer what
// hides them (nil while there are none: String then costs one atomic
// load).
var (
	mu       sync.Mutex
	values   = map[string]bool{}
	replacer atomic.Pointer[strings.Replacer]
)

// Register adds secrets the process holds, so that String and Line hide
// them wherever they appear, in every form an output may quote them in
// (see forms). Values shorter than MinLen are not (see MinLen). Register
// anything read where a secret can go, valid or not: hiding a value that
// was not a secret only costs a Mark.
func Register(secrets ...string) {
	mu.Lock()
	defer mu.Unlock()
	added := false
	for _, s := range secrets {
		for _, v := range forms(s) {
			if len(v) >= MinLen && !values[v] {
				values[v], added = true, true
			}
		}
	}
	if !added {
		return
	}
	all := make([]string, 0, len(values))
	for v := range values {
		all = append(all, v)
	}
	replacer.Store(newReplacer(all))
}

// forms are the ways an output may quote secret s: as is, URL-escaped
// (query and path), Go-quoted (%q) and JSON-quoted without the quotes and,
// for a header value with an authentication scheme (Bearer TOKEN, Basic
// ...), the same for the credential alone.
func forms(s string) []string {
	var out []string
	add := func(v string) {
		out = append(out, v, url.QueryEscape(v), url.PathEscape(v))
		if q := strconv.Quote(v); len(q) > 2 {
			out = append(out, q[1:len(q)-1])
		}
		if j, err := json.Marshal(v); err == nil && len(j) > 2 {
			out = append(out, string(j[1:len(j)-1]))
		}
	}
	add(s)
	if f := strings.Fields(s); len(f) > 1 {
		for _, part := range f[1:] {
			add(part)
		}
	}
	return out
}

// newReplacer replaces each of secrets by Mark, longest first: a secret
// that contains another is hidden whole.
func newReplacer(secrets []string) *strings.Replacer {
	secrets = slices.Clone(secrets)
	slices.SortFunc(secrets, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	secrets = slices.Compact(secrets)
	pairs := make([]string, 0, 2*len(secrets))
	for _, v := range secrets {
		if v != "" {
			pairs = append(pairs, v, Mark)
		}
	}
	return strings.NewReplacer(pairs...)
}

// Hide returns s with the given secrets, in every form (see forms) and of
// any length, and every registered secret replaced by Mark: for a message
// about the value the secrets came from (an error quoting a refused URL),
// where a short secret is still worth hiding.
func Hide(s string, secrets ...string) string {
	var all []string
	for _, v := range secrets {
		all = append(all, forms(v)...)
	}
	if len(all) > 0 {
		s = newReplacer(all).Replace(s)
	}
	return String(s)
}

// Active reports whether any secret is registered: an output that must
// buffer to redact (a whole exposition) need not when none is.
func Active() bool { return replacer.Load() != nil }

// String returns s with every registered secret replaced by Mark.
func String(s string) string {
	r := replacer.Load()
	if r == nil {
		return s
	}
	return r.Replace(s)
}

// Writer returns w with every registered secret hidden in each Write: the
// last net under outputs that print messages directly (a command's
// stderr), each written in one call as fmt.Fprintf and slog's handlers
// do. It is not for binary data: a secret's bytes inside it would be
// replaced too.
func Writer(w io.Writer) io.Writer { return writer{w} }

type writer struct{ w io.Writer }

func (w writer) Write(p []byte) (int, error) {
	r := replacer.Load()
	if r == nil {
		return w.w.Write(p)
	}
	if _, err := io.WriteString(w.w, r.Replace(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Line is String for an output that promises one line per message (an
// error on stderr, a log value): it also escapes control characters
// (a newline as \n, others as \x1b or \u0085), so that a value cannot
// break the line or forge another one, nor drive the terminal.
func Line(s string) string {
	s = String(s)
	clean := true
	for _, r := range s {
		if isControl(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case isControl(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isControl reports the runes Line escapes: C0 and C1 controls, the line
// and paragraph separators, and invalid UTF-8.
func isControl(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 || r == utf8.RuneError
}
