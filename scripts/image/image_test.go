package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/x509"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// maxArchiveBytes is the limit on the image: 12 MB for the archive
// with its compressed layers, what a registry stores and a pull transfers.
const maxArchiveBytes = 12_000_000

// The image the Dockerfile promises; the test holds every archive `make
// image` writes (docker save or scripts/image) to it.
var (
	wantEntrypoint = []string{"/otlp-lite"}
	wantCmd        = []string{"serve"}
	wantEnv        = []string{"OTLP_LITE_GRPC_ADDR=0.0.0.0:4317", "OTLP_LITE_HTTP_ADDR=0.0.0.0:4318", "OTLP_LITE_ADMIN_ADDR=0.0.0.0:8888", "OTLP_LITE_DATA_DIR=/data"}
	wantPorts      = []string{"4317/tcp", "4318/tcp", "8888/tcp"}
	wantVolumes    = []string{"/data"}
	wantUser       = "65532:65532"
)

// TestImage checks the archive named by OTLP_LITE_IMAGE (`make image-test`
// passes the one `make image` wrote) or, without it, one build.sh builds
// for the test.
func TestImage(t *testing.T) {
	archive := os.Getenv("OTLP_LITE_IMAGE")
	if archive == "" {
		archive = filepath.Join(t.TempDir(), "otlp-lite-image.tar")
		cmd := exec.Command("./build.sh", archive)
		cmd.Env = append(os.Environ(), "VERSION=v0.0.0-imagetest")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build.sh: %v\n%s", err, out)
		}
	}
	fi, err := os.Stat(archive)
	if err != nil {
		t.Fatal(err)
	}
	img := readArchive(t, archive)
	cfg := img.config.Config
	t.Logf("archive %d bytes, layers %d bytes uncompressed, binary %d bytes", fi.Size(), img.unpackedSize, len(img.files[wantEntrypoint[0]].data))
	// "Total size" as `docker images` shows it: the unpacked layers. The
	// default image leaves Kafka out to stay under the limit.
	if os.Getenv("OTLP_LITE_IMAGE_KAFKA") == "" && img.unpackedSize > maxArchiveBytes {
		t.Errorf("unpacked image is %d bytes, over %d", img.unpackedSize, maxArchiveBytes)
	}

	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"entrypoint", cfg.Entrypoint, wantEntrypoint},
		{"cmd", cfg.Cmd, wantCmd},
		{"env", slices.DeleteFunc(slices.Clone(cfg.Env), func(e string) bool { return strings.HasPrefix(e, "PATH=") }), wantEnv},
		{"user", cfg.User, wantUser},
		{"exposed ports", sortedKeys(cfg.ExposedPorts), wantPorts},
		{"volumes", sortedKeys(cfg.Volumes), wantVolumes},
		{"os", img.config.OS, "linux"},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s = %q, want %q", tc.name, tc.got, tc.want)
		}
	}

	if fi.Size() > maxArchiveBytes {
		t.Errorf("archive is %d bytes, over the %d limit", fi.Size(), maxArchiveBytes)
	}

	t.Run("non-root user", func(t *testing.T) {
		uid, gid := parseUser(t, cfg.User)
		if uid == 0 || gid == 0 {
			t.Fatalf("user %q runs as root", cfg.User)
		}
		passwd := img.file(t, "/etc/passwd")
		if !slices.ContainsFunc(strings.Split(string(passwd.data), "\n"), func(l string) bool {
			f := strings.Split(l, ":")
			return len(f) >= 4 && f[2] == strconv.Itoa(uid) && f[3] == strconv.Itoa(gid)
		}) {
			t.Errorf("/etc/passwd has no entry for %d:%d:\n%s", uid, gid, passwd.data)
		}
		if img.file(t, "/etc/group") == nil {
			t.Error("no /etc/group")
		}
	})

	t.Run("data volume writable by the user", func(t *testing.T) {
		uid, _ := parseUser(t, cfg.User)
		dataDir := serveSetting(cfg, "data-dir")
		if _, ok := cfg.Volumes[dataDir]; !ok {
			t.Errorf("-data-dir=%s is not a volume (%v)", dataDir, sortedKeys(cfg.Volumes))
		}
		d := img.file(t, dataDir)
		if d.hdr.Typeflag != tar.TypeDir || d.hdr.Uid != uid || d.hdr.Mode&0o200 == 0 {
			t.Errorf("%s: type %c owner %d mode %o, want a directory owned and writable by %d", dataDir, d.hdr.Typeflag, d.hdr.Uid, d.hdr.Mode, uid)
		}
	})

	t.Run("listeners on all interfaces at the exposed ports", func(t *testing.T) {
		for _, f := range []string{"grpc-addr", "http-addr", "admin-addr"} {
			host, port, err := net.SplitHostPort(serveSetting(cfg, f))
			if err != nil {
				t.Errorf("-%s: %v", f, err)
				continue
			}
			if host != "" && host != "0.0.0.0" && host != "::" {
				t.Errorf("-%s listens on %s only; inside a container that is unreachable", f, host)
			}
			if _, ok := cfg.ExposedPorts[port+"/tcp"]; !ok {
				t.Errorf("-%s port %s is not exposed (%v)", f, port, sortedKeys(cfg.ExposedPorts))
			}
		}
	})

	t.Run("CA certificates", func(t *testing.T) {
		f := img.file(t, "/etc/ssl/certs/ca-certificates.crt")
		if !x509.NewCertPool().AppendCertsFromPEM(f.data) {
			t.Error("/etc/ssl/certs/ca-certificates.crt holds no PEM certificate")
		}
	})

	bin := img.file(t, wantEntrypoint[0])
	t.Run("static stripped binary", func(t *testing.T) {
		if bin.hdr.Mode&0o111 == 0 {
			t.Errorf("%s mode %o is not executable", bin.hdr.Name, bin.hdr.Mode)
		}
		f, err := elf.NewFile(bytes.NewReader(bin.data))
		if err != nil {
			t.Fatalf("%s is not ELF: %v", bin.hdr.Name, err)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
				t.Errorf("binary has %v: it is dynamically linked and cannot run on scratch", p.Type)
			}
		}
		if f.Section(".symtab") != nil {
			t.Error("binary has a symbol table: not stripped (-ldflags -s)")
		}
		if want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[img.config.Architecture]; want != 0 && f.Machine != want {
			t.Errorf("binary is %v, image architecture %s", f.Machine, img.config.Architecture)
		}
	})

	t.Run("binary runs", func(t *testing.T) {
		if img.config.OS != runtime.GOOS || img.config.Architecture != runtime.GOARCH {
			t.Skipf("image is %s/%s, this machine %s/%s", img.config.OS, img.config.Architecture, runtime.GOOS, runtime.GOARCH)
		}
		exe := filepath.Join(t.TempDir(), "otlp-lite")
		if err := os.WriteFile(exe, bin.data, 0o755); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(exe, "version").CombinedOutput()
		if err != nil {
			t.Fatalf("otlp-lite version: %v\n%s", err, out)
		}
		want := "otlp-lite " + cfg.Labels["org.opencontainers.image.version"] + " "
		if !strings.HasPrefix(string(out), want) {
			t.Errorf("otlp-lite version = %q, want it to start with %q (the image's version label)", out, want)
		}
		// Every flag of CMD must exist, or the container exits at once.
		// `serve -h` prints the flags and exits 2 without serving.
		usage, _ := exec.Command(exe, wantCmd[0], "-h").CombinedOutput()
		for _, a := range cfg.Cmd[1:] {
			name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if !strings.Contains(string(usage), "\n  -"+name+" ") {
				t.Errorf("CMD passes -%s, which `serve -h` does not list", name)
			}
		}
	})

	t.Run("runs as a container", func(t *testing.T) {
		if img.config.OS != runtime.GOOS || img.config.Architecture != runtime.GOARCH {
			t.Skipf("image is %s/%s, this machine %s/%s", img.config.OS, img.config.Architecture, runtime.GOOS, runtime.GOARCH)
		}
		runContainer(t, img)
	})

	t.Run("Dockerfile COPY destinations present", func(t *testing.T) {
		for _, c := range dockerfileFinalStage(t).copies {
			f, ok := img.files[c.Dest]
			if !ok {
				t.Errorf("the Dockerfile copies %s to %s; the image has no %s", c.Source, c.Dest, c.Dest)
			} else if f.hdr.Uid != c.UID || f.hdr.Gid != c.GID {
				t.Errorf("%s is owned by %d:%d, the Dockerfile's COPY says %d:%d", c.Dest, f.hdr.Uid, f.hdr.Gid, c.UID, c.GID)
			}
		}
	})
}

