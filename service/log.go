package service

import (
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/otlp-lite/otlp-lite/internal/redact"
)

// What the receiver and `otlp-lite serve` print, and where each output
// meets package redact, the one place that decides what is secret (issue
// 21, "One redaction"):
//
//	flag errors (command line, OTLP_LITE_*)   cmd/otlp-lite flagError: one line, refused values of secret flags hidden
//	forward.Parse / ParseURL errors           redact.URL, redact.Hide; the URL's secrets registered
//	other start-up errors                     redact.Line (serve), redact.Writer (every command's stderr)
//	the log, the request log, Kafka's log     redactAttr on every value, the message too
//	/config, the status page, the config log  cmd/otlp-lite shownValue: redact.Value, redact.URL, redact.String
//	/metrics and the status page's series     admin.redactLabels
//	/debug/pprof/cmdline                      admin.redactedCmdline: redact.Args
//
// Secrets are registered (redact.Register) where they are read: the values
// of flags named as secrets (cmd/otlp-lite flagSections.parse), a -forward URL's
// credentials (forward.ParseURL), the Kafka SASL password
// (kafkaConnSettings.build), secret -kafka-header and client -header
// values, the client commands' token.

// redactAttr passes a log value (the message too) through redact.Line: no
// registered secret (a forwarding destination's refusal quoting our
// credential, a Kafka client's error), no control character. Times,
// durations and numbers are left as they are.
func redactAttr(a slog.Attr) slog.Attr {
	var s string
	switch a.Value.Kind() {
	case slog.KindString:
		s = a.Value.String() // not Any: no allocation
	case slog.KindAny:
		var ok bool
		if s, ok = attrString(a.Value); !ok {
			return a
		}
	default:
		return a
	}
	if r := redact.Line(s); r != s {
		return slog.String(a.Key, r)
	}
	return a
}

// attrString is the text of an error or fmt.Stringer value; a
// String or Error method that panics (on a nil pointer, say) is left to
// the handler, which reports it.
func attrString(v slog.Value) (s string, ok bool) {
	defer func() {
		if recover() != nil {
			s, ok = "", false
		}
	}()
	switch x := v.Any().(type) {
	case error:
		return x.Error(), true
	case fmt.Stringer:
		return x.String(), true
	}
	return "", false
}

// NewLogger returns the receiver's logger in format (text or json) at level
// (debug, info, warn or error).
// Every value is kept on one line: an error joined from several (errors.Join
// separates them with newlines) has its newlines replaced by "; ", so a log
// line is never split and logfmt never shows a literal \n.
func NewLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	l, err := Config{LogLevel: level}.level()
	if err != nil {
		return nil, err
	}
	opts := &slog.HandlerOptions{Level: l, ReplaceAttr: func(g []string, a slog.Attr) slog.Attr { return redactAttr(oneLineAttr(g, a)) }}
	switch format {
	case "text", "":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("bad -log-format %q: want text or json", format)
}

func oneLineAttr(_ []string, a slog.Attr) slog.Attr {
	var s string
	switch v := a.Value.Any().(type) {
	case error:
		s = v.Error()
	case string:
		s = v
	default:
		return a
	}
	changed := false
	if strings.ContainsAny(s, "\r\n") {
		s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }), "; ")
		changed = true
	}
	if len(s) > maxLogValue {
		s = cutLogValue(s)
		changed = true
	}
	if changed {
		return slog.String(a.Key, s)
	}
	return a
}

// maxLogValue bounds each value of a log line, in bytes: values can quote
// what a client or a destination sent (a refused path, a peer's error), and
// the refusal log's rate limit bounds lines, not bytes: 60 requests of 4 KB
// of HPACK-compressed headers wrote 300 MB of log before this bound. 4 KiB
// keeps any error this process writes whole (the longest, a joined flag
// error, is under 1 KiB) and a Status message at grpcwire's MaxMessage.
const maxLogValue = 4 << 10

// cutLogValue cuts s to maxLogValue bytes at a UTF-8 boundary and says how
// long it was.
func cutLogValue(s string) string {
	n := maxLogValue
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "... (" + strconv.Itoa(len(s)) + " bytes)"
}
