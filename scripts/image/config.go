package main

import v1 "github.com/google/go-containerregistry/pkg/v1"

// The image, as the final stage of the repository's Dockerfile describes
// it. TestDockerfileAgrees fails when one changes without the other.

const imageName = "otlp-lite"

// sbomPath is where each platform's image holds its binary's SBOM.
const sbomPath = "/usr/share/sbom/otlp-lite.cdx.json"

// imageFile is one COPY of the final stage. Source is the Dockerfile's: a
// path in the build context, or "build:PATH" in the build stage (build.sh
// builds those on this machine: "build:/out/NAME" from the -platform
// directory, the CA bundle from -ca-bundle).
type imageFile struct {
	Dest, Source string
	Dir          bool // an empty directory
	UID, GID     int  // COPY --chown
	Mode         int  // 0: the source file's mode
}

var imageFiles = []imageFile{
	{Dest: "/etc/ssl/certs/ca-certificates.crt", Source: "build:/etc/ssl/certs/ca-certificates.crt", Mode: 0o644},
	{Dest: "/etc/passwd", Source: "scripts/image/rootfs/etc/passwd"},
	{Dest: "/etc/group", Source: "scripts/image/rootfs/etc/group"},
	{Dest: "/otlp-lite", Source: "build:/out/otlp-lite", Mode: 0o755},
	// The binary's CycloneDX SBOM (cyclonedx-gomod bin: the modules its
	// build information names), where a scanner looking at the image's
	// files finds it.
	{Dest: sbomPath, Source: "build:/out/otlp-lite.cdx.json", Mode: 0o644},
	{Dest: "/data", Source: "build:/out/data", Dir: true, UID: 65532, GID: 65532},
}

// imageEnv is the final stage's ENV: the listeners on every interface
// (inside a container localhost is unreachable from outside) and the data
// directory on the volume. They are environment variables, not arguments
// in CMD, so that `docker run IMAGE serve -storage-max-bytes 1GiB` keeps
// them, and -e OTLP_LITE_GRPC_ADDR=... still changes them.
var imageEnv = []string{
	"OTLP_LITE_GRPC_ADDR=0.0.0.0:4317",
	"OTLP_LITE_HTTP_ADDR=0.0.0.0:4318",
	"OTLP_LITE_ADMIN_ADDR=0.0.0.0:8888",
	"OTLP_LITE_DATA_DIR=/data",
}

// imageConfig is the final stage's LABEL, USER, EXPOSE, VOLUME, ENV,
// ENTRYPOINT and CMD, with the PATH BuildKit sets for a Linux image that
// sets none.
func imageConfig(version string) v1.Config {
	return v1.Config{
		Env: append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, imageEnv...),
		Labels: map[string]string{
			"org.opencontainers.image.title":       "otlp-lite",
			"org.opencontainers.image.description": "OpenTelemetry OTLP receiver (gRPC and HTTP) with a durable disk store",
			"org.opencontainers.image.version":     version,
		},
		User:         "65532:65532",
		ExposedPorts: map[string]struct{}{"4317/tcp": {}, "4318/tcp": {}, "8888/tcp": {}},
		Volumes:      map[string]struct{}{"/data": {}},
		Entrypoint:   []string{"/otlp-lite"},
		Cmd:          []string{"serve"},
	}
}
