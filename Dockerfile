# syntax=docker/dockerfile:1
# The manager's image for pipelines that build with Docker (BuildKit):
#
#   docker buildx build --platform linux/amd64,linux/arm64 \
#     --build-arg VERSION=$(git describe --tags --always --dirty) \
#     --build-arg COMMIT=$(git rev-parse HEAD) \
#     -t registry/trainjob-kueue:tag --push .
#
# Without a Docker engine, `make image` builds the same binary with the same
# script (hack/build-manager.sh) onto an empty base instead of distroless.
# Byte-identical binaries need the same Go release: GO_VERSION is go.mod's.
ARG GO_VERSION=1.26
FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS builder
ARG TARGETOS=linux
ARG TARGETARCH
ARG VERSION=dev
ARG COMMIT=unknown
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    GOOS=${TARGETOS} GOARCH=${TARGETARCH} VERSION=${VERSION} COMMIT=${COMMIT} \
    hack/build-manager.sh /out/manager

FROM gcr.io/distroless/static:nonroot
ARG VERSION=dev
ARG COMMIT=unknown
LABEL org.opencontainers.image.title="trainjob-kueue" \
      org.opencontainers.image.source="https://github.com/trainjob-kueue/trainjob-kueue" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=builder --chown=65532:65532 /out/manager /manager
WORKDIR /
USER 65532:65532
ENTRYPOINT ["/manager"]
