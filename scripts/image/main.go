// Command image packs the final stage of the repository's Dockerfile into
// an OCI image archive without a Docker engine, for machines where none
// runs. It reads the image configuration (USER, EXPOSE, VOLUME, ENV, LABEL,
// WORKDIR, STOPSIGNAL, ENTRYPOINT, CMD) from the Dockerfile itself and
// performs its COPY instructions, taking COPY --from=NAME sources from a
// local directory that stands in for stage NAME's root filesystem (-stage);
// scripts/image/build.sh fills that directory the way the Dockerfile's
// build stage does. A final stage with anything it cannot reproduce (RUN,
// a base other than scratch) is refused, so the two ways of building cannot
// silently drift apart.
//
// Usage (from the repository root):
//
//	go -C scripts/image run . -context "$PWD" -dockerfile "$PWD/Dockerfile" \
//	    -stage build=/tmp/stage -build-arg VERSION=v1.2.0 -tag v1.2.0 \
//	    -o "$PWD/bin/otlp-lite-image.tar"
//
// The archive is an OCI image layout in a tar (with Docker's manifest.json
// as well): `docker load -i`, `podman load -i`, `skopeo copy
// oci-archive:...` and `crane push` read it. Timestamps come from
// SOURCE_DATE_EPOCH (reproducible builds), so the same inputs give the same
// digest.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// keyValueFlag collects repeated NAME=VALUE flags.
type keyValueFlag map[string]string

func (f keyValueFlag) String() string { return fmt.Sprint(map[string]string(f)) }

func (f keyValueFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want NAME=VALUE, got %q", s)
	}
	f[k] = v
	return nil
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	var (
		contextDir = fs.String("context", ".", "build context directory (sources of COPY without --from)")
		dockerfile = fs.String("dockerfile", "Dockerfile", "the Dockerfile whose final stage is packed")
		out        = fs.String("o", "otlp-lite-image.tar", "output OCI archive")
		name       = fs.String("name", "otlp-lite", "image repository name")
		tag        = fs.String("tag", "dev", "image tag")
		goos       = fs.String("os", "linux", "image OS")
		arch       = fs.String("arch", runtime.GOARCH, "image architecture (GOARCH of the binary)")
		stages     = keyValueFlag{}
		buildArgs  = keyValueFlag{}
	)
	fs.Var(stages, "stage", "NAME=DIR: DIR stands in for the root filesystem of build stage NAME (repeatable)")
	fs.Var(buildArgs, "build-arg", "NAME=VALUE build argument, as with docker build (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	created, err := sourceDateEpoch()
	if err != nil {
		return err
	}
	src, err := os.ReadFile(*dockerfile)
	if err != nil {
		return fmt.Errorf("cannot read Dockerfile: %w", err)
	}
	var buf bytes.Buffer
	err = pack(&buf, packOptions{
		Dockerfile: src,
		BuildArgs:  buildArgs,
		Sources:    copySources{context: *contextDir, stages: stages},
		Image:      image{Name: *name, Tag: *tag, OS: *goos, Arch: *arch, Created: created},
	})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		return err
	}
	// Write then rename, so a failed run never leaves a truncated archive
	// behind for `docker load` or the image test to trip on.
	tmp := *out + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("cannot write %s: %w", *out, err)
	}
	return os.Rename(tmp, *out)
}

// packOptions are the inputs of pack.
type packOptions struct {
	Dockerfile []byte
	BuildArgs  map[string]string
	Sources    copySources
	Image      image // Stage and Layer are filled in by pack
}

// pack parses the Dockerfile's final stage, performs its COPY instructions
// and writes the OCI archive to w.
func pack(w io.Writer, o packOptions) error {
	st, err := parseDockerfile(o.Dockerfile, o.BuildArgs)
	if err != nil {
		return fmt.Errorf("cannot use Dockerfile: %w", err)
	}
	l := newLayer(o.Image.Created)
	for _, c := range st.Copies {
		if err := l.apply(c, o.Sources); err != nil {
			return err
		}
	}
	img := o.Image
	img.Stage, img.Layer = st, l
	return writeArchive(w, img)
}

// sourceDateEpoch is the reproducible-builds timestamp
// (https://reproducible-builds.org/specs/source-date-epoch/), or the Unix
// epoch when it is unset.
func sourceDateEpoch() (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("cannot parse SOURCE_DATE_EPOCH=%q: %w", s, err)
	}
	return time.Unix(n, 0).UTC(), nil
}
