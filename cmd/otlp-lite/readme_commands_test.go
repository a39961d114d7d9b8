package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/otlp-lite/otlp-lite/forward"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// readmeCommand is one otlp-lite command line of a ```sh block of the
// README or a page of docs/: its environment assignments and its arguments
// after the binary.
type readmeCommand struct {
	file string // README.md or docs/PAGE.md, from the module's root
	line int    // of that file, 1-based
	env  map[string]string
	args []string
}

// docFiles are the README and the pages of docs/ (the reference the README
// links to), from the module's root.
func docFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no pages in docs/: %v", err)
	}
	files := []string{"README.md"}
	for _, p := range pages {
		files = append(files, strings.TrimPrefix(filepath.ToSlash(p), "../../"))
	}
	return files
}

// readmeCommands extracts the otlp-lite command lines of the ```sh blocks
// (and the "$ " lines of the ```console blocks) of the README and of every
// page of docs/: lines starting with bin/otlp-lite or otlp-lite (after
// environment assignments), or an otlp-lite image's arguments in a docker
// run line, continuation lines joined, comments and shell quotes removed.
func readmeCommands(t *testing.T) []readmeCommand {
	t.Helper()
	var cmds []readmeCommand
	for _, name := range docFiles(t) {
		cmds = append(cmds, fileCommands(t, name)...)
	}
	return cmds
}

// fileCommands extracts the otlp-lite command lines of one file, named from
// the module's root.
func fileCommands(t *testing.T, name string) []readmeCommand {
	t.Helper()
	f, err := os.Open("../../" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds []readmeCommand
	inSh, inConsole := false, false
	var pending string
	start := 0
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			lang := strings.TrimPrefix(line, "```")
			inSh = !inSh && lang == "sh"
			inConsole = !inConsole && !inSh && lang == "console"
			continue
		}
		if inConsole {
			// A console block shows commands after a "$ " prompt.
			cmd, ok := strings.CutPrefix(line, "$ ")
			if !ok {
				continue
			}
			line = cmd
		} else if !inSh {
			continue
		}
		if pending == "" {
			start = n
		}
		if s, ok := strings.CutSuffix(line, "\\"); ok {
			pending += s + " "
			continue
		}
		full := pending + line
		pending = ""
		if c, ok := parseReadmeLine(t, full); ok {
			c.file, c.line = name, start
			cmds = append(cmds, c)
		}
	}
	return cmds
}

var (
	imageRE = regexp.MustCompile(`^otlp-lite:[\w.-]+$`)
	pemRE   = regexp.MustCompile(`[\w./-]+\.pem`)
)

// parseReadmeLine splits a shell line into words (single and double quotes,
// # comments) and returns the otlp-lite command in it, if there is one.
func parseReadmeLine(t *testing.T, line string) (readmeCommand, bool) {
	var words []string
	var w strings.Builder
	inWord := false
	var quote rune
	for _, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				w.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == '#' && !inWord:
			goto done
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
done:
	if inWord {
		words = append(words, w.String())
	}
	c := readmeCommand{env: map[string]string{}}
	i := 0
	for ; i < len(words) && strings.Contains(words[i], "=") && !strings.HasPrefix(words[i], "-"); i++ {
		k, v, _ := strings.Cut(words[i], "=")
		c.env[k] = v
	}
	for j := i; j < len(words); j++ {
		bin := words[j]
		if (j == i && (bin == "otlp-lite" || bin == "bin/otlp-lite")) || (words[i] == "docker" && imageRE.MatchString(bin) && j+1 < len(words)) {
			c.args = words[j+1:]
			return c, len(c.args) > 0 && !strings.HasPrefix(c.args[0], "-")
		}
	}
	return c, false
}

// withDataDir returns args with the value of -data-dir replaced by dir.
func withDataDir(args []string, dir string) []string {
	out := append([]string(nil), args...)
	for i := 0; i+1 < len(out); i++ {
		if out[i] == "-data-dir" {
			out[i+1] = dir
		}
	}
	return out
}

