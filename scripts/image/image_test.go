package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/x509"
	"debug/buildinfo"
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
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// maxImageBytes is the limit on the small image (the default
// build, -tags "nokafka nopprof"), per architecture: 12 MB unpacked (what `docker
// images` shows) and, far below that, what a pull of one platform
// transfers (manifest, config and compressed layer).
const maxImageBytes = 12_000_000

// smallImageTags are the build tags of the image the budget holds; other
// variants (Kafka, OTel-Arrow) have their sizes logged.
const smallImageTags = "nokafka nopprof"

// wantPlatforms are the images of the index, in order.
var wantPlatforms = []string{"amd64", "arm64"}

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
// for the test: one OCI image index with an image per platform, each held
// to the Dockerfile, the size budget and its SBOM, and each run (the
// foreign one under qemu-user) as a container would run it.
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
	a := readArchive(t, archive)
	t.Logf("archive %d bytes, index %s", fi.Size(), a.indexDigest)

	t.Run("index", func(t *testing.T) {
		var got []string
		for _, m := range a.index.Manifests {
			if m.MediaType != types.OCIManifestSchema1 || m.ArtifactType != "" {
				t.Errorf("manifest %s has media type %s, artifact type %q; want %s, none (an image is no artifact)", m.Digest, m.MediaType, m.ArtifactType, types.OCIManifestSchema1)
			}
			if m.Platform == nil {
				t.Errorf("manifest %s has no platform", m.Digest)
				continue
			}
			got = append(got, m.Platform.OS+"/"+m.Platform.Architecture)
			img := a.images[m.Platform.Architecture]
			if img.config.OS != m.Platform.OS || img.config.Architecture != m.Platform.Architecture {
				t.Errorf("manifest for %s/%s has a config for %s/%s", m.Platform.OS, m.Platform.Architecture, img.config.OS, img.config.Architecture)
			}
		}
		var want []string
		for _, arch := range wantPlatforms {
			want = append(want, "linux/"+arch)
		}
		if !slices.Equal(got, want) {
			t.Errorf("index platforms %v, want %v", got, want)
		}
	})

	t.Run("skopeo reads it", func(t *testing.T) { checkSkopeo(t, archive, a) })

	for _, arch := range wantPlatforms {
		img := a.images[arch]
		if img == nil {
			continue // reported by "index"
		}
		t.Run("linux/"+arch, func(t *testing.T) { checkImage(t, img) })
	}
}

