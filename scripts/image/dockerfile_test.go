package main

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestParseDockerfile(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		args map[string]string
		want finalStage // compared field by field where set
	}{
		{
			name: "exec form, continuation, comments, earlier stages ignored",
			src: `# syntax=docker/dockerfile:1
ARG GO_VERSION=1.26.8
FROM golang:${GO_VERSION} AS build
RUN go build -o /out/app . \
 && mkdir /out/data
USER root
EXPOSE 9999
FROM scratch
COPY --from=build /out/app /app
USER 65532:65532
EXPOSE 4317 4318/tcp \
# a comment inside a continuation is dropped
       8888
VOLUME ["/data"]
ENTRYPOINT ["/app"]
CMD ["serve", "-addr=0.0.0.0:4317"]
`,
			want: finalStage{
				Base: "scratch", User: "65532:65532",
				Exposed:    []string{"4317/tcp", "4318/tcp", "8888/tcp"},
				Volumes:    []string{"/data"},
				Entrypoint: []string{"/app"},
				Cmd:        []string{"serve", "-addr=0.0.0.0:4317"},
				Copies:     []copyInstr{{Line: 9, From: "build", Mode: -1, Sources: []string{"/out/app"}, Dest: "/app"}},
			},
		},
		{
			name: "build args, defaults and substitution forms",
			src: `FROM scratch
ARG VERSION=dev
ARG EMPTY
ENV A=1 B="two words" C=${EMPTY:-fallback} D=${VERSION:+set}
LABEL org.opencontainers.image.version="$VERSION" literal='$VERSION' esc=\$VERSION
`,
			args: map[string]string{"VERSION": "v1.2.3"},
			want: finalStage{
				Base: "scratch",
				Env:  []string{"A=1", "B=two words", "C=fallback", "D=set"},
				Labels: map[string]string{
					"org.opencontainers.image.version": "v1.2.3",
					"literal":                          "$VERSION",
					"esc":                              "$VERSION",
				},
			},
		},
		{
			name: "ENTRYPOINT after CMD resets CMD; WORKDIR makes COPY destinations absolute",
			src: `FROM scratch
CMD ["a"]
ENTRYPOINT ["/b"]
WORKDIR /srv
COPY --chown=10 f g ./
COPY --chmod=0600 ["h", "conf"]
`,
			want: finalStage{
				Base: "scratch", Entrypoint: []string{"/b"}, WorkingDir: "/srv",
				Copies: []copyInstr{
					{Line: 5, UID: 10, GID: 10, Mode: -1, Sources: []string{"f", "g"}, Dest: "/srv/"},
					{Line: 6, Mode: 0o600, Sources: []string{"h"}, Dest: "/srv/conf"},
				},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseDockerfile([]byte(tc.src), tc.args)
			if err != nil {
				t.Fatal(err)
			}
			w := tc.want
			check := func(field string, got, want any) {
				if !reflect.ValueOf(want).IsZero() && !reflect.DeepEqual(got, want) {
					t.Errorf("%s = %#v, want %#v", field, got, want)
				}
			}
			check("Base", got.Base, w.Base)
			check("User", got.User, w.User)
			check("Exposed", got.Exposed, w.Exposed)
			check("Volumes", got.Volumes, w.Volumes)
			check("Entrypoint", got.Entrypoint, w.Entrypoint)
			check("Cmd", got.Cmd, w.Cmd)
			check("Env", got.Env, w.Env)
			check("Labels", got.Labels, w.Labels)
			check("WorkingDir", got.WorkingDir, w.WorkingDir)
			check("Copies", got.Copies, w.Copies)
			if w.Entrypoint != nil && w.Cmd == nil && got.Cmd != nil {
				t.Errorf("Cmd = %q, want none", got.Cmd)
			}
		})
	}
}

// TestParseDockerfileRefuses covers final stages the packer cannot build
// the way Docker would: it must fail rather than write a different image.
func TestParseDockerfileRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, src, wantErr string
	}{
		{"base image", "FROM alpine\nUSER 1\n", `FROM "alpine"`},
		{"RUN in final stage", "FROM scratch\nRUN true\n", "RUN at line 2"},
		{"shell-form CMD", "FROM scratch\nCMD serve -x\n", "JSON (exec) form"},
		{"shell-form ENTRYPOINT", "FROM scratch\nENTRYPOINT /app\n", "JSON (exec) form"},
		{"ADD", "FROM scratch\nADD https://example.com/x /x\n", "ADD at line 2"},
		{"user name in --chown", "FROM scratch\nCOPY --chown=nonroot a /a\n", "only numeric ids"},
		{"wildcard source", "FROM scratch\nCOPY *.crt /etc/\n", "wildcard"},
		{"unknown COPY flag", "FROM scratch\nCOPY --exclude=x a /a\n", "unsupported flag --exclude"},
		{"several sources to a file", "FROM scratch\nCOPY a b /c\n", "must end with /"},
		{"bad port", "FROM scratch\nEXPOSE http\n", `cannot parse port "http"`},
		{"escape directive", "# escape=`\nFROM scratch\n", "escape parser directive"},
		{"no FROM", "ARG A=1\n", "no FROM"},
		{"instruction before FROM", "LABEL a=b\nFROM scratch\n", "before the first FROM"},
		{"unterminated quote", "FROM scratch\nLABEL a=\"b\n", "unterminated double quote"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseDockerfile([]byte(tc.src), nil)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestParseRepositoryDockerfile keeps the repository's Dockerfile within
// what the packer reproduces.
func TestParseRepositoryDockerfile(t *testing.T) {
	st, err := parseDockerfile(mustRead(t, "../../Dockerfile"), map[string]string{"VERSION": "v9"})
	if err != nil {
		t.Fatal(err)
	}
	if st.Labels["org.opencontainers.image.version"] != "v9" {
		t.Errorf("version label = %q, want the VERSION build argument", st.Labels["org.opencontainers.image.version"])
	}
	if !reflect.DeepEqual(st.Cmd, wantCmd) || !reflect.DeepEqual(st.Entrypoint, wantEntrypoint) || st.User != wantUser {
		t.Errorf("final stage = %+v", st)
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestShellWords(t *testing.T) {
	vars := map[string]string{"X": "x", "Y": "two words"}
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"a  b\tc", []string{"a", "b", "c"}},
		{`"a b" 'c d'`, []string{"a b", "c d"}},
		{`$X${X}x "$Y"`, []string{"xxx", "two words"}},
		{`a\ b \"`, []string{"a b", `"`}},
		{`"\$X" '$X' $ $UNSET.`, []string{"$X", "$X", "$", "."}},
		{`k=""`, []string{"k="}},
		{``, nil},
	} {
		got, err := shellWords(tc.in, vars)
		if err != nil {
			t.Errorf("shellWords(%q): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("shellWords(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
