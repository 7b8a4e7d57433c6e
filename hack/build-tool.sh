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
#
# TOOL "." is the main module, built from the working tree into bin/NAME
# and never cached (the Go build cache makes a rebuild quick): its line
# and estimate are shown only when it builds for more than 10 s (a cold
# machine's first `make demo` compiles for about two minutes).
set -euo pipefail
tool=$1 pkg=$2 name=$3; shift 3
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${TRAINJOB_KUEUE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trainjob-kueue}
if [ "$tool" = . ]; then
  dir=$root from_where="the working tree" out=$root/bin/$name
  mkdir -p "$root/bin" "$cache/timings"
else
  dir=$root/hack/tools/$tool from_where=hack/tools/$tool
  key=$( (cat "$dir/go.mod" "$dir/go.sum"; echo "$pkg $*"; go env GOVERSION CGO_ENABLED) | sha256sum | cut -c1-16)
  out=$cache/bin/$tool-$key/$name
  if [ "${BUILD_TOOL_WHERE:-}" = 1 ]; then echo "$out"; exit 0; fi
  if [ -x "$out" ]; then echo "$out"; exit 0; fi
  if [ "${BUILD_TOOL_LOOKUP:-}" = 1 ]; then exit 1; fi
  mkdir -p "$(dirname "$out")" "$cache/timings"
fi

# How long it took last time on this machine (alone), else how long it
# takes cold on two cores built alone after what precedes it in the
# cluster's build streams, sharing its family's packages (the scheduler
# after kube-apiserver and kube-controller-manager; docs/development.md's
# table); times how many builds share the machine's cores now.
typical() {
  case $1 in
    kube-apiserver) echo 190 ;; kube-scheduler) echo 15 ;; kueue) echo 100 ;;
    kube-controller-manager) echo 60 ;; etcd) echo 10 ;; kubectl) echo 30 ;;
    kwok) echo 20 ;; jobset-controller-manager) echo 5 ;;
    trainer-controller-manager) echo 10 ;; controller-gen) echo 30 ;; demo) echo 120 ;; *) echo 60 ;;
  esac
}
# builds: the go builds running on this machine now (this one included).
builds() { pgrep -c -f '(^|/)go( -C [^ ]+)? build( |$)' || true; }
# doing: what go build $1 is doing now, from its child processes.
doing() {
  local now
  now=$(ps -o args= --ppid "$1" 2>/dev/null | sed -n 's/.*\/compile .* -p \([^ ]*\) .*/compiling \1/p; s/.*\/link .*/linking/p' | head -1)
  echo "${now:-resolving modules and packages}"
}
timing=$cache/timings/$name
if [ -s "$timing" ]; then base=$(cat "$timing") from="its last build here"
else base=$(typical "$name") from="typical on 2 cores"; fi
cores=$(nproc)
# A caller that starts builds side by side says how many (the local
# cluster's streams): two that start at one instant don't see each other,
# and a build ending that instant is still seen. Else the go builds running.
sharing=${BUILDS_SIDE_BY_SIDE:-$(( $(builds) + 1 ))}
# Go compiles a build's packages on every core: k builds on c cores take
# about k/c times as long each once k exceeds c/2 (two cores: one build
# uses both).
factor=$(( sharing * 2 > cores ? sharing * 2 / cores : 1 ))
[ "$factor" -lt 1 ] && factor=1
estimate=$(( base * factor ))
if [ "$factor" -gt 1 ]; then from="$from, ${base}s, times $factor: $sharing builds share $cores cores"; fi

start=$(date +%s)
# A file of this process's own: a build of the same binary by a caller that
# holds no lock (controller-gen) can't interleave with it.
tmp=$out.tmp.$$
# No DWARF (-w): linking is a tenth of a cold build's CPU and DWARF a third
# of linking; stack traces and profiles keep their symbols. Not part of
# the key: a binary cached with DWARF is the same program.
args=() linked=
for a in "$@"; do
  case $a in -ldflags=*) a="$a -w" linked=1 ;; esac
  args+=("$a")
done
[ -n "$linked" ] || args+=(-ldflags=-w)
go -C "$dir" build "${args[@]}" -o "$tmp" "$pkg" &
gobuild=$!
if [ "$tool" = . ]; then
  # The main module: a build with its packages cached (or an edit's few to
  # compile) ends within seconds, and says nothing; one still compiling
  # after 10 s compiles them all (a cold machine) and gets its line. No
  # `go list` to tell first: it would fetch every module before the first
  # compile, where the build fetches and compiles side by side.
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    kill -0 $gobuild 2>/dev/null || break
    sleep 1
  done
  if ! kill -0 $gobuild 2>/dev/null; then
    wait $gobuild
    mv "$tmp" "$out"
    echo "$out"
    exit 0
  fi
fi
echo ">> building $name from $from_where: about ${estimate}s ($from); cached afterwards" >&2
# A progress line every 30s so a long cold build is never a silent wait;
# past its estimate it says what the build is still doing. Its sleep must
# die with it: a sleep left behind would hold the caller's stdout pipe
# open, and the caller would wait out the rest of its 30s.
( trap 'kill $s 2>/dev/null; exit 0' TERM
  while :; do
    sleep 30 & s=$!; wait $s
    took=$(( $(date +%s) - start ))
    if [ "$took" -le "$estimate" ]; then echo "   ... $name: ${took}s of about ${estimate}s" >&2
    else echo "   ... $name: ${took}s, past the ${estimate}s estimated: $(doing $gobuild); $(builds) go builds running on $cores cores" >&2; fi
  done ) >/dev/null &
ticker=$!
trap 'kill $ticker 2>/dev/null || true' EXIT
wait $gobuild
mv "$tmp" "$out"
took=$(( $(date +%s) - start ))
# The time alone, as the next estimate's base.
echo $(( took / factor )) > "$timing"
echo ">> built $name in ${took}s" >&2
echo "$out"