// checkImage holds one platform's image to the Dockerfile, the budget and
// its SBOM, and runs it.
func checkImage(t *testing.T, img *archiveImage) {
	cfg := img.config.Config
	bin := img.file(t, wantEntrypoint[0])
	bi, err := buildinfo.Read(bytes.NewReader(bin.data))
	if err != nil {
		t.Fatalf("%s has no Go build information: %v", wantEntrypoint[0], err)
	}
	tags := buildSetting(bi, "-tags")
	t.Logf("tags %q: pull %d bytes, layers %d bytes uncompressed, binary %d bytes", tags, img.pullSize, img.unpackedSize, len(bin.data))
	if tags == smallImageTags {
		// "Total size" as `docker images` shows it: the unpacked layers.
		if img.unpackedSize > maxImageBytes {
			t.Errorf("unpacked image is %d bytes, over %d", img.unpackedSize, maxImageBytes)
		}
		if img.pullSize > maxImageBytes {
			t.Errorf("a pull of this platform transfers %d bytes, over %d", img.pullSize, maxImageBytes)
		}
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
		{"binary GOARCH", buildSetting(bi, "GOARCH"), img.config.Architecture},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s = %q, want %q", tc.name, tc.got, tc.want)
		}
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
		if want, ok := elfMachine[img.config.Architecture]; !ok || f.Machine != want {
			t.Errorf("binary is %v, image architecture %s", f.Machine, img.config.Architecture)
		}
	})

	t.Run("SBOM", func(t *testing.T) { checkSBOM(t, img, bin.data, bi) })

	t.Run("binary runs", func(t *testing.T) {
		emu := emulator(t, img.config.Architecture, false)
		exe := filepath.Join(t.TempDir(), "otlp-lite")
		if err := os.WriteFile(exe, bin.data, 0o755); err != nil {
			t.Fatal(err)
		}
		command := func(args ...string) *exec.Cmd {
			if emu != "" {
				return exec.Command(emu, append([]string{exe}, args...)...)
			}
			return exec.Command(exe, args...)
		}
		out, err := command("version").CombinedOutput()
		if err != nil {
			t.Fatalf("otlp-lite version: %v\n%s", err, out)
		}
		want := "otlp-lite " + cfg.Labels["org.opencontainers.image.version"] + " "
		if !strings.HasPrefix(string(out), want) || !strings.HasSuffix(strings.TrimSpace(string(out)), " linux/"+img.config.Architecture) {
			t.Errorf("otlp-lite version = %q, want it to start with %q (the image's version label) and end with linux/%s", out, want, img.config.Architecture)
		}
		// version -v: what the binary was built with, as its SBOM says.
		out, err = command("version", "-v").Output()
		if err != nil {
			t.Fatalf("otlp-lite version -v: %v", err)
		}
		_, rest, _ := strings.Cut(string(out), "\n")
		printed, err := debug.ParseBuildInfo(rest)
		if err != nil {
			t.Fatalf("otlp-lite version -v: cannot parse: %v\n%s", err, out)
		}
		printed.GoVersion = bi.GoVersion // ParseBuildInfo skips the go line
		if printed.String() != bi.String() {
			t.Errorf("otlp-lite version -v =\n%s\nthe binary's build information:\n%s", printed, bi)
		}
		// Every flag of CMD must exist, or the container exits at once.
		// `serve -h` prints the flags and exits 2 without serving.
		usage, _ := command(wantCmd[0], "-h").CombinedOutput()
		for _, a := range cfg.Cmd[1:] {
			name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if !strings.Contains(string(usage), "\n  -"+name+" ") {
				t.Errorf("CMD passes -%s, which `serve -h` does not list", name)
			}
		}
	})

	t.Run("runs as a container", func(t *testing.T) {
		runContainer(t, img, emulator(t, img.config.Architecture, true))
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

// checkSkopeo reads the archive with a third party, skopeo (the
// containers/image library, which podman and CRI-O load images with):
// the index it finds, each platform's image, and a copy of every blob of
// every platform (which verifies each digest) into an OCI layout.
func checkSkopeo(t *testing.T, archive string, a *imageArchive) {
	skopeo, err := exec.LookPath("skopeo")
	if err != nil {
		t.Skip("no skopeo: `make image-test` installs Debian's skopeo when run as root with apt-get; or apt-get install skopeo")
	}
	tmp := t.TempDir()
	run := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(skopeo, append([]string{"--insecure-policy", "--tmpdir", tmp}, args...)...)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "HOME="+tmp)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("skopeo %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
		}
		return out
	}
	ref := "oci-archive:" + archive
	if raw := run("inspect", "--raw", ref); digestOf(raw) != a.indexDigest.String() {
		t.Errorf("skopeo finds a manifest with digest %s, want the image index %s:\n%s", digestOf(raw), a.indexDigest, raw)
	}
	for _, arch := range wantPlatforms {
		var got struct {
			Architecture, Os string
			Layers           []string
		}
		if err := json.Unmarshal(run("inspect", "--override-os", "linux", "--override-arch", arch, ref), &got); err != nil {
			t.Fatal(err)
		}
		img := a.images[arch]
		if img == nil {
			continue
		}
		var want []string
		for _, l := range img.manifest.Layers {
			want = append(want, l.Digest.String())
		}
		if got.Os != "linux" || got.Architecture != arch || !slices.Equal(got.Layers, want) {
			t.Errorf("skopeo inspect for linux/%s: %s/%s layers %v, want layers %v", arch, got.Os, got.Architecture, got.Layers, want)
		}
	}
	dest := filepath.Join(t.TempDir(), "copy")
	run("copy", "--all", "--preserve-digests", ref, "oci:"+dest+":copy")
	var idx v1.IndexManifest
	mustUnmarshal(t, mustRead(t, filepath.Join(dest, "index.json")), &idx)
	if len(idx.Manifests) != 1 || idx.Manifests[0].Digest != a.indexDigest {
		t.Errorf("skopeo copy --all wrote %v, want the index %s", idx.Manifests, a.indexDigest)
	}
}

// elfMachine is the ELF machine of a GOARCH's binaries.
var elfMachine = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

// qemuName is qemu-user's name for a GOARCH.
var qemuName = map[string]string{"amd64": "x86_64", "arm64": "aarch64"}

