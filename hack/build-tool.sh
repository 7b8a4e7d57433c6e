#!/usr/bin/env bash
# Builds one command of a hack/tools/<tool> module into the binary cache and
# prints its path. The cache lives outside the clone and is keyed by the tools
# module's go.mod/go.sum and build flags, so a fresh clone on a machine that
# built the same pins before reuses the binary instead of rebuilding.
#
#   hack/build-tool.sh TOOL PACKAGE NAME [extra go build args...]
#
# With BUILD_TOOL_LOOKUP=1 it only looks: it prints the path and exits 0 when
# the binary is cached, and exits 1 without building when it is not.
set -euo pipefail
tool=$1 pkg=$2 name=$3; shift 3
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$root/hack/tools/$tool
cache=${TRAINJOB_KUEUE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trainjob-kueue}
key=$( (cat "$dir/go.mod" "$dir/go.sum"; echo "$pkg $*"; go env GOVERSION) | sha256sum | cut -c1-16)
out=$cache/bin/$tool-$key/$name
if [ -x "$out" ]; then echo "$out"; exit 0; fi
if [ "${BUILD_TOOL_LOOKUP:-}" = 1 ]; then exit 1; fi
mkdir -p "$(dirname "$out")"
start=$(date +%s)
echo ">> building $name from hack/tools/$tool (first time on this machine; cached afterwards)" >&2
# A progress line every 30s so a long cold build is never a silent wait.
( while sleep 30; do echo "   ... still building $name ($(( $(date +%s) - start ))s)" >&2; done ) &
ticker=$!
trap 'kill $ticker 2>/dev/null || true' EXIT
# A file of this process's own: a build of the same binary by a caller that
# holds no lock (controller-gen) can't interleave with it.
tmp=$out.tmp.$$
(cd "$dir" && CGO_ENABLED=0 go build -trimpath "$@" -o "$tmp" "$pkg")
mv "$tmp" "$out"
echo ">> built $name in $(( $(date +%s) - start ))s" >&2
echo "$out"
