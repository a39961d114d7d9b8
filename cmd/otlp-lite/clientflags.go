package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/internal/redact"
	"github.com/otlp-lite/otlp-lite/otlpclient"
)

// clientFlags are the connection flags of the commands that send to a
// receiver (loadgen and replay): transport security, credentials, extra
// headers and compression. Both commands register them here, so the flags
// have the same names, meanings and checks in both.
//
// Transport security follows the OpenTelemetry exporters' settings
// (configtls: ca_file, cert_file, key_file, server_name_override,
// insecure, insecure_skip_verify), as flags.
type clientFlags struct {
	cmd        string
	tlsDefault bool     // TLS unless -insecure (replay), or h2c unless -tls (loadgen)
	codecs     []string // the -compression values the command takes

	tlsOn, insecure           bool
	caFile, certFile, keyFile string
	serverName                string
	skipVerify                bool
	token, tokenFile          string
	headers                   headerFlag
	compression               string
	// streamCompression offers stateful compression on streams.
	streamCompression bool
	// streamColumns offers the columnar transform under it.
	streamColumns bool

	// Set by check.
	explicit map[string]bool // the flags given on the command line
	tls      *tls.Config     // nil for h2c
	header   http.Header     // -header and the token
	codec    compression.Codec
}

// tlsFileFlags are the flags that only make sense with TLS: giving one
// turns TLS on for a command that speaks h2c by default.
var tlsFileFlags = []string{"tls-ca", "tls-cert", "tls-key", "tls-server-name", "tls-insecure-skip-verify"}

// register adds the flags to fs. tlsDefault is whether the command uses
// TLS unless -insecure; codecs are its -compression values, the first the
// default.
func (c *clientFlags) register(fs *flag.FlagSet, tlsDefault bool, codecs ...string) {
	c.cmd, c.tlsDefault, c.codecs = fs.Name(), tlsDefault, codecs
	tlsHelp := "connect with TLS (-insecure turns it off)"
	if !tlsDefault {
		tlsHelp = "connect with TLS, not h2c; any -tls-* flag implies it"
	}
	fs.BoolVar(&c.tlsOn, "tls", tlsDefault, tlsHelp)
	fs.BoolVar(&c.insecure, "insecure", !tlsDefault, "connect without TLS: h2c for gRPC, http:// for OTLP/HTTP")
	fs.StringVar(&c.caFile, "tls-ca", "", "CA certificates (PEM) that sign the receiver's certificate, instead of the system's roots")
	fs.StringVar(&c.certFile, "tls-cert", "", "client certificate (PEM) for a receiver that wants mTLS (serve -tls-client-ca); needs -tls-key")
	fs.StringVar(&c.keyFile, "tls-key", "", "private key (PEM) of -tls-cert")
	fs.StringVar(&c.serverName, "tls-server-name", "", "name the receiver's certificate must have (default: -endpoint's host; required for a unix: -endpoint, whose path names no host)")
	fs.BoolVar(&c.skipVerify, "tls-insecure-skip-verify", false, "accept any receiver certificate (tests only: anyone on the path can read and change the data)")
	fs.StringVar(&c.token, "token", "", "bearer token sent as 'authorization: Bearer TOKEN' (serve -auth-token-file); visible to other users in ps, so prefer -token-file")
	fs.StringVar(&c.tokenFile, "token-file", "", "file holding the bearer token: its first line that is not blank or a # comment, so serve's -auth-token-file can be used as is")
	fs.Var(&c.headers, "header", "extra request header NAME:VALUE, repeatable (a tenant or routing header, say)")
	fs.StringVar(&c.compression, "compression", codecs[0], "request compression: "+strings.Join(codecs, ", "))
	fs.BoolVar(&c.streamCompression, "stream-compression", true, "on a stream, offer stateful zstd (one compressor for the stream's life), used when the server accepts it; false compresses each message alone with -compression")
	fs.BoolVar(&c.streamColumns, "stream-columns", true, "on a stream with stateful zstd, also offer the columnar transform under it (fewer bytes, less server CPU for batches, more client CPU and memory: docs/streaming.md), used when the server accepts it; -stream-columns=false sends zstd alone")
}