// emulator returns "" when this machine runs arch's binaries itself, and
// otherwise the path of a qemu-user emulator for arch: Debian's
// qemu-user-static (`make image-test` installs it when it can), or
// qemu-user's, which does not run in a chroot (static false) and so only
// serves the tests that run the binary directly. It skips the test when
// there is none.
func emulator(t *testing.T, arch string, static bool) string {
	t.Helper()
	if runtime.GOOS == "linux" && arch == runtime.GOARCH {
		return ""
	}
	if runtime.GOOS != "linux" || qemuName[arch] == "" {
		t.Skipf("cannot run a linux/%s binary on %s/%s", arch, runtime.GOOS, runtime.GOARCH)
	}
	names := []string{"qemu-" + qemuName[arch] + "-static", "qemu-" + qemuName[arch]}
	for _, name := range names {
		p, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		if static {
			f, err := elf.Open(p)
			if err != nil {
				continue
			}
			dynamic := slices.ContainsFunc(f.Progs, func(p *elf.Prog) bool { return p.Type == elf.PT_INTERP })
			f.Close()
			if dynamic {
				continue
			}
		}
		return p
	}
	kind := "qemu-user emulator"
	if static {
		kind = "static qemu-user emulator (one runs in the image's chroot)"
	}
	t.Skipf("no %s for linux/%s (%s): `make image-test` installs Debian's qemu-user-static when run as root with apt-get; or apt-get install qemu-user-static",
		kind, arch, strings.Join(names, ", "))
	return ""
}

