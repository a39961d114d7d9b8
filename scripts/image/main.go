// Command image builds the otlp-lite container image into an OCI archive
// without a Docker engine, with go-containerregistry: one OCI image index
// with an image per platform (linux/amd64 and linux/arm64 from build.sh),
// each one layer on an empty base holding what the repository's Dockerfile
// copies into its final stage (the static binary and its SBOM among them)
// and the configuration that stage sets (config.go). dockerfile_test.go
// holds the two to each other, so `docker buildx build` and this command
// cannot drift apart.
//
// Usage (from scripts/image; paths absolute or relative to it): one
// -platform per image, naming the directory that holds the platform's
// binary (otlp-lite) and SBOM (otlp-lite.cdx.json), the build stage's /out:
//
//	go run . -platform amd64=/tmp/out-amd64 -platform arm64=/tmp/out-arm64 -version v1.2.0 -o ../../bin/otlp-lite-image.tar
//
// The archive is an OCI image layout in a tar whose index.json names the
// image index (`skopeo copy --all oci-archive:...` pushes both platforms;
// `docker load -i` on Docker's containerd store unpacks the host's), with
// Docker's manifest.json as well for the classic store: there the
// -default-arch image is tagged otlp-lite:VERSION and every platform's
// otlp-lite:VERSION-ARCH. Timestamps come from SOURCE_DATE_EPOCH
// (reproducible builds), so the same inputs give the same digests.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	var o options
	fs.Func("platform", "ARCH=DIR: a linux/ARCH image from DIR/otlp-lite (static, built for GOARCH=ARCH) and DIR/otlp-lite.cdx.json (its SBOM); repeat per platform", func(v string) error {
		arch, dir, ok := strings.Cut(v, "=")
		if !ok || arch == "" || dir == "" {
			return fmt.Errorf("want ARCH=DIR, got %q", v)
		}
		if slices.ContainsFunc(o.Platforms, func(p platform) bool { return p.Arch == arch }) {
			return fmt.Errorf("platform %s given twice", arch)
		}
		o.Platforms = append(o.Platforms, platform{Arch: arch, Dir: dir})
		return nil
	})
	fs.StringVar(&o.CABundle, "ca-bundle", "/etc/ssl/certs/ca-certificates.crt", "CA certificates (PEM)")
	fs.StringVar(&o.RootFS, "rootfs", "rootfs", "directory holding etc/passwd and etc/group")
	fs.StringVar(&o.Version, "version", "dev", "version label and image tag")
	fs.StringVar(&o.DefaultArch, "default-arch", runtime.GOARCH, "the platform Docker's classic store loads as otlp-lite:VERSION (manifest.json)")
	out := fs.String("o", "otlp-lite-image.tar", "output OCI archive")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(o.Platforms) == 0 {
		return fmt.Errorf("at least one -platform ARCH=DIR is required")
	}
	var err error
	if o.Created, err = sourceDateEpoch(); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := build(&buf, o); err != nil {
		return err
	}
	// Write then rename, so a failed run never leaves a truncated archive.
	tmp := *out + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, *out)
}

// platform is one image of the index: linux/Arch, its build-stage files
// (otlp-lite, otlp-lite.cdx.json) in Dir.
type platform struct {
	Arch, Dir string
}

// options are the inputs of build.
type options struct {
	Platforms                 []platform
	CABundle, RootFS, Version string
	DefaultArch               string
	Created                   time.Time
}

// build writes the image archive to w: an image per platform, in the
// order given, under one index.
func build(w io.Writer, o options) error {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	var imgs []v1.Image
	for _, p := range o.Platforms {
		img, err := platformImage(o, p)
		if err != nil {
			return fmt.Errorf("linux/%s: %w", p.Arch, err)
		}
		imgs = append(imgs, img)
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        plainImage{img},
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: p.Arch}},
		})
	}
	return writeArchive(w, idx, imgs, o)
}

// plainImage is an image whose descriptor in the index has no
// artifactType: go-containerregistry would set it to the config's media
// type, which OCI 1.1 defines for artifacts, not images; docker buildx
// writes none, and containers/image before 5.29 (skopeo 1.9, Debian 12)
// cannot copy an index holding it without rewriting it (a new digest).
type plainImage struct{ v1.Image }

func (plainImage) ArtifactType() (string, error) { return "", nil }

