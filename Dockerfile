# syntax=docker/dockerfile:1
#
# otlp-lite on an empty base: one static binary, the CA bundle (for TLS to
# Kafka brokers and anything else the receiver dials), /etc/passwd naming the
# non-root user, and the data directory it owns.
#
#   docker build --build-arg VERSION=$(git describe --tags --always) -t otlp-lite .
#   docker run -p 4317:4317 -p 4318:4318 -p 8888:8888 -v otlp-data:/data otlp-lite
#   docker buildx build --platform linux/amd64,linux/arm64 -t REGISTRY/otlp-lite:v1 --push .
#
# `make image` builds the same final stage for linux/amd64 and linux/arm64
# into one OCI archive without an engine (scripts/image, whose config.go
# mirrors it): keep the final stage to ARG, COPY, USER, EXPOSE, VOLUME,
# LABEL, ENV, ENTRYPOINT and CMD, and change config.go with it; its test
# fails on anything else or any difference.

# Pinned to the go directive of go.mod.
ARG GO_VERSION=1.26.8
# The SBOM generator, pinned to scripts/image/go.mod's (its test holds them
# equal).
ARG CYCLONEDX_GOMOD_VERSION=v1.10.0

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
ARG CYCLONEDX_GOMOD_VERSION
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
# Build tags: nokafka nopprof (the default) leaves the Kafka sink and the
# profiler out, keeping the image under 12 MB; build with --build-arg TAGS=
# for Kafka support and -admin-pprof.
ARG TAGS="nokafka nopprof"
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download \
 && go install github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@${CYCLONEDX_GOMOD_VERSION}
COPY . .
# Static (no cgo, so no libc and no ELF interpreter), stripped, and without
# local paths, so that it runs on scratch and is as small as it gets.
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -buildvcs=false -tags "$TAGS" -ldflags "-s -w -X main.version=$VERSION" \
      -o /out/otlp-lite ./cmd/otlp-lite \
 && GOOS=$TARGETOS GOARCH=$TARGETARCH cyclonedx-gomod bin -json -std -noserial -notimestamp -version "$VERSION" \
      -output /out/otlp-lite.cdx.json /out/otlp-lite \
 && mkdir -m 0755 /out/data

FROM scratch
ARG VERSION=dev
LABEL org.opencontainers.image.title="otlp-lite" \
      org.opencontainers.image.description="OpenTelemetry OTLP receiver (gRPC and HTTP) with a durable disk store" \
      org.opencontainers.image.version="$VERSION"
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY scripts/image/rootfs/etc/passwd scripts/image/rootfs/etc/group /etc/
COPY --from=build /out/otlp-lite /otlp-lite
# The binary's CycloneDX SBOM: the modules its build information names.
COPY --from=build /out/otlp-lite.cdx.json /usr/share/sbom/otlp-lite.cdx.json
# The store is the only thing the process writes: a volume owned by the
# non-root user, so a fresh named volume is writable without a root step.
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
# OTLP/gRPC, OTLP/HTTP (each port answers both protocols) and the admin
# listener (/metrics, /healthz, /readyz).
EXPOSE 4317 4318 8888
VOLUME ["/data"]
ENTRYPOINT ["/otlp-lite"]
# All interfaces (inside a container, localhost is unreachable from
# outside) and the volume, as environment variables rather than arguments,
# so that `docker run IMAGE serve -storage-max-bytes 1GiB` keeps them.
ENV OTLP_LITE_GRPC_ADDR=0.0.0.0:4317 \
    OTLP_LITE_HTTP_ADDR=0.0.0.0:4318 \
    OTLP_LITE_ADMIN_ADDR=0.0.0.0:8888 \
    OTLP_LITE_DATA_DIR=/data
CMD ["serve"]
