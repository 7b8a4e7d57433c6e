#!/usr/bin/env bash
# Builds one command of a hack/tools/<tool> module into the binary cache and
# prints its path. The cache lives outside the clone and is keyed by the tools
# module's go.mod/go.sum and build flags, so a fresh clone on a machine that
# built the same pins before reuses the binary instead of rebuilding.
#
#   hack/build-tool.sh TOOL PACKAGE NAME [extra go build args...]
#
# With BUILD_TOOL_LOOKUP=1 it only looks: it prints the path and exits 0 when
# the binary is cached, and exits 1 without building when it is not. With
# BUILD_TOOL_WHERE=1 it prints the path the binary has (or will have).
#
# Tools build with the go command's defaults (cgo as `go env` says, no
# -trimpath), as the main module's own builds and tests do: the Go build
# cache then compiles a package once for the tools and the main module of
# one family (hack/align), instead of once per set of flags.
set -euo pipefail
tool=$1 pkg=$2 name=$3; shift 3
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$root/hack/tools/$tool
cache=${TRAINJOB_KUEUE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trainjob-kueue}
key=$( (cat "$dir/go.mod" "$dir/go.sum"; echo "$pkg $*"; go env GOVERSION CGO_ENABLED) | sha256sum | cut -c1-16)
out=$cache/bin/$tool-$key/$name
if [ "${BUILD_TOOL_WHERE:-}" = 1 ]; then echo "$out"; exit 0; fi
if [ -x "$out" ]; then echo "$out"; exit 0; fi
if [ "${BUILD_TOOL_LOOKUP:-}" = 1 ]; then exit 1; fi
mkdir -p "$(dirname "$out")" "$cache/timings"

# How long it took last time on this machine, else how long it takes in a
# cold make demo on two cores, built alone after the main module, sharing
# its family's packages (docs/development.md).
typical() {
  case $1 in
    kube-apiserver) echo 190 ;; kube-scheduler) echo 190 ;; kueue) echo 100 ;;
    kube-controller-manager) echo 60 ;; etcd) echo 30 ;; kubectl) echo 30 ;;
    kwok) echo 20 ;; jobset-controller-manager) echo 10 ;;
    trainer-controller-manager) echo 10 ;; *) echo 60 ;;
  esac
}
timing=$cache/timings/$name
if [ -s "$timing" ]; then estimate=$(cat "$timing") from="its last build here"
else estimate=$(typical "$name") from="typical on 2 cores"; fi

start=$(date +%s)
echo ">> building $name from hack/tools/$tool: about ${estimate}s ($from); cached afterwards" >&2
# A progress line every 30s so a long cold build is never a silent wait.
# Its sleep must die with it: a sleep left behind would hold the caller's
# stdout pipe open, and the caller would wait out the rest of its 30s.
( trap 'kill $s 2>/dev/null; exit 0' TERM
  while :; do sleep 30 & s=$!; wait $s; echo "   ... $name: $(( $(date +%s) - start ))s of about ${estimate}s" >&2; done ) >/dev/null &
ticker=$!
trap 'kill $ticker 2>/dev/null || true' EXIT
# A file of this process's own: a build of the same binary by a caller that
# holds no lock (controller-gen) can't interleave with it.
tmp=$out.tmp.$$
(cd "$dir" && go build "$@" -o "$tmp" "$pkg")
mv "$tmp" "$out"
took=$(( $(date +%s) - start ))
echo "$took" > "$timing"
echo ">> built $name in ${took}s" >&2
echo "$out"
