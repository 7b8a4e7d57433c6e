#!/bin/sh
# Builds the manager binary for an image: static (CGO_ENABLED=0), -trimpath,
# no VCS stamp, version and commit linked in. The one build both images run:
# the Dockerfile's builder stage calls it, and so does `make image`
# (hack/tools/image) for each platform, so both produce the same binary from
# the same sources and Go release.
#
#   [GOOS=linux] [GOARCH=arm64] [VERSION=v0.1.0] [COMMIT=sha] hack/build-manager.sh OUTPUT
#
# VERSION defaults to `git describe --tags --always --dirty`, COMMIT to
# `git rev-parse HEAD`; without git (a Docker build context has no .git),
# to "dev" and "unknown", as the binary's own defaults.
set -eu
out=${1:?usage: hack/build-manager.sh OUTPUT}
case $out in /*) ;; *) out=$(pwd)/$out ;; esac
cd "$(dirname "$0")/.."
if [ -z "${VERSION:-}" ]; then
  VERSION=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
fi
if [ -z "${COMMIT:-}" ]; then
  COMMIT=$(git rev-parse HEAD 2>/dev/null || echo unknown)
fi
CGO_ENABLED=0 exec go build -trimpath -buildvcs=false \
  -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" \
  -o "$out" ./cmd/trainjob-kueue
