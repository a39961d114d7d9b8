package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
)

// finalStage is what the last stage of a Dockerfile puts into an image:
// the files it copies and the runtime configuration it declares.
type finalStage struct {
	Base       string
	User       string
	Exposed    []string // "4317/tcp"
	Volumes    []string
	Entrypoint []string
	Cmd        []string
	Env        []string // "KEY=value", in declaration order, later keys replacing earlier ones
	Labels     map[string]string
	WorkingDir string
	StopSignal string
	Copies     []copyInstr

	// unsupported lists instructions (such as RUN) this stage has and
	// the packer cannot reproduce; only an error for the final stage.
	unsupported []string
	// errs are errors of this stage's instructions; earlier stages are
	// built by Docker alone, so only the final stage's errors count.
	errs []error
}

// copyInstr is one COPY of the final stage.
type copyInstr struct {
	Line    int
	From    string // stage name; empty for the build context
	UID     int
	GID     int
	Mode    int64 // from --chmod; -1 keeps the source's mode
	Sources []string
	Dest    string // absolute, WORKDIR applied
}

// instruction is one Dockerfile instruction with its continuation lines
// joined.
type instruction struct {
	Line int
	Cmd  string // upper case
	Args string
}

// splitInstructions splits a Dockerfile into instructions, following the
// Dockerfile reference: '#' starts a comment only at the beginning of a
// line, comment and empty lines inside a continuation are dropped, and a
// trailing backslash continues the instruction. The escape parser directive
// is refused, since every rule here assumes the default backslash.
func splitInstructions(src []byte) ([]instruction, error) {
	var out []instruction
	var cur *instruction
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			if cur == nil && strings.HasPrefix(strings.ToLower(strings.ReplaceAll(line, " ", "")), "#escape=") {
				return nil, fmt.Errorf("line %d: cannot handle the escape parser directive", n)
			}
			continue
		}
		if line == "" {
			continue
		}
		cont := strings.HasSuffix(line, `\`)
		if cont {
			line = strings.TrimSpace(strings.TrimSuffix(line, `\`))
		}
		if cur == nil {
			cmd, args, _ := strings.Cut(line, " ")
			if i := strings.IndexAny(cmd, "\t"); i >= 0 {
				cmd, args = cmd[:i], cmd[i+1:]+" "+args
			}
			cur = &instruction{Line: n, Cmd: strings.ToUpper(cmd), Args: strings.TrimSpace(args)}
		} else if line != "" {
			cur.Args = strings.TrimSpace(cur.Args + " " + line)
		}
		if !cont {
			out = append(out, *cur)
			cur = nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("cannot read Dockerfile: %w", err)
	}
	if cur != nil {
		out = append(out, *cur)
	}
	return out, nil
}

// parseDockerfile returns the final stage of the Dockerfile src, with build
// arguments buildArgs (docker build --build-arg) substituted. It refuses
// final stages it cannot reproduce without a Docker engine: a base other
// than scratch, RUN, ADD, shell-form ENTRYPOINT or CMD (scratch has no
// shell), COPY with wildcards, user names or unknown flags.
func parseDockerfile(src []byte, buildArgs map[string]string) (*finalStage, error) {
	insts, err := splitInstructions(src)
	if err != nil {
		return nil, err
	}
	// ARGs before the first FROM are in scope for FROM lines only
	// (Dockerfile reference, "Understand how ARG and FROM interact").
	global := map[string]string{}
	var st *finalStage
	var vars map[string]string
	for _, in := range insts {
		if in.Cmd == "FROM" {
			words, err := shellWords(in.Args, global)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", in.Line, err)
			}
			base := ""
			for _, w := range words {
				if !strings.HasPrefix(w, "--") {
					base = w
					break
				}
			}
			st = &finalStage{Base: base, Labels: map[string]string{}, WorkingDir: "/"}
			vars = map[string]string{}
			continue
		}
		if st == nil {
			if in.Cmd != "ARG" {
				return nil, fmt.Errorf("line %d: %s before the first FROM", in.Line, in.Cmd)
			}
			if err := declareArgs(in.Args, global, global, buildArgs); err != nil {
				return nil, fmt.Errorf("line %d: %w", in.Line, err)
			}
			continue
		}
		if err := st.apply(in, vars, buildArgs); err != nil {
			st.errs = append(st.errs, fmt.Errorf("line %d: %s: %w", in.Line, in.Cmd, err))
		}
	}
	if st == nil {
		return nil, fmt.Errorf("no FROM instruction")
	}
	if st.Base != "scratch" {
		return nil, fmt.Errorf("final stage is FROM %q: only FROM scratch can be packed without a Docker engine", st.Base)
	}
	if len(st.errs) > 0 {
		return nil, errors.Join(st.errs...)
	}
	if len(st.unsupported) > 0 {
		return nil, fmt.Errorf("final stage has %s: only COPY and image configuration can be packed without a Docker engine", strings.Join(st.unsupported, ", "))
	}
	return st, nil
}

// declareArgs handles "ARG NAME[=default] ...": the value is the build
// argument if one was given, else the default.
func declareArgs(args string, scope, expandIn, buildArgs map[string]string) error {
	words, err := shellWords(args, expandIn)
	if err != nil {
		return err
	}
	for _, w := range words {
		name, def, _ := strings.Cut(w, "=")
		if v, ok := buildArgs[name]; ok {
			def = v
		}
		scope[name] = def
	}
	return nil
}

// apply records one instruction of a stage. Instructions of earlier stages
// are recorded too and discarded at the next FROM.
func (st *finalStage) apply(in instruction, vars, buildArgs map[string]string) error {
	switch in.Cmd {
	case "ARG":
		return declareArgs(in.Args, vars, vars, buildArgs)
	case "ENV":
		kvs, err := keyValues(in.Args, vars)
		if err != nil {
			return err
		}
		for _, kv := range kvs {
			vars[kv[0]] = kv[1]
			st.Env = setEnv(st.Env, kv[0], kv[1])
		}
	case "LABEL":
		kvs, err := keyValues(in.Args, vars)
		if err != nil {
			return err
		}
		for _, kv := range kvs {
			st.Labels[kv[0]] = kv[1]
		}
	case "USER":
		words, err := shellWords(in.Args, vars)
		if err != nil {
			return err
		}
		if len(words) != 1 {
			return fmt.Errorf("want one user, got %q", in.Args)
		}
		st.User = words[0]
	case "WORKDIR":
		words, err := shellWords(in.Args, vars)
		if err != nil {
			return err
		}
		if len(words) != 1 {
			return fmt.Errorf("want one directory, got %q", in.Args)
		}
		st.WorkingDir = path.Join(st.WorkingDir, words[0])
	case "STOPSIGNAL":
		words, err := shellWords(in.Args, vars)
		if err != nil {
			return err
		}
		if len(words) != 1 {
			return fmt.Errorf("want one signal, got %q", in.Args)
		}
		st.StopSignal = words[0]
	case "EXPOSE":
		words, err := shellWords(in.Args, vars)
		if err != nil {
			return err
		}
		for _, w := range words {
			port, proto, ok := strings.Cut(w, "/")
			if !ok {
				proto = "tcp"
			}
			if _, err := strconv.ParseUint(port, 10, 16); err != nil || (proto != "tcp" && proto != "udp" && proto != "sctp") {
				return fmt.Errorf("cannot parse port %q", w)
			}
			st.Exposed = appendUnique(st.Exposed, port+"/"+strings.ToLower(proto))
		}
	case "VOLUME":
		vols, ok := jsonForm(in.Args)
		if !ok {
			var err error
			if vols, err = shellWords(in.Args, vars); err != nil {
				return err
			}
		}
		for _, v := range vols {
			st.Volumes = appendUnique(st.Volumes, v)
		}
	case "ENTRYPOINT", "CMD":
		// No variable substitution in the exec form, as in Docker.
		argv, ok := jsonForm(in.Args)
		if !ok {
			return fmt.Errorf("use the JSON (exec) form: the shell form needs /bin/sh, which scratch lacks")
		}
		if in.Cmd == "ENTRYPOINT" {
			// Docker resets CMD when ENTRYPOINT is set after it.
			st.Entrypoint, st.Cmd = argv, nil
		} else {
			st.Cmd = argv
		}
	case "COPY":
		c, err := parseCopy(in, vars, st.WorkingDir)
		if err != nil {
			return err
		}
		st.Copies = append(st.Copies, c)
	case "MAINTAINER":
	default:
		st.unsupported = append(st.unsupported, fmt.Sprintf("%s at line %d", in.Cmd, in.Line))
	}
	return nil
}

// parseCopy parses "COPY [--from=stage] [--chown=uid[:gid]] [--chmod=mode]
// [--link] src... dest" in shell or JSON form.
func parseCopy(in instruction, vars map[string]string, workdir string) (copyInstr, error) {
	c := copyInstr{Line: in.Line, Mode: -1}
	rest := in.Args
	for strings.HasPrefix(rest, "--") {
		flagText, after, _ := strings.Cut(rest, " ")
		rest = strings.TrimSpace(after)
		words, err := shellWords(flagText, vars)
		if err != nil || len(words) != 1 {
			return c, fmt.Errorf("cannot parse flag %q", flagText)
		}
		name, val, _ := strings.Cut(strings.TrimPrefix(words[0], "--"), "=")
		switch name {
		case "from":
			c.From = val
		case "chown":
			u, g, hasGroup := strings.Cut(val, ":")
			uid, err := strconv.Atoi(u)
			if err != nil || uid < 0 {
				return c, fmt.Errorf("--chown=%s: only numeric ids can be resolved without the image's /etc/passwd at build time", val)
			}
			gid := uid // Docker: a UID without a GID uses the same number as the GID
			if hasGroup {
				if gid, err = strconv.Atoi(g); err != nil || gid < 0 {
					return c, fmt.Errorf("--chown=%s: only numeric ids can be resolved", val)
				}
			}
			c.UID, c.GID = uid, gid
		case "chmod":
			m, err := strconv.ParseInt(val, 8, 32)
			if err != nil || m < 0 || m > 0o7777 {
				return c, fmt.Errorf("--chmod=%s: want an octal mode", val)
			}
			c.Mode = m
		case "link":
			// Only changes how BuildKit caches the layer, not its contents.
		default:
			return c, fmt.Errorf("unsupported flag --%s", name)
		}
	}
	args, ok := jsonForm(rest)
	if !ok {
		var err error
		if args, err = shellWords(rest, vars); err != nil {
			return c, err
		}
	}
	if len(args) < 2 {
		return c, fmt.Errorf("want sources and a destination, got %q", in.Args)
	}
	c.Sources, c.Dest = args[:len(args)-1], args[len(args)-1]
	for _, s := range c.Sources {
		if strings.ContainsAny(s, "*?[") {
			return c, fmt.Errorf("wildcard source %q is not supported", s)
		}
	}
	if len(c.Sources) > 1 && !strings.HasSuffix(c.Dest, "/") {
		return c, fmt.Errorf("with several sources the destination must end with /")
	}
	if !path.IsAbs(c.Dest) {
		dir := strings.HasSuffix(c.Dest, "/")
		c.Dest = path.Join(workdir, c.Dest)
		if dir {
			c.Dest += "/"
		}
	}
	return c, nil
}

// jsonForm parses the exec form ["a", "b"]. Like Docker, anything that is
// not a valid JSON array of strings is the shell form.
func jsonForm(s string) ([]string, bool) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "[") {
		return nil, false
	}
	var out []string
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, false
	}
	return out, true
}

// keyValues parses "k=v k2=v2" and the legacy single "k v" form of ENV and
// LABEL.
func keyValues(s string, vars map[string]string) ([][2]string, error) {
	words, err := shellWords(s, vars)
	if err != nil {
		return nil, err
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("missing key")
	}
	if !strings.Contains(words[0], "=") {
		// Legacy form: the rest of the line is the value.
		k, v, _ := strings.Cut(strings.TrimSpace(s), " ")
		vw, err := shellWords(strings.TrimSpace(v), vars)
		if err != nil {
			return nil, err
		}
		return [][2]string{{k, strings.Join(vw, " ")}}, nil
	}
	var out [][2]string
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("cannot parse %q: want key=value", w)
		}
		out = append(out, [2]string{k, v})
	}
	return out, nil
}

// shellWords splits s into words as the Dockerfile word processor does:
// whitespace separates words, double quotes group and expand variables,
// single quotes group literally, a backslash escapes the next character,
// and $NAME, ${NAME}, ${NAME:-word} and ${NAME:+word} expand from vars.
func shellWords(s string, vars map[string]string) ([]string, error) {
	var words []string
	var b strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t':
			if inWord {
				words = append(words, b.String())
				b.Reset()
				inWord = false
			}
		case ch == '\\':
			inWord = true
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		case ch == '\'':
			inWord = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated single quote in %q", s)
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case ch == '"':
			inWord = true
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				switch {
				case s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`, s[i+1]) >= 0:
					i++
					b.WriteByte(s[i])
				case s[i] == '$':
					n, err := expandVar(s[i:], vars, &b)
					if err != nil {
						return nil, err
					}
					i += n - 1
				default:
					b.WriteByte(s[i])
				}
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated double quote in %q", s)
			}
		case ch == '$':
			inWord = true
			n, err := expandVar(s[i:], vars, &b)
			if err != nil {
				return nil, err
			}
			i += n - 1
		default:
			inWord = true
			b.WriteByte(ch)
		}
	}
	if inWord {
		words = append(words, b.String())
	}
	return words, nil
}