// check validates the flags once fs is parsed and prepares the TLS
// configuration, the headers and the codec for endpoint. Every mistake is
// caught here, before anything is sent, as a one-line error.
func (c *clientFlags) check(fs *flag.FlagSet, endpoint string) error {
	c.explicit = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { c.explicit[f.Name] = true })
	if c.explicit["tls"] && c.explicit["insecure"] && c.tlsOn == c.insecure {
		return errors.New("-tls and -insecure contradict each other: give one")
	}
	useTLS := c.tlsDefault
	switch {
	case c.explicit["insecure"]:
		useTLS = !c.insecure
	case c.explicit["tls"]:
		useTLS = c.tlsOn
	}
	for _, name := range tlsFileFlags {
		if !c.explicit[name] || useTLS {
			continue
		}
		if c.explicit["insecure"] || c.explicit["tls"] {
			return fmt.Errorf("-%s needs TLS, which -insecure (or -tls=false) turns off", name)
		}
		useTLS = true
	}
	if useTLS {
		cfg, err := c.tlsConfig(endpoint)
		if err != nil {
			return err
		}
		c.tls = cfg
	}
	if !slices.Contains(c.codecs, c.compression) {
		return fmt.Errorf("unknown -compression %q: want %s", c.compression, strings.Join(c.codecs, " or "))
	}
	if c.compression != "none" {
		codec, err := compression.Parse(c.compression)
		if err != nil {
			return fmt.Errorf("-compression: %w", err)
		}
		c.codec = codec
	}
	return c.checkHeaders()
}

// tlsConfig builds the client TLS configuration from the -tls-* flags.
func (c *clientFlags) tlsConfig(endpoint string) (*tls.Config, error) {
	if c.skipVerify && (c.caFile != "" || c.serverName != "") {
		return nil, errors.New("-tls-insecure-skip-verify verifies nothing, so -tls-ca and -tls-server-name would be ignored: give one or the other")
	}
	serverName, err := otlpclient.ServerName(endpoint, c.serverName, c.skipVerify)
	if err != nil {
		return nil, fmt.Errorf("%w: add -tls-server-name NAME (or -insecure for h2c)", err)
	}
	if (c.certFile == "") != (c.keyFile == "") {
		return nil, errors.New("-tls-cert and -tls-key must be given together")
	}
	tc, err := otlpclient.ClientTLS(otlpclient.TLSFiles{CAFile: c.caFile, CertFile: c.certFile, KeyFile: c.keyFile,
		ServerName: serverName, InsecureSkipVerify: c.skipVerify})
	if err != nil {
		return nil, fmt.Errorf("bad -tls-ca/-tls-cert/-tls-key: %w", err)
	}
	return tc, nil
}

// checkHeaders builds the request headers: -header, then the token.
func (c *clientFlags) checkHeaders() error {
	c.header = http.Header{}
	for _, h := range c.headers {
		c.header.Add(h.name, h.value)
	}
	if c.token != "" && c.tokenFile != "" {
		return errors.New("-token and -token-file both give the token: give one")
	}
	token := c.token
	defer func() { redact.Register(token) }() // from -token or -token-file: hidden in every output
	if c.tokenFile != "" {
		var err error
		if token, err = readClientToken(c.tokenFile); err != nil {
			return err
		}
	}
	if token == "" {
		if c.explicit["token"] {
			return errors.New("-token is empty")
		}
		return nil
	}
	if err := tokenProblem(token); err != nil {
		return fmt.Errorf("the bearer token %w", err)
	}
	if c.header.Get("Authorization") != "" {
		return errors.New("-header authorization and a token both set the authorization header: give one")
	}
	c.header.Set("Authorization", "Bearer "+token)
	return nil
}

// readClientToken returns the first line of path that is not blank or a #
// comment: the layout of serve's -auth-token-file.
func readClientToken(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("cannot read -token-file: %w", err)
	}
	for line := range strings.Lines(string(data)) {
		if line = strings.TrimSpace(line); line != "" && line[0] != '#' {
			return line, nil
		}
	}
	return "", fmt.Errorf("-token-file %s holds no token", path)
}

