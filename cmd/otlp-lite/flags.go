package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/otlp-lite/otlp-lite/admin"
	"github.com/otlp-lite/otlp-lite/internal/redact"
)

// envPrefix starts the environment variable of every serve flag: the flag
// -grpc-addr is OTLP_LITE_GRPC_ADDR. The name is mechanical (the prefix,
// then the flag's name in upper case with - as _) so that an operator
// who knows a flag knows its variable, as with the Collector's ${env:...}
// or Prometheus exporters' conventions; a container is configured by env.
const envPrefix = "OTLP_LITE_"

// envName returns the environment variable that sets flag name.
func envName(name string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// repeatableValue is a flag.Value that collects every use of its flag
// (such as -forward). Its environment variable holds several values
// separated by whitespace, each passed to Set in turn.
type repeatableValue interface {
	flag.Value
	repeatable()
}

// redactedValue is a flag.Value that holds several values (a repeatable
// flag) whose secrets the one rule (package redact) finds only value by
// value: Redacted applies it to each. Every other flag's value is shown
// as shownValue says.
type redactedValue interface {
	flag.Value
	Redacted() string
}

// shownValue is how every output (the effective configuration, /config,
// the status page, the configuration log line) shows f's value: through
// package redact, which alone decides what is secret: the value of a flag
// whose name is a secret (redact.Name: -kafka-sasl-password), the secrets
// of a URL (redact.URL), any secret the process registered.
func shownValue(f *flag.Flag) string {
	if rv, ok := f.Value.(redactedValue); ok {
		return redact.String(rv.Redacted())
	}
	return redact.String(redact.URL(redact.Value(f.Name, f.Value.String())))
}

// secretFlag reports whether f's raw value may hold a secret that only its
// structure would show: such a value is never quoted in an error (a
// refused value cannot be trusted to have the structure).
func secretFlag(f *flag.Flag) bool {
	_, ok := f.Value.(redactedValue)
	return ok || redact.Name(f.Name)
}

// flagSections groups a command's flags into help sections (listeners,
// storage, limits, ...), in the order the sections were first defined,
// serve's help and its effective configuration are printed by section.
type flagSections struct {
	fs      *flag.FlagSet
	titles  []string
	section map[string]string // flag name → section title
	source  map[string]string // after parse: flag name → "flag", "env" or "default"
}

func newFlagSections(fs *flag.FlagSet) *flagSections {
	return &flagSections{fs: fs, section: map[string]string{}}
}

// add defines the flags that define registers on fs in the section titled
// title; calling it again with the same title adds to that section.
func (s *flagSections) add(title string, define func(fs *flag.FlagSet)) {
	before := map[string]bool{}
	s.fs.VisitAll(func(f *flag.Flag) { before[f.Name] = true })
	define(s.fs)
	if !slices.Contains(s.titles, title) {
		s.titles = append(s.titles, title)
	}
	s.fs.VisitAll(func(f *flag.Flag) {
		if !before[f.Name] {
			s.section[f.Name] = title
		}
	})
}

// parse parses args, then sets every flag not given on the command line
// from its environment variable, if set: a flag wins over the environment,
// which wins over the default. A bad value in the environment is reported
// with the variable's name. lookup is os.LookupEnv outside tests.
//
// The value of every flag whose name is a secret (redact.Name) is
// registered with package redact as it is read, valid or not, so that no
// later output (an error a library formats, a log line) shows it.
func (s *flagSections) parse(args []string, lookup func(string) (string, bool)) error {
	defer s.registerSecrets()
	if err := s.fs.Parse(args); err != nil {
		return err
	}
	s.source = map[string]string{}
	s.fs.Visit(func(f *flag.Flag) { s.source[f.Name] = "flag" })
	var err error
	s.fs.VisitAll(func(f *flag.Flag) {
		if err != nil || s.source[f.Name] != "" {
			return
		}
		s.source[f.Name] = "default"
		v, ok := lookup(envName(f.Name))
		if !ok {
			return
		}
		values := []string{v}
		if _, ok := f.Value.(repeatableValue); ok {
			values = strings.Fields(v)
		}
		for _, v := range values {
			if e := s.fs.Set(f.Name, v); e != nil {
				shown := strconv.Quote(redact.URL(v))
				if secretFlag(f) {
					shown = redact.Mark
				}
				err = fmt.Errorf("invalid value %s for %s (flag -%s): %v", shown, envName(f.Name), f.Name, e)
				return
			}
		}
		s.source[f.Name] = "env"
	})
	return err
}

// registerSecrets registers the values of the flags whose names are
// secrets (redact.Name), from the command line or the environment.
func (s *flagSections) registerSecrets() {
	s.fs.VisitAll(func(f *flag.Flag) {
		if redact.Name(f.Name) {
			redact.Register(f.Value.String())
		}
	})
}

// effective returns every flag's value and source, by section, secrets
// redacted. Call it after parse.
func (s *flagSections) effective() []admin.ConfigEntry {
	var out []admin.ConfigEntry
	for _, title := range s.titles {
		s.fs.VisitAll(func(f *flag.Flag) {
			if s.section[f.Name] != title {
				return
			}
			v := shownValue(f)
			src := s.source[f.Name]
			if src == "" {
				src = "default"
			}
			out = append(out, admin.ConfigEntry{Section: title, Flag: f.Name, Env: envName(f.Name), Value: v, Source: src,
				Changed: src != "default" && f.Value.String() != f.DefValue})
		})
	}
	return out
}

// printHelp prints the flags by section: each with its value type, what
// it does and why its default is what it is (the usage text), its
// default and its environment variable.
func (s *flagSections) printHelp(w io.Writer) {
	fmt.Fprintf(w, "Usage of otlp-lite %s:\n\n", s.fs.Name())
	fmt.Fprintf(w, "Every flag can also be set by an environment variable: %s, then the flag's name in\n", envPrefix)
	fmt.Fprintf(w, "upper case with - as _ (-grpc-addr is %s). A flag on the command line wins over\n", envName("grpc-addr"))
	fmt.Fprintf(w, "the environment, which wins over the default. The admin port's /config shows the result.\n")
	for _, title := range s.titles {
		fmt.Fprintf(w, "\n%s:\n", title)
		s.fs.VisitAll(func(f *flag.Flag) {
			if s.section[f.Name] != title {
				return
			}
			typ, usage := flag.UnquoteUsage(f)
			fmt.Fprintf(w, "  -%s", f.Name)
			if typ != "" {
				fmt.Fprintf(w, " %s", typ)
			}
			fmt.Fprintln(w)
			for _, line := range wrap(usage, 92) {
				fmt.Fprintf(w, "        %s\n", line)
			}
			def := "default " + quoteDefault(f)
			if _, ok := f.Value.(repeatableValue); ok {
				def = "repeatable; in the environment, values separated by spaces"
			}
			fmt.Fprintf(w, "        (%s; env %s)\n", def, envName(f.Name))
		})
	}
}

// quoteDefault shows a flag's default as the flag package does: strings
// quoted, so that an empty default is visible.
func quoteDefault(f *flag.Flag) string {
	typ, _ := flag.UnquoteUsage(f)
	if typ == "string" || typ == "host:port" || typ == "path" {
		return fmt.Sprintf("%q", f.DefValue)
	}
	return f.DefValue
}

// wrap splits text into lines of at most width bytes at spaces.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// parseSectionFlags is parseFlags for a command whose flags are in
// sections and can come from the environment, and that takes no other
// arguments: -h prints the sections to stdout (exit 0); an unknown flag, a
// bad value (on the command line or in the environment) or an argument
// that is not a flag is one line on stderr that points at -h (exit 2).
// Arguments that are not flags are counted, not shown: the usual cause is
// a value with a space that the shell split, such as the credential of a
// header (-forward 'a=grpc://h:4317?header=Authorization:Bearer TOKEN'
// without its quotes).
func parseSectionFlags(s *flagSections, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	s.fs.SetOutput(io.Discard)
	err := s.parse(args, os.LookupEnv)
	s.fs.SetOutput(stderr)
	switch {
	case err == nil && s.fs.NArg() > 0:
		err = fmt.Errorf("unexpected arguments after the flags (%d, not shown: quote a value that has spaces)", s.fs.NArg())
	case err == nil:
		return 0, true
	case err == flag.ErrHelp:
		s.printHelp(stdout)
		return 0, false
	}
	fmt.Fprintf(stderr, "otlp-lite %s: %s (otlp-lite %s -h lists the flags)\n", s.fs.Name(), s.redactError(err), s.fs.Name())
	return 2, false
}

// redactError is a parse error as it may be shown: flagError.
func (s *flagSections) redactError(err error) string { return flagError(s.fs, err) }

// flagError is the error of parsing fs as every command shows it: one line
// (redact.Line) without secrets. The flag package quotes the refused value
// ("invalid value %q for flag -name: ..."); a flag that may hold secrets
// (secretFlag) has it replaced by redact.Mark, any other has the secrets
// of a URL in it hidden (redact.URL). The reason after it comes from the
// flag's Set, which hides what it quotes (forward.Parse does) and, like
// everything else, passes through the registered secrets.
func flagError(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	const prefix = "invalid value "
	if rest, ok := strings.CutPrefix(msg, prefix); ok {
		if quoted, err := strconv.QuotedPrefix(rest); err == nil {
			if after, ok := strings.CutPrefix(rest[len(quoted):], " for flag -"); ok {
				name, reason, _ := strings.Cut(after, ": ")
				shown := redact.Mark
				if f := fs.Lookup(name); f != nil && !secretFlag(f) {
					v, _ := strconv.Unquote(quoted)
					shown = strconv.Quote(redact.URL(v))
				}
				msg = prefix + shown + " for flag -" + name + ": " + reason
			}
		}
	}
	return redact.Line(msg)
}