// platformImage is the image for one platform: its layer and config.
func platformImage(o options, p platform) (v1.Image, error) {
	layerTar, err := layerTar(o, p)
	if err != nil {
		return nil, err
	}
	// Compressed here, once: given an uncompressed tar, go-containerregistry
	// compresses it again each time it reads the layer (digest, size,
	// write), which at the best level is most of the build's time.
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(layerTar); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(gz.Bytes())), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	created := v1.Time{Time: o.Created}
	img, err := mutate.Append(mutate.MediaType(empty.Image, types.OCIManifestSchema1), mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: created, CreatedBy: "COPY (Dockerfile final stage)", Comment: "built by scripts/image"},
	})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Created = "linux", p.Arch, created
	cf.Config = imageConfig(o.Version)
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, err
	}
	return mutate.ConfigMediaType(img, types.OCIConfigJSON), nil
}

// layerTar is the final stage's filesystem: each file of imageFiles with
// its parent directories (root-owned, 0755), sorted, stamped o.Created.
func layerTar(o options, p platform) ([]byte, error) {
	sources := map[string]string{"build:/etc/ssl/certs/ca-certificates.crt": o.CABundle}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{"/": true}
	var mkdir func(string) error
	mkdir = func(d string) error {
		if dirs[d] {
			return nil
		}
		if err := mkdir(path.Dir(d)); err != nil {
			return err
		}
		dirs[d] = true
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d[1:] + "/", Mode: 0o755, ModTime: o.Created, Format: tar.FormatPAX})
	}
	for _, f := range imageFiles {
		if err := mkdir(path.Dir(f.Dest)); err != nil {
			return nil, err
		}
		hdr := &tar.Header{Name: f.Dest[1:], Uid: f.UID, Gid: f.GID, ModTime: o.Created, Format: tar.FormatPAX}
		var data []byte
		switch {
		case f.Dir:
			dirs[f.Dest] = true
			hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, hdr.Name+"/", 0o755
		default:
			local, ok := sources[f.Source]
			if out, isOut := strings.CutPrefix(f.Source, "build:/out/"); isOut && !ok {
				local, ok = filepath.Join(p.Dir, filepath.FromSlash(out)), true
			}
			if !ok { // a build-context file, under scripts/image/rootfs
				local = filepath.Join(o.RootFS, filepath.FromSlash(f.Source[len("scripts/image/rootfs/"):]))
			}
			fi, err := os.Stat(local)
			if err != nil {
				return nil, err
			}
			if data, err = os.ReadFile(local); err != nil {
				return nil, err
			}
			hdr.Typeflag, hdr.Size, hdr.Mode = tar.TypeReg, int64(len(data)), int64(fi.Mode().Perm())
			if f.Mode != 0 {
				hdr.Mode = int64(f.Mode)
			}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	err := tw.Close()
	return buf.Bytes(), err
}

// writeArchive writes idx as an OCI image layout in a tar (the format of
// `docker buildx build --output type=oci` and `skopeo copy oci-archive:`),
// its index.json naming idx, plus Docker's manifest.json, one entry per
// image, for Docker's classic store and older `docker load`.
func writeArchive(w io.Writer, idx v1.ImageIndex, imgs []v1.Image, o options) error {
	dir, err := os.MkdirTemp("", "otlp-lite-image")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	err = p.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": o.Version,
		// containerd and Docker 25+ name the loaded image from it.
		"io.containerd.image.name": "docker.io/library/" + imageName + ":" + o.Version,
	}))
	if err != nil {
		return err
	}
	defaultArch := o.Platforms[0].Arch
	if slices.ContainsFunc(o.Platforms, func(p platform) bool { return p.Arch == o.DefaultArch }) {
		defaultArch = o.DefaultArch
	}
	var entries []any
	for i, img := range imgs {
		cfgName, err := img.ConfigName()
		if err != nil {
			return err
		}
		layers, err := img.Layers()
		if err != nil {
			return err
		}
		arch := o.Platforms[i].Arch
		tags := []string{imageName + ":" + o.Version + "-" + arch}
		if arch == defaultArch {
			tags = append([]string{imageName + ":" + o.Version}, tags...)
		}
		var layerPaths []string
		for _, l := range layers {
			d, err := l.Digest()
			if err != nil {
				return err
			}
			layerPaths = append(layerPaths, "blobs/sha256/"+d.Hex)
		}
		entries = append(entries, map[string]any{"Config": "blobs/sha256/" + cfgName.Hex, "RepoTags": tags, "Layers": layerPaths})
	}
	dm, err := json.Marshal(entries)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), dm, 0o644); err != nil {
		return err
	}
	// The layout's files in lexical order, stamped o.Created: reproducible.
	tw := tar.NewWriter(w)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		hdr := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, ModTime: o.Created, Format: tar.FormatPAX}
		if d.IsDir() {
			hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, hdr.Name+"/", 0o755
			return tw.WriteHeader(hdr)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(data))
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
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
