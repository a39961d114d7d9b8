#!/bin/sh
# Builds the otlp-lite container image, for linux/amd64 and linux/arm64, into
# one OCI archive (default bin/otlp-lite-image.tar), from the repository root:
#
#   scripts/image/build.sh [OUT]
#
# No container engine is used or needed: for each platform it cross-compiles
# the binary the way the Dockerfile's build stage does (same go build flags),
# writes its CycloneDX SBOM with cyclonedx-gomod (the version pinned by
# scripts/image/go.mod's tool directive, as the Dockerfile's ARG), and
# scripts/image (go-containerregistry; no engine, no registry) packs both,
# the machine's CA bundle and the rest of the Dockerfile's final stage into
# one image per platform under one OCI image index. `docker load -i OUT`
# loads it; `skopeo copy --all oci-archive:OUT docker://REGISTRY/otlp-lite:TAG`
# pushes both platforms. (Docker's default builder can neither build nor save
# a multi-platform index, so this script no longer hands over to `docker
# build` when an engine answers; `docker buildx build --platform
# linux/amd64,linux/arm64 .` builds the same images from the Dockerfile.)
#
# Environment: VERSION (default: git describe), TAGS (Go build tags, default
# "nokafka nopprof"; e.g. "nokafka otelarrow"), PLATFORMS (GOARCH values, default
# "amd64 arm64"), CA_BUNDLE (default /etc/ssl/certs/ca-certificates.crt), GO
# (default go), SOURCE_DATE_EPOCH (default: the last commit's time, for
# reproducibility).
set -eu

cd "$(dirname "$0")/../.."
root=$(pwd)
out=${1:-bin/otlp-lite-image.tar}
case $out in /*) ;; *) out=$root/$out ;; esac
GO=${GO:-go}
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
TAGS=${TAGS-nokafka nopprof}
PLATFORMS=${PLATFORMS:-amd64 arm64}
CA_BUNDLE=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
export SOURCE_DATE_EPOCH
# The tools below run on this machine, whatever the caller's GOOS/GOARCH.
unset GOOS GOARCH
mkdir -p "$(dirname "$out")"

if [ ! -s "$CA_BUNDLE" ]; then
	echo "no CA bundle at $CA_BUNDLE: install ca-certificates or set CA_BUNDLE" >&2
	exit 1
fi
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# The SBOM generator, built (once: the go command caches tools) for this
# machine; its path, so that GOARCH below reaches it, not its build.
cdx=github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod
$GO -C scripts/image tool $cdx version >/dev/null
cdx=$($GO -C scripts/image tool -n $cdx)
set --
for arch in $PLATFORMS; do
	dir=$stage/$arch
	mkdir -p "$dir"
	# The build stage of the Dockerfile: the same go build flags.
	CGO_ENABLED=0 GOOS=linux GOARCH=$arch $GO build -trimpath -buildvcs=false -tags "$TAGS" \
		-ldflags "-s -w -X main.version=$VERSION" -o "$dir/otlp-lite" ./cmd/otlp-lite
	# GOOS/GOARCH name the binary's platform in the SBOM's package URLs.
	GOOS=linux GOARCH=$arch "$cdx" bin -json -std -noserial -notimestamp -version "$VERSION" \
		-output "$dir/otlp-lite.cdx.json" "$dir/otlp-lite"
	echo "linux/$arch: binary $(wc -c <"$dir/otlp-lite") bytes, SBOM $(wc -c <"$dir/otlp-lite.cdx.json") bytes"
	set -- "$@" -platform "$arch=$dir"
done

$GO -C scripts/image run . "$@" -ca-bundle "$CA_BUNDLE" -version "$VERSION" -o "$out"
echo "image otlp-lite:$VERSION (OCI image index: $(echo $PLATFORMS | sed 's/\([^ ]*\)/linux\/\1/g')), $out: $(wc -c <"$out") bytes"
