# otlp-lite: build, run and test. `make run` and `make test` are the whole
# set-up on a fresh machine (Go 1.26 and Python 3 with venv are all it needs).

GO        ?= go
TAGS      ?=
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
BIN       := bin/otlp-lite
LDFLAGS   := -s -w -X main.version=$(VERSION)
VENV      := interop/.venv
PYTHON    := $(VENV)/bin/python
FUZZTIME  ?= 20s

.PHONY: build run test unit interop venv bench fuzz lint clean kafka-test soak image image-test browser haproxy image-tools deploy-test deploy-manifests deploy-tools

# The container image: one OCI image index for linux/amd64 and linux/arm64
# (each with its binary's CycloneDX SBOM), packed by scripts/image without
# any container engine into an OCI archive. It leaves Kafka and the
# profiler (-admin-pprof) out by default to stay small (under 12 MB unpacked
# per architecture); build the Kafka-capable image with `make image
# IMAGE_TAGS= IMAGE=bin/otlp-lite-kafka-image.tar`, the OTel-Arrow one with
# IMAGE_TAGS='nokafka otelarrow'.
IMAGE_TAGS ?= nokafka nopprof
IMAGE      ?= bin/otlp-lite-image.tar
image:
	VERSION=$(VERSION) TAGS='$(IMAGE_TAGS)' GO=$(GO) scripts/image/build.sh $(IMAGE)

# The image test runs the other architecture's binary under qemu-user and
# reads the archive back with skopeo (containers/image, the library podman
# and CRI-O load images with): Debian's qemu-user-static (Debian 13's
# qemu-user is static too) and skopeo, installed when missing (as root,
# with apt-get), as the browser is.
image-tools:
	@if { ! { command -v qemu-aarch64-static || command -v qemu-aarch64; } || ! command -v skopeo; } >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  echo "installing qemu-user-static and skopeo (Debian packages) for the image test"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  { apt-get update -qq && apt-get install -y -qq --no-install-recommends qemu-user-static skopeo; } </dev/null \
	    || echo "cannot install qemu-user-static and skopeo: the image test will skip what needs them"; \
	fi

image-test: image image-tools
	cd scripts/image && OTLP_LITE_IMAGE=$(abspath $(IMAGE)) $(GO) test -race -count=1 ./...

# A real single-node Kafka broker (KRaft) on loopback, its jars fetched from
# Maven Central on the first run; the script always stops it.
kafka-test:
	scripts/kafka/test.sh

# TAGS=nokafka leaves the Kafka sink out (about 3.9 MB smaller);
# TAGS=otelarrow adds OTel-Arrow in (arrowreceiver: about 13 MB larger).
build:
	CGO_ENABLED=0 $(GO) build -trimpath -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/otlp-lite

# The receiver on the embedded disk store: OTLP/gRPC on localhost:4317,
# OTLP/HTTP on :4318, the status page on :8888, data in ./otlp-data,
# bounded to 1 GiB (the oldest segments go first) so that a load test
# against a development run cannot fill the disk. Ctrl-C stops it
# gracefully.
run: build
	./$(BIN) serve -grpc-addr localhost:4317 -data-dir ./otlp-data -storage-max-bytes 1GiB

# Everything CI runs: lint, unit tests with the race detector, then the
# interop suite with real OpenTelemetry clients (Go SDK, Python SDK).
test: lint unit interop kafka-test image-test deploy-test

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	cd interop && $(GO) vet ./...
	cd interop/stef && $(GO) vet ./...
	$(GO) vet -tags otelarrow ./arrowreceiver ./service ./cmd/otlp-lite
	cd interop/arrow && $(GO) vet ./...
	cd bench && $(GO) vet ./...
	cd scripts/image && $(GO) vet ./...
	cd examples/tracestore && $(GO) vet ./...
	cd deploy && $(GO) vet ./...

# The status page's browser test (cmd/otlp-lite/status_browser_test.go)
# drives Chromium from the distribution's packages. Installed here only when
# it is missing, apt-get exists and we are root (a fresh Debian CI machine,
# no stdin); elsewhere the test looks for a browser itself and skips, saying
# why, if there is none. Its screenshot goes to bin/artifacts.
browser:
	@if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  echo "installing chromium (Debian package) for the status page's browser test"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium fonts-liberation; } </dev/null \
	    || echo "cannot install chromium: the browser test will be skipped"; \
	fi

# HAProxy, from the distribution's packages, for the PROXY protocol interop
# test (interop/haproxy_test.go): installed as chromium is for the browser
# test, only when missing, with apt-get, as root, without stdin; elsewhere
# the test says why it is skipped.
haproxy:
	@if ! command -v haproxy >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  echo "installing haproxy (Debian package) for the PROXY protocol interop test"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  { apt-get update -qq && apt-get install -y -qq --no-install-recommends haproxy; } </dev/null \
	    || echo "cannot install haproxy: the HAProxy test will be skipped"; \
	fi