// TestReadmeCommands is finding 18 of issue 21: the README told users to
// run `replay ... -cursor ./to-other.cursor`, which replay refuses (-cursor
// takes a name). Every otlp-lite command line of the sh blocks of the README
// and of docs/ (where its reference sections moved, issue 22) is checked
// here as far as it can run without the hosts and files it names:
// serve's flags are parsed and validated as serve does before it starts;
// export, stats, forward-remove and replay run against a temporary data
// directory (replay stopped before it would send anything, which it does
// only after its flags and cursor are checked); loadgen's flags are parsed.
// A command the binary refuses fails the test with its README line.
func TestReadmeCommands(t *testing.T) {
	cmds := readmeCommands(t)
	if len(cmds) < 8 {
		t.Fatalf("found only %d otlp-lite commands in the sh blocks of the README and docs/", len(cmds))
	}
	// The files the commands name are placeholders: each is given a real
	// one of its kind (a CA or leaf certificate, a key, a token).
	pki := newTestPKI(t)
	pki.issue(t, "leaf", false)
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	files := func(arg string) string {
		return pemRE.ReplaceAllStringFunc(arg, func(path string) string {
			switch {
			case strings.HasSuffix(path, "key.pem"):
				return pki.path("leaf.key")
			case strings.HasSuffix(path, "ca.pem"):
				return pki.path("ca.crt")
			}
			return pki.path("leaf.crt")
		})
	}
	seen := map[string]bool{}
	for _, c := range cmds {
		seen[c.args[0]] = true
		t.Run(c.args[0]+"@"+c.file+":"+itoa(c.line), func(t *testing.T) {
			sub, args := c.args[0], append([]string(nil), c.args[1:]...)
			for i := range args {
				args[i] = files(args[i])
				if i > 0 && args[i-1] == "-token-file" {
					args[i] = token
				}
			}
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			dir := t.TempDir()
			var stdout, stderr bytes.Buffer
			fail := func(what string) {
				t.Fatalf("%s:%d: otlp-lite %s\n%s: %s%s", c.file, c.line, strings.Join(c.args, " "), what, stderr.String(), stdout.String())
			}
			switch sub {
			case "serve":
				cfg, _, err := parseServeEnv(t, c.env, args...)
				if err == nil {
					err = cfg.Validate()
				}
				if err != nil {
					stderr.WriteString(err.Error())
					fail("serve refuses it")
				}
			case "export":
				if code := exportContext(context.Background(), withDataDir(args, dir), &stdout, &stderr); code != 0 {
					fail("exit status " + itoa(code))
				}
			case "stats":
				if code := stats(withDataDir(args, dir), &stdout, &stderr); code != 0 {
					fail("exit status " + itoa(code))
				}
			case "forward-remove":
				// The destination names are placeholders: give each a
				// cursor to remove.
				for _, name := range args {
					if !strings.HasPrefix(name, "-") && name != "DATA" {
						cur, err := disk.OpenConsumerAt(dir, forward.CursorName(name), storage.Traces, disk.StartOldest)
						if err != nil {
							t.Fatal(err)
						}
						cur.Close()
					}
				}
				if code := forwardRemove(withDataDir(args, dir), &stdout, &stderr); code != 0 {
					fail("exit status " + itoa(code))
				}
			case "replay":
				// Stopped from the start: each signal opens its source
				// (checking -cursor), finds nothing to send, and ends.
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				if err := os.MkdirAll(filepath.Join(dir, "traces"), 0o755); err != nil {
					t.Fatal(err)
				}
				if code := replayContext(ctx, withDataDir(args, dir), &stdout, &stderr); code != 0 {
					fail("exit status " + itoa(code))
				}
			case "loadgen":
				if _, code, ok := parseLoadgenFlags(args, &stdout, &stderr); !ok {
					fail("exit status " + itoa(code))
				}
			default:
				fail("a command the binary does not have")
			}
		})
	}
	for _, sub := range []string{"serve", "export", "replay", "loadgen", "forward-remove"} {
		if !seen[sub] {
			t.Errorf("neither the README nor docs/ shows a %s command: the extraction missed it", sub)
		}
	}
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// flagLineRE matches a flag's line in a command's -h output
// (two spaces, the flag, its value's name), not a description's line
// that starts with a flag it names (indented further).
var flagLineRE = regexp.MustCompile(`(?m)^  (-[a-z0-9][a-z0-9-]*)(?: \S+)?$`)

// TestDocsNameEveryFlag holds docs/flags.md to what the binary accepts
// (issue 22: every flag moves to docs/): each flag that a command's -h
// lists is named there, as `-name`. A flag added without its line fails
// here with the command and the flag.
func TestDocsNameEveryFlag(t *testing.T) {
	doc, err := os.ReadFile("../../docs/flags.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"serve", "export", "replay", "stats", "loadgen", "forward-remove"} {
		var stdout, stderr bytes.Buffer
		if code := run([]string{cmd, "-h"}, &stdout, &stderr); code != 0 {
			t.Fatalf("%s -h exited %d: %s", cmd, code, stderr.String())
		}
		flags := flagLineRE.FindAllStringSubmatch(stdout.String(), -1)
		if len(flags) == 0 {
			t.Fatalf("%s -h lists no flags:\n%.300s", cmd, stdout.String())
		}
		// Each command has its own section, "### `cmd`": a client
		// command's flag must be in its own section, not only in serve's.
		section := sectionOf(string(doc), "### `"+cmd+"`")
		if section == "" {
			t.Errorf("docs/flags.md has no section ### `%s`", cmd)
			continue
		}
		for _, f := range flags {
			if !strings.Contains(section, "`"+f[1]+"`") {
				t.Errorf("docs/flags.md, section %s, does not name %s `%s` (see otlp-lite %s -h)", cmd, cmd, f[1], cmd)
			}
		}
	}
}

// sectionOf returns the text of doc from the heading line to the next
// heading of the same or a higher level, or "" if the heading is absent.
func sectionOf(doc, heading string) string {
	i := strings.Index(doc, "\n"+heading+"\n")
	if i < 0 {
		return ""
	}
	rest := doc[i+1+len(heading):]
	level := strings.Repeat("#", strings.IndexByte(heading, ' '))
	for _, prefix := range []string{"\n" + level + " ", "\n" + level[:len(level)-1] + " "} {
		if j := strings.Index(rest, prefix); j >= 0 && len(prefix) > 2 {
			rest = rest[:j]
		}
	}
	return rest
}

var (
	// metricLiteralRE matches a series name at the start of a Go string
	// literal, up to the literal's end or its labels: how the code names
	// what it registers. A name ending in _ is a prefix, completed at run
	// time.
	metricLiteralRE = regexp.MustCompile("[\"`]((?:otlplite|otelcol)_[a-z0-9_]*)[\"`{]")
	// labelsRE matches the label names after a series name in
	// docs/metrics.md, name{label,label}; metricDocRE a series name there,
	// where _{a,b,c}_ stands for three names.
	labelsRE    = regexp.MustCompile(`([a-z0-9])\{[^}]*\}`)
	metricDocRE = regexp.MustCompile(`(?:otlplite|otelcol)_[a-z0-9_{},]*[a-z0-9]`)
	braceRE     = regexp.MustCompile(`\{([a-z0-9_]+(?:,[a-z0-9_]+)+)\}`)
)

// TestDocsNameEveryMetric holds docs/metrics.md to the code (issue 22:
// every metric moves to docs/): every series name that a Go file of the
// module (not its tests, nor the bench and interop modules) spells in a
// string literal is named there. Names built from a prefix are checked by
// the scrape the status page tests make; this catches a new series added
// without its line.
func TestDocsNameEveryMetric(t *testing.T) {
	doc, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range metricDocRE.FindAllString(labelsRE.ReplaceAllString(string(doc), "$1"), -1) {
		for _, name := range expandBraces(m) {
			documented[name] = true
		}
	}
	found := 0
	err = filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "bench", "interop", "examples", "testdata", ".git":
				return filepath.SkipDir // their own modules, or no code of the receiver
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range metricLiteralRE.FindAllStringSubmatch(string(src), -1) {
			name := m[1]
			if strings.HasSuffix(name, "_") {
				continue
			}
			for _, suffix := range []string{"_bucket", "_count", "_sum"} {
				if base, ok := strings.CutSuffix(name, suffix); ok && documented[base] {
					name = base
				}
			}
			found++
			if !documented[name] {
				t.Errorf("%s: series %s is not in docs/metrics.md", strings.TrimPrefix(path, "../../"), name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 40 {
		t.Fatalf("found only %d series names in the code: the scan missed them", found)
	}
}

// expandBraces turns a_{b,c}_d into a_b_d and a_c_d.
func expandBraces(s string) []string {
	loc := braceRE.FindStringSubmatchIndex(s)
	if loc == nil {
		return []string{strings.Trim(s, "{},")}
	}
	var out []string
	for _, alt := range strings.Split(s[loc[2]:loc[3]], ",") {
		out = append(out, expandBraces(s[:loc[0]]+alt+s[loc[1]:])...)
	}
	return out
}

// linkRE matches a markdown link's target; headingRE a heading.
var (
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRE = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
)

// TestDocLinks checks every relative link of the README, BENCHMARKS.md,
// the pages of docs/ and bench/results/history.md: the file it names
// exists, and the #anchor, if any, is a heading of that file (GitHub's
// anchors: lower case, punctuation but - and _ dropped, spaces as -).
// Issue 22 moved the README's sections into docs/: a link left pointing at
// the old place fails here.
func TestDocLinks(t *testing.T) {
	files := append(docFiles(t), "BENCHMARKS.md", "bench/results/history.md")
	anchors := map[string]map[string]bool{}
	anchorsOf := func(name string) map[string]bool {
		if a, ok := anchors[name]; ok {
			return a
		}
		src, err := os.ReadFile("../../" + name)
		if err != nil {
			return nil
		}
		a := map[string]bool{}
		inCode := false
		for _, line := range strings.Split(string(src), "\n") {
			if strings.HasPrefix(line, "```") {
				inCode = !inCode
			}
			if m := headingRE.FindStringSubmatch(line); m != nil && !inCode {
				a[githubAnchor(m[1])] = true
			}
		}
		anchors[name] = a
		return a
	}
	for _, name := range files {
		src, err := os.ReadFile("../../" + name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range linkRE.FindAllStringSubmatch(string(src), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			resolved := name
			if file != "" {
				resolved = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(name), file)))
				if _, err := os.Stat("../../" + resolved); err != nil {
					t.Errorf("%s: link %s: %s does not exist", name, target, resolved)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(resolved, ".md") && !anchorsOf(resolved)[anchor] {
				t.Errorf("%s: link %s: %s has no heading with anchor #%s", name, target, resolved, anchor)
			}
		}
	}
}

// githubAnchor is the anchor GitHub gives a heading.
func githubAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
