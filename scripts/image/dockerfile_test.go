package main

import (
	"encoding/json"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// stage is what the Dockerfile's final stage sets, read by the small
// parser below: enough for the instructions that stage may hold, and a
// failure for any other, so that the Go configuration (config.go) that
// builds the image without an engine cannot drift from the Dockerfile.
type stage struct {
	from, user        string
	args, ports, vols []string
	entrypoint, cmd   []string
	env               []string          // KEY=value, as written
	labels            map[string]string // as written, $VERSION unexpanded
	copies            []imageFile
}

var labelPair = regexp.MustCompile(`([^\s=]+)=("(?:[^"\\]|\\.)*"|\S+)`)

func dockerfileFinalStage(t *testing.T) stage {
	t.Helper()
	src := string(mustRead(t, "../../Dockerfile"))
	// Comment lines are dropped (also inside a continuation), a trailing
	// backslash joins a line with the next.
	var lines []string
	cont := false
	for _, l := range strings.Split(src, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		joined := strings.HasSuffix(l, "\\")
		l = strings.TrimSuffix(l, "\\")
		if cont {
			lines[len(lines)-1] += " " + strings.TrimSpace(l)
		} else if strings.TrimSpace(l) != "" {
			lines = append(lines, strings.TrimSpace(l))
		}
		cont = joined
	}
	var st stage
	execForm := func(instr, s string) []string {
		var v []string
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatalf("%s %s: want the JSON (exec) form: %v", instr, s, err)
		}
		return v
	}
	for _, l := range lines {
		instr, rest, _ := strings.Cut(l, " ")
		rest = strings.TrimSpace(rest)
		switch instr = strings.ToUpper(instr); instr {
		case "FROM":
			st = stage{from: rest, labels: map[string]string{}}
		case "ARG":
			st.args = append(st.args, rest)
		case "USER":
			st.user = rest
		case "EXPOSE":
			for _, p := range strings.Fields(rest) {
				if !strings.Contains(p, "/") {
					p += "/tcp"
				}
				st.ports = append(st.ports, p)
			}
		case "VOLUME":
			if strings.HasPrefix(rest, "[") {
				st.vols = append(st.vols, execForm(instr, rest)...)
			} else {
				st.vols = append(st.vols, strings.Fields(rest)...)
			}
		case "ENTRYPOINT":
			st.entrypoint, st.cmd = execForm(instr, rest), nil
		case "CMD":
			st.cmd = execForm(instr, rest)
		case "ENV":
			for _, m := range labelPair.FindAllStringSubmatch(rest, -1) {
				st.env = append(st.env, m[1]+"="+m[2])
			}
		case "LABEL":
			for _, m := range labelPair.FindAllStringSubmatch(rest, -1) {
				v := m[2]
				if strings.HasPrefix(v, `"`) {
					var err error
					if v, err = strconv.Unquote(v); err != nil {
						t.Fatalf("LABEL %s: %v", m[0], err)
					}
				}
				st.labels[m[1]] = v
			}
		case "COPY":
			words := strings.Fields(rest)
			var c imageFile
			from := ""
			for len(words) > 0 && strings.HasPrefix(words[0], "--") {
				k, v, _ := strings.Cut(words[0][2:], "=")
				switch k {
				case "from":
					from = v + ":"
				case "chown":
					u, g, _ := strings.Cut(v, ":")
					var err1, err2 error
					c.UID, err1 = strconv.Atoi(u)
					c.GID, err2 = strconv.Atoi(g)
					if err1 != nil || err2 != nil {
						t.Fatalf("COPY --chown=%s: want numeric uid:gid", v)
					}
				default:
					t.Fatalf("COPY --%s: config.go does not model it", k)
				}
				words = words[1:]
			}
			srcs, dest := words[:len(words)-1], words[len(words)-1]
			if len(srcs) > 1 && !strings.HasSuffix(dest, "/") {
				t.Fatalf("COPY %s: several sources need a destination ending with /", rest)
			}
			for _, s := range srcs {
				c.Source, c.Dest = from+s, path.Clean(dest)
				if strings.HasSuffix(dest, "/") {
					c.Dest = path.Join(dest, path.Base(s))
				}
				st.copies = append(st.copies, c)
			}
		default:
			if st.from == "scratch" || st.from == "" {
				t.Errorf("%s in the Dockerfile's final stage: config.go does not model it", instr)
			}
		}
	}
	return st
}

