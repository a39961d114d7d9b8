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

	"github.com/otlp-lite/otlp-lite/forward"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// readmeCommand is one otlp-lite command line of a ```sh block of the
// README: its environment assignments and its arguments after the binary.
type readmeCommand struct {
	line int // of the README, 1-based
	env  map[string]string
	args []string
}

// readmeCommands extracts the otlp-lite command lines of the README's
// ```sh blocks (and the "$ " lines of its ```console blocks): lines
// starting with bin/otlp-lite or otlp-lite (after environment
// assignments), or an otlp-lite image's arguments in a docker run line,
// continuation lines joined, comments and shell quotes removed.
func readmeCommands(t *testing.T) []readmeCommand {
	t.Helper()
	f, err := os.Open("../../README.md")
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
			c.line = start
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
// takes a name). Every otlp-lite command line of the README's sh blocks is
// checked here as far as it can run without the hosts and files it names:
// serve's flags are parsed and validated as serve does before it starts;
// export, stats, forward-remove and replay run against a temporary data
// directory (replay stopped before it would send anything, which it does
// only after its flags and cursor are checked); loadgen's flags are parsed.
// A command the binary refuses fails the test with its README line.
func TestReadmeCommands(t *testing.T) {
	cmds := readmeCommands(t)
	if len(cmds) < 8 {
		t.Fatalf("found only %d otlp-lite commands in the README's sh blocks", len(cmds))
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
		t.Run(strings.Join(c.args[:1], "")+"@"+itoa(c.line), func(t *testing.T) {
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
				t.Fatalf("README.md:%d: otlp-lite %s\n%s: %s%s", c.line, strings.Join(c.args, " "), what, stderr.String(), stdout.String())
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
			t.Errorf("the README shows no %s command: the extraction missed it", sub)
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