// tokenProblem says what keeps token from being a bearer token that a
// receiver can match (RFC 6750 section 2.1: visible ASCII, the scheme
// added by the client); the message never quotes the token.
func tokenProblem(token string) error {
	if strings.HasPrefix(strings.ToLower(token), "bearer ") {
		return errors.New(`starts with "Bearer ": give the token alone, the scheme is added`)
	}
	if i := strings.IndexFunc(token, func(r rune) bool { return r <= ' ' || r > '~' }); i >= 0 {
		return fmt.Errorf("has a space, control character or non-ASCII byte at %d: it cannot travel in an HTTP header", i+1)
	}
	return nil
}

// reservedHeaders are set by the client itself; a -header overriding one
// would break the protocol rather than pass information.
var reservedHeaders = []string{"content-type", "content-length", "content-encoding", "te", "host", "connection", "transfer-encoding", "upgrade", "keep-alive"}

// headerFlag is the repeatable -header NAME:VALUE; each value is checked
// as it is parsed (RFC 9110 section 5: a token name, a value without
// control characters).
type headerFlag []struct{ name, value string }

func (h *headerFlag) String() string {
	if h == nil {
		return ""
	}
	parts := make([]string, len(*h))
	for i, kv := range *h {
		parts[i] = kv.name + ":" + kv.value
	}
	return strings.Join(parts, ",")
}

func (h *headerFlag) Set(s string) error {
	name, value, ok := strings.Cut(s, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	switch {
	case !ok:
		// Not quoted: without a colon, what is the name and what the
		// credential (Authorization Bearer TOKEN) cannot be told.
		return errors.New("the value (not shown) is not NAME:VALUE")
	case !httpguts.ValidHeaderFieldName(name):
		return fmt.Errorf("%q is not a valid header name", name)
	case !httpguts.ValidHeaderFieldValue(value):
		return fmt.Errorf("the value of header %s has a control character", name)
	}
	if lower := strings.ToLower(name); slices.Contains(reservedHeaders, lower) || strings.HasPrefix(lower, "grpc-") {
		return fmt.Errorf("%s is set by the client itself", name)
	}
	if redact.Name(name) {
		redact.Register(value)
	}
	*h = append(*h, struct{ name, value string }{name, value})
	return nil
}

// Redacted is String with the values of headers whose names are secrets
// (redact.Name) hidden.
func (h *headerFlag) Redacted() string {
	parts := make([]string, len(*h))
	for i, kv := range *h {
		parts[i] = kv.name + ":" + redact.Value(kv.name, kv.value)
	}
	return strings.Join(parts, ",")
}

// wrap returns hc with the flags' headers added to each request; hc itself
// if there are none.
func (c *clientFlags) wrap(hc *http.Client) *http.Client {
	return otlpclient.WithHeader(hc, c.header)
}

// describe says how the client connects, for the line loadgen prints
// before it starts: "h2c" or "TLS (CA ca.pem, client certificate)", then
// the credentials and headers sent.
func (c *clientFlags) describe() string {
	var b strings.Builder
	if c.tls == nil {
		b.WriteString("h2c")
	} else {
		var details []string
		if c.caFile != "" {
			details = append(details, "CA "+c.caFile)
		}
		if c.certFile != "" {
			details = append(details, "client certificate")
		}
		if c.serverName != "" {
			details = append(details, "server name "+c.serverName)
		}
		if c.skipVerify {
			details = append(details, "certificate NOT verified")
		}
		b.WriteString("TLS")
		if len(details) > 0 {
			b.WriteString(" (" + strings.Join(details, ", ") + ")")
		}
	}
	if c.header.Get("Authorization") != "" {
		b.WriteString(", bearer token")
		if c.tls == nil {
			b.WriteString(" in clear text")
		}
	}
	if n := len(c.headers); n > 0 {
		fmt.Fprintf(&b, ", %d extra header(s)", n)
	}
	b.WriteString(", compression " + c.compression)
	return b.String()
}