// TestDockerfileAgrees holds the Go image definition (config.go) to the
// Dockerfile's final stage: base, user, ports, volume, entrypoint, command,
// labels and every COPY (destination, source, owner).
func TestDockerfileAgrees(t *testing.T) {
	st := dockerfileFinalStage(t)
	cfg := imageConfig("v9")
	if st.from != "scratch" {
		t.Errorf("final stage FROM %s; the Go image is built on an empty base", st.from)
	}
	labels := map[string]string{}
	for k, v := range st.labels {
		labels[k] = strings.NewReplacer("${VERSION}", "v9", "$VERSION", "v9").Replace(v)
	}
	if !slices.ContainsFunc(st.args, func(a string) bool { return strings.HasPrefix(a, "VERSION") }) {
		t.Error("the final stage does not declare ARG VERSION, which its labels use")
	}
	slices.Sort(st.ports)
	slices.Sort(st.vols)
	copies := slices.Clone(imageFiles)
	for i := range copies {
		copies[i].Dir, copies[i].Mode = false, 0 // not in the Dockerfile
	}
	byDest := func(a, b imageFile) int { return strings.Compare(a.Dest, b.Dest) }
	slices.SortFunc(copies, byDest)
	slices.SortFunc(st.copies, byDest)
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"USER", st.user, cfg.User},
		{"EXPOSE", st.ports, sortedKeys(cfg.ExposedPorts)},
		{"VOLUME", st.vols, sortedKeys(cfg.Volumes)},
		{"ENTRYPOINT", st.entrypoint, cfg.Entrypoint},
		{"CMD", st.cmd, cfg.Cmd},
		{"ENV", st.env, imageEnv},
		{"LABEL", labels, cfg.Labels},
		{"COPY", st.copies, copies},
		// The image test's expectations are the Dockerfile's too.
		{"image test", []any{wantUser, wantPorts, wantVolumes, wantEntrypoint, wantCmd, wantEnv}, []any{st.user, st.ports, st.vols, st.entrypoint, st.cmd, st.env}},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("Dockerfile %s = %#v, config.go has %#v", tc.name, tc.got, tc.want)
		}
	}
}

// TestSBOMGeneratorPinned holds the SBOM generator of the Dockerfile's
// build stage to build.sh's: the same cyclonedx-gomod version (go.mod's
// tool requirement, the Dockerfile's ARG) run with the same flags.
func TestSBOMGeneratorPinned(t *testing.T) {
	gomod := string(mustRead(t, "go.mod"))
	if !strings.Contains(gomod, "\ntool github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod\n") {
		t.Error("go.mod has no tool directive for cyclonedx-gomod, which build.sh runs")
	}
	req := regexp.MustCompile(`(?m)^\s*github\.com/CycloneDX/cyclonedx-gomod (v\S+)`).FindStringSubmatch(gomod)
	arg := regexp.MustCompile(`(?m)^ARG CYCLONEDX_GOMOD_VERSION=(\S+)$`).FindStringSubmatch(string(mustRead(t, "../../Dockerfile")))
	if req == nil || arg == nil || req[1] != arg[1] {
		t.Errorf("cyclonedx-gomod: go.mod requires %v, the Dockerfile's ARG CYCLONEDX_GOMOD_VERSION is %v", req, arg)
	}
	const run = "cyclonedx-gomod bin -json -std -noserial -notimestamp -version \"$VERSION\""
	for _, f := range []string{"../../Dockerfile", "build.sh"} {
		if !strings.Contains(strings.ReplaceAll(string(mustRead(t, f)), `"$cdx" bin`, "cyclonedx-gomod bin"), run) {
			t.Errorf("%s does not run %s", f, run)
		}
	}
}