// archiveImage is an image read back from an archive: its config and its
// layers merged into one file tree keyed by absolute path.
type archiveImage struct {
	config       v1.ConfigFile
	files        map[string]*archiveFile
	unpackedSize int64
}

type archiveFile struct {
	hdr  *tar.Header
	data []byte
}

func (img *archiveImage) file(t *testing.T, p string) *archiveFile {
	t.Helper()
	f, ok := img.files[p]
	if !ok {
		t.Fatalf("image has no %s", p)
	}
	return f
}

// readArchive reads an OCI image layout tar the way a runtime would:
// index.json, then (through nested indexes, picking linux) the manifest,
// its config and its layers, gzip-compressed or not.
func readArchive(t *testing.T, name string) *archiveImage {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entries := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("cannot read archive: %v", err)
		}
		if hdr.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			entries[path.Clean(hdr.Name)] = b
		}
	}
	blob := func(h v1.Hash) []byte {
		t.Helper()
		digest := h.String()
		b, ok := entries["blobs/"+h.Algorithm+"/"+h.Hex]
		if !ok {
			t.Fatalf("archive lacks blob %s", digest)
		}
		if digestOf(b) != digest {
			t.Fatalf("blob %s has digest %s", digest, digestOf(b))
		}
		return b
	}
	// manifest.json, Docker's own format, is what `docker save` before
	// Docker 25 writes and what `docker load` before 25 and `crane push`
	// read; its paths name the same blobs as the OCI index.
	var legacy *v1.Manifest
	if b, ok := entries["manifest.json"]; ok {
		var dm tarball.Manifest
		mustUnmarshal(t, b, &dm)
		if len(dm) != 1 {
			t.Fatalf("manifest.json lists %d images, want 1", len(dm))
		}
		file := func(name string) v1.Descriptor {
			t.Helper()
			b, ok := entries[path.Clean(name)]
			if !ok {
				t.Fatalf("manifest.json names %s, which the archive lacks", name)
			}
			if algo, hex, ok := strings.Cut(strings.TrimPrefix(name, "blobs/"), "/"); ok && digestOf(b) != algo+":"+hex {
				t.Fatalf("%s has digest %s", name, digestOf(b))
			}
			entries["blobs/sha256/"+strings.TrimPrefix(digestOf(b), "sha256:")] = b
			return v1.Descriptor{Digest: v1.Hash{Algorithm: "sha256", Hex: strings.TrimPrefix(digestOf(b), "sha256:")}, Size: int64(len(b))}
		}
		legacy = &v1.Manifest{Config: file(dm[0].Config)}
		for _, l := range dm[0].Layers {
			legacy.Layers = append(legacy.Layers, file(l))
		}
	}
	var man v1.Manifest
	if _, ok := entries["oci-layout"]; ok {
		var idx v1.IndexManifest
		mustUnmarshal(t, entries["index.json"], &idx)
		for {
			if len(idx.Manifests) == 0 {
				t.Fatal("empty image index")
			}
			d := idx.Manifests[0]
			for _, m := range idx.Manifests {
				if m.Platform != nil && m.Platform.OS == "linux" && m.Platform.Architecture == runtime.GOARCH {
					d = m
				}
			}
			if d.MediaType == types.OCIImageIndex || d.MediaType == types.DockerManifestList {
				idx = v1.IndexManifest{}
				mustUnmarshal(t, blob(d.Digest), &idx)
				continue
			}
			mustUnmarshal(t, blob(d.Digest), &man)
			break
		}
		if legacy != nil {
			digests := func(m *v1.Manifest) []string {
				out := []string{m.Config.Digest.String()}
				for _, l := range m.Layers {
					out = append(out, l.Digest.String())
				}
				return out
			}
			if got, want := digests(legacy), digests(&man); !slices.Equal(got, want) {
				t.Errorf("manifest.json names blobs %v, the OCI manifest %v", got, want)
			}
		}
	} else if legacy != nil {
		man = *legacy
	} else {
		t.Fatal("archive has neither oci-layout nor manifest.json: not an image archive")
	}
	img := &archiveImage{files: map[string]*archiveFile{}}
	cfgBlob := blob(man.Config.Digest)
	mustUnmarshal(t, cfgBlob, &img.config)
	if len(img.config.RootFS.DiffIDs) != len(man.Layers) {
		t.Fatalf("config lists %d layers, manifest %d", len(img.config.RootFS.DiffIDs), len(man.Layers))
	}
	for i, l := range man.Layers {
		raw := blob(l.Digest)
		var r io.Reader = bytes.NewReader(raw)
		if len(raw) > 2 && raw[0] == 0x1f && raw[1] == 0x8b {
			zr, err := gzip.NewReader(r)
			if err != nil {
				t.Fatal(err)
			}
			r = zr
		}
		layerTar, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("layer %s: %v", l.Digest, err)
		}
		if got := digestOf(layerTar); got != img.config.RootFS.DiffIDs[i].String() {
			t.Errorf("layer %d: uncompressed digest %s, config diff_id %s", i, got, img.config.RootFS.DiffIDs[i])
		}
		img.unpackedSize += int64(len(layerTar))
		lr := tar.NewReader(bytes.NewReader(layerTar))
		for {
			hdr, err := lr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("layer %s: %v", l.Digest, err)
			}
			if strings.HasPrefix(path.Base(hdr.Name), ".wh.") {
				t.Fatalf("layer %s has whiteout %s; an image on scratch should only add files", l.Digest, hdr.Name)
			}
			data, err := io.ReadAll(lr)
			if err != nil {
				t.Fatal(err)
			}
			img.files[path.Clean("/"+hdr.Name)] = &archiveFile{hdr: hdr, data: data}
		}
	}
	return img
}

func mustUnmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("cannot decode %T: %v", v, err)
	}
}

func parseUser(t *testing.T, user string) (uid, gid int) {
	t.Helper()
	u, g, ok := strings.Cut(user, ":")
	uid, err := strconv.Atoi(u)
	if err != nil {
		t.Fatalf("user %q is not numeric: Kubernetes runAsNonRoot can only verify a numeric user", user)
	}
	gid = uid
	if ok {
		if gid, err = strconv.Atoi(g); err != nil {
			t.Fatalf("group in %q is not numeric", user)
		}
	}
	return uid, gid
}

// flagValue returns the value of -name=value in args.
// serveSetting returns the value the image gives serve's flag name: from
// its OTLP_LITE_* environment variable, or from a -name=value argument in
// Cmd.
func serveSetting(cfg v1.Config, name string) string {
	env := "OTLP_LITE_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "="
	for _, e := range cfg.Env {
		if v, ok := strings.CutPrefix(e, env); ok {
			return v
		}
	}
	return serveSetting(cfg, name)
}

func flagValue(args []string, name string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(strings.TrimLeft(a, "-"), name+"="); ok {
			return v
		}
	}
	return fmt.Sprintf("<no -%s>", name)
}

func digestOf(b []byte) string {
	return fmt.Sprintf("sha256:%x", sha256.Sum256(b))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
