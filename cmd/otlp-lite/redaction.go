package main

import (
	"fmt"
	"log/slog"

	"github.com/otlp-lite/otlp-lite/internal/redact"
)

// What serve prints, and where each output meets package redact, the one
// place that decides what is secret (issue 21, "One redaction"):
//
//	flag errors (command line, OTLP_LITE_*)   flagError: one line, refused values of secret flags hidden
//	forward.Parse / ParseURL errors           redact.URL, redact.Hide; the URL's secrets registered
//	other start-up errors                     redact.Line (serve), redact.Writer (every command's stderr)
//	the log, the request log, Kafka's log     redactAttr on every value, the message too
//	/config, the status page, the config log  shownValue: redact.Value, redact.URL, redact.String
//	/metrics and the status page's series     redactLabels
//	/debug/pprof/cmdline                      redactedCmdline: redact.Args
//
// Secrets are registered (redact.Register) where they are read: the values
// of flags named as secrets (flagSections.parse), a -forward URL's
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