func buildSetting(bi *debug.BuildInfo, key string) string {
	for _, s := range bi.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

// cycloneDX is the part of a CycloneDX BOM the test reads.
type cycloneDX struct {
	BOMFormat   string `json:"bomFormat"`
	SpecVersion string `json:"specVersion"`
	Metadata    struct {
		Tools      json.RawMessage `json:"tools"`
		Component  cdxComponent    `json:"component"`
		Properties []cdxProperty   `json:"properties"`
	} `json:"metadata"`
	Components []cdxComponent `json:"components"`
}

type cdxComponent struct {
	Type    string `json:"type"`
	Name    string `json:"name"`
	Version string `json:"version"`
	PURL    string `json:"purl"`
}

type cdxProperty struct{ Name, Value string }

// checkSBOM holds the image's SBOM to its binary: CycloneDX naming our
// module at the image's version, exactly the modules (path and version)
// the binary's build information names and the Go standard library at its
// version, for this platform, with the binary's digest.
func checkSBOM(t *testing.T, img *archiveImage, bin []byte, bi *debug.BuildInfo) {
	f := img.file(t, sbomPath)
	var bom cycloneDX
	dec := json.NewDecoder(bytes.NewReader(f.data))
	if err := dec.Decode(&bom); err != nil {
		t.Fatalf("%s: cannot parse: %v", sbomPath, err)
	}
	if bom.BOMFormat != "CycloneDX" || bom.SpecVersion == "" {
		t.Errorf("%s: bomFormat %q specVersion %q, want CycloneDX", sbomPath, bom.BOMFormat, bom.SpecVersion)
	}
	if !bytes.Contains(bom.Metadata.Tools, []byte(`"cyclonedx-gomod"`)) {
		t.Errorf("%s does not name its generator, cyclonedx-gomod: %s", sbomPath, bom.Metadata.Tools)
	}
	main := bom.Metadata.Component
	if main.Type != "application" || main.Name != bi.Main.Path || main.Name != "github.com/otlp-lite/otlp-lite" ||
		main.Version != img.config.Config.Labels["org.opencontainers.image.version"] {
		t.Errorf("SBOM describes %s %s@%s, want the application %s at the image's version %s", main.Type, main.Name, main.Version,
			bi.Main.Path, img.config.Config.Labels["org.opencontainers.image.version"])
	}
	props := map[string]string{}
	for _, p := range bom.Metadata.Properties {
		props[p.Name] = p.Value
	}
	arch := img.config.Architecture
	if got, want := props["cdx:gomod:binary:hash:SHA-256"], fmt.Sprintf("%x", sha256.Sum256(bin)); got != want {
		t.Errorf("SBOM is of a binary with SHA-256 %s; the image's binary has %s", got, want)
	}
	if props["cdx:gomod:build:env:GOARCH"] != arch || props["cdx:gomod:build:env:GOOS"] != "linux" {
		t.Errorf("SBOM is of a %s/%s build, the image is linux/%s", props["cdx:gomod:build:env:GOOS"], props["cdx:gomod:build:env:GOARCH"], arch)
	}
	// The modules, and the standard library at the binary's Go version
	// (-std: most Go vulnerabilities are in it).
	want := []string{"std@" + bi.GoVersion}
	var got []string
	for _, d := range bi.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		want = append(want, d.Path+"@"+d.Version)
	}
	for _, c := range bom.Components {
		got = append(got, c.Name+"@"+c.Version)
		if !strings.HasPrefix(c.PURL, "pkg:golang/"+c.Name+"@"+c.Version+"?") || !strings.Contains(c.PURL, "goarch="+arch) {
			t.Errorf("component %s@%s has package URL %q, want pkg:golang/%s@%s?...goarch=%s", c.Name, c.Version, c.PURL, c.Name, c.Version, arch)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) || len(want) == 0 {
		t.Errorf("SBOM components\n%v\nthe binary's modules\n%v", got, want)
	}
}

// archiveImage is one platform's image read back from an archive: its
// manifest, its config and its layers merged into one file tree keyed by
// absolute path.
type archiveImage struct {
	manifest     v1.Manifest
	config       v1.ConfigFile
	files        map[string]*archiveFile
	unpackedSize int64 // the layers' tars
	pullSize     int64 // manifest, config and (compressed) layers
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

// imageArchive is an archive read back: the image index that index.json
// names and each platform's image, by GOARCH.
type imageArchive struct {
	indexDigest v1.Hash
	index       v1.IndexManifest
	images      map[string]*archiveImage
}

// readArchive reads an OCI image layout tar the way a runtime would:
// index.json names one image index (as `docker buildx build --output
// type=oci` writes it), which names an image manifest per platform; each
// manifest, its config and its layers (gzip-compressed or not) are read and
// their digests checked. Docker's manifest.json, when present, must name
// the same blobs, one entry per platform.
func readArchive(t *testing.T, name string) *imageArchive {
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
	blob := func(d v1.Descriptor) []byte {
		t.Helper()
		b, ok := entries["blobs/"+d.Digest.Algorithm+"/"+d.Digest.Hex]
		if !ok {
			t.Fatalf("archive lacks blob %s", d.Digest)
		}
		if digestOf(b) != d.Digest.String() || int64(len(b)) != d.Size {
			t.Fatalf("blob %s has digest %s and %d bytes, its descriptor says %d", d.Digest, digestOf(b), len(b), d.Size)
		}
		return b
	}
	if _, ok := entries["oci-layout"]; !ok {
		t.Fatal("archive has no oci-layout: not an OCI image layout")
	}
	var top v1.IndexManifest
	mustUnmarshal(t, entries["index.json"], &top)
	if len(top.Manifests) != 1 || top.Manifests[0].MediaType != types.OCIImageIndex {
		t.Fatalf("index.json names %d manifests (%v), want one OCI image index", len(top.Manifests), top.Manifests)
	}
	a := &imageArchive{indexDigest: top.Manifests[0].Digest, images: map[string]*archiveImage{}}
	mustUnmarshal(t, blob(top.Manifests[0]), &a.index)
	byConfig := map[string]*archiveImage{}
	for _, d := range a.index.Manifests {
		if d.Platform == nil {
			t.Fatalf("index entry %s has no platform", d.Digest)
		}
		if a.images[d.Platform.Architecture] != nil {
			t.Fatalf("index has two images for %s", d.Platform.Architecture)
		}
		img := readImage(t, blob, d)
		a.images[d.Platform.Architecture] = img
		byConfig[img.manifest.Config.Digest.String()] = img
	}
	// manifest.json, Docker's own format, is what `docker load` reads on
	// Docker's classic store (and before Docker 25); its paths must name
	// the blobs of the index's images.
	if b, ok := entries["manifest.json"]; ok {
		var dm tarball.Manifest
		mustUnmarshal(t, b, &dm)
		if len(dm) != len(a.images) {
			t.Fatalf("manifest.json lists %d images, the index %d", len(dm), len(a.images))
		}
		for _, e := range dm {
			cfg := entries[path.Clean(e.Config)]
			img := byConfig[digestOf(cfg)]
			if cfg == nil || img == nil || path.Clean(e.Config) != "blobs/sha256/"+img.manifest.Config.Digest.Hex {
				t.Fatalf("manifest.json names config %s, not one of the index's images", e.Config)
			}
			var want []string
			for _, l := range img.manifest.Layers {
				want = append(want, "blobs/sha256/"+l.Digest.Hex)
			}
			if !slices.Equal(e.Layers, want) {
				t.Errorf("manifest.json names layers %v for linux/%s, its OCI manifest %v", e.Layers, img.config.Architecture, want)
			}
		}
	}
	return a
}

// readImage reads the image manifest d and what it names.
func readImage(t *testing.T, blob func(v1.Descriptor) []byte, d v1.Descriptor) *archiveImage {
	t.Helper()
	img := &archiveImage{files: map[string]*archiveFile{}, pullSize: d.Size}
	mustUnmarshal(t, blob(d), &img.manifest)
	man := img.manifest
	mustUnmarshal(t, blob(man.Config), &img.config)
	img.pullSize += man.Config.Size
	if len(img.config.RootFS.DiffIDs) != len(man.Layers) {
		t.Fatalf("config lists %d layers, manifest %d", len(img.config.RootFS.DiffIDs), len(man.Layers))
	}
	for i, l := range man.Layers {
		raw := blob(l)
		img.pullSize += l.Size
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
	return flagValue(cfg.Cmd, name)
}

// flagValue returns the value of -name=value in args.
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