// expandVar expands the variable reference at the start of s (which begins
// with '$') into b and returns how many bytes of s it used. Unset variables
// expand to nothing, as in Docker.
func expandVar(s string, vars map[string]string, b *strings.Builder) (int, error) {
	isName := func(c byte) bool {
		return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	if len(s) > 1 && s[1] == '{' {
		end := strings.IndexByte(s, '}')
		if end < 0 {
			return 0, fmt.Errorf("unterminated ${ in %q", s)
		}
		expr := s[2:end]
		name, word, op := expr, "", ""
		if i := strings.Index(expr, ":"); i >= 0 {
			name, op, word = expr[:i], expr[i:min(i+2, len(expr))], expr[min(i+2, len(expr)):]
		}
		for i := 0; i < len(name); i++ {
			if !isName(name[i]) {
				return 0, fmt.Errorf("unsupported substitution ${%s}", expr)
			}
		}
		v, set := vars[name]
		switch op {
		case "":
		case ":-":
			if !set || v == "" {
				v = word
			}
		case ":+":
			if set && v != "" {
				v = word
			} else {
				v = ""
			}
		default:
			return 0, fmt.Errorf("unsupported substitution ${%s}", expr)
		}
		b.WriteString(v)
		return end + 1, nil
	}
	n := 1
	for n < len(s) && isName(s[n]) {
		n++
	}
	if n == 1 {
		b.WriteByte('$')
		return 1, nil
	}
	b.WriteString(vars[s[1:n]])
	return n, nil
}

func setEnv(env []string, k, v string) []string {
	for i, kv := range env {
		if strings.HasPrefix(kv, k+"=") {
			env[i] = k + "=" + v
			return env
		}
	}
	return append(env, k+"="+v)
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}