unit: browser
	mkdir -p bin/artifacts
	OTLP_LITE_ARTIFACTS=$(CURDIR)/bin/artifacts $(GO) test -race -count=1 ./...
	# The allocation and memory tests the race detector skips (it changes
	# allocation sizes and counts), without it: under -race alone they
	# never ran (compression's TestStreamDecodeOneBuffer failed unseen).
	$(GO) test -count=1 -run 'Alloc|Cost|OneBuffer|Review' ./compression ./otlp ./otlpjson ./ingest ./handler ./otlpcolumns
	# The benchmark tools' own tests (streamcpu's TestRunTiny starts real
	# servers; bench's TestJSONZeroAlloc runs without the race detector).
	cd bench && $(GO) test -count=1 ./...
	$(GO) test -race -count=1 -tags otelarrow ./arrowreceiver
	$(GO) test -race -count=1 -tags otelarrow -run OTelArrow ./service
	cd examples/tracestore && $(GO) test -count=1 ./...

$(PYTHON): interop/python/requirements.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r interop/python/requirements.txt
	touch $(PYTHON)

venv: $(PYTHON)

interop: $(PYTHON) haproxy
	cd interop && OTLP_LITE_PYTHON=$(CURDIR)/$(PYTHON) $(GO) test -count=1 -timeout 15m ./...
	cd interop/stef && $(GO) test -count=1 -timeout 5m ./...
	cd interop/arrow && $(GO) test -count=1 -timeout 5m ./...

# Benchmarks: micro-benchmarks (-benchmem; compare runs with benchstat), the
# decoders against the collector's pdata, and the side-by-side server run
# against the grpc-go + pdata baseline (BENCHMARKS.md explains each).
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./otlpdecode/ ./otlppb/ ./otlpview/ ./otlpjson/ ./handler/ ./storage/disk/ | tee bench.txt
	cd bench && $(GO) test -run '^$$' -bench . -benchmem -count 6 . | tee ../bench-baseline.txt
	cd bench && $(GO) run ./cmd/sidebyside

# Every fuzz target for FUZZTIME each (go test -fuzz takes one target at a time).
fuzz:
	@set -e; for pkg in ./compression ./server ./grpcwire ./handler ./kafkasource ./otlppb ./otlpdecode ./otlpview ./otlpjson ./otlpcolumns ./otlp ./otlpclient ./storage/disk ./storage/kafka ./forward ./stefreceiver; do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 1s $$pkg; \
	  done; \
	done; \
	for t in $$($(GO) test -tags otelarrow -list '^Fuzz' ./arrowreceiver | grep '^Fuzz'); do \
	  echo "fuzz ./arrowreceiver $$t"; $(GO) test -tags otelarrow -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 1s ./arrowreceiver; \
	done; \
	for t in $$(cd interop && $(GO) test -list '^Fuzz' . | grep '^Fuzz'); do \
	  echo "fuzz interop $$t"; (cd interop && $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 1s .); \
	done

# deploy/ (the Helm chart, the plain manifests rendered from it, the systemd
# unit) is a module of its own, so Helm and k8s.io/api stay out of the
# receiver's go.mod: the chart rendered with Helm's Go library for its
# defaults and each example, every object decoded strictly, the manifests
# compared, the rendered environment run by the real binary (with Kafka:
# the default build) and probed, and the unit checked by systemd-analyze.
deploy-test: build deploy-tools
	cd deploy && OTLP_LITE_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 ./...

# The plain manifests in deploy/kubernetes: the chart's default rendering.
deploy-manifests:
	cd deploy && $(GO) generate ./...

# systemd-analyze (Debian's systemd package) and strace for deploy-test's
# unit checks: installed only when missing, with apt-get, as root and
# without stdin (a fresh CI machine), as the browser target does; elsewhere
# those tests skip, saying why.
deploy-tools:
	@if { ! command -v systemd-analyze || ! command -v strace; } >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  echo "installing systemd and strace (Debian packages) for the systemd unit's tests"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  { apt-get update -qq && apt-get install -y -qq --no-install-recommends systemd strace; } </dev/null \
	    || echo "cannot install systemd and strace: the unit's tests will be skipped"; \
	fi

# Crash consistency for longer: 500 SIGKILL rounds of the store and the server.
soak:
	OTLP_LITE_SOAK_ROUNDS=500 $(GO) test -run Crash -count=1 -timeout 60m ./storage/disk ./cmd/otlp-lite

clean:
	rm -rf bin $(VENV) bench.txt bench-baseline.txt
