#!/bin/sh
# Builds the otlp-lite container image into an OCI archive (default
# bin/otlp-lite-image.tar), from the repository root:
#
#   scripts/image/build.sh [OUT]
#
# With a working Docker engine (`docker info` succeeds) it runs
# `docker build` on the Dockerfile and `docker save`s the result. Without
# one it builds the binary the way the Dockerfile's build stage does (same
# go build flags) and has scripts/image (go-containerregistry; no engine, no
# registry) put it, the machine's CA bundle and the rest of the Dockerfile's
# final stage into an OCI archive.
#
# Environment: VERSION (default: git describe), TAGS (Go build tags, e.g.
# nokafka), GOARCH (image architecture, default the host's), CA_BUNDLE
# (default /etc/ssl/certs/ca-certificates.crt), GO (default go),
# SOURCE_DATE_EPOCH (default: the last commit's time, for reproducibility),
# DOCKER=0 to skip Docker even when an engine answers.
set -eu

cd "$(dirname "$0")/../.."
root=$(pwd)
out=${1:-bin/otlp-lite-image.tar}
case $out in /*) ;; *) out=$root/$out ;; esac
GO=${GO:-go}
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
TAGS=${TAGS-nokafka}
GOARCH=${GOARCH:-$($GO env GOARCH)}
CA_BUNDLE=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
export SOURCE_DATE_EPOCH
mkdir -p "$(dirname "$out")"

if [ "${DOCKER:-1}" != 0 ] && command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
	docker build --platform "linux/$GOARCH" \
		--build-arg VERSION="$VERSION" --build-arg TAGS="$TAGS" \
		-t "otlp-lite:$VERSION" .
	docker save -o "$out" "otlp-lite:$VERSION"
	echo "image otlp-lite:$VERSION (docker), archive $out"
	exit 0
fi

if [ ! -s "$CA_BUNDLE" ]; then
	echo "no CA bundle at $CA_BUNDLE: install ca-certificates or set CA_BUNDLE" >&2
	exit 1
fi
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# The build stage of the Dockerfile: the same go build flags.
CGO_ENABLED=0 GOOS=linux GOARCH=$GOARCH $GO build -trimpath -buildvcs=false -tags "$TAGS" \
	-ldflags "-s -w -X main.version=$VERSION" -o "$stage/otlp-lite" ./cmd/otlp-lite

$GO -C scripts/image run . -binary "$stage/otlp-lite" -ca-bundle "$CA_BUNDLE" \
	-version "$VERSION" -arch "$GOARCH" -o "$out"
echo "image otlp-lite:$VERSION (OCI archive, no Docker engine), $out: $(wc -c <"$out") bytes; binary $(wc -c <"$stage/otlp-lite") bytes"
