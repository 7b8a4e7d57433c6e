#!/usr/bin/env bash
# Gets a cold machine going before the local cluster asks for anything:
# make demo and make cluster-up start it in the background (its log in
# bin/warm-up.log) while `go run` compiles their own command (about 2 min
# cold). It
#   1. downloads the Go modules of every component and of the main module,
#      all at once: network-bound, so they overlap the compiling instead of
#      each build waiting for its own modules in turn;
#   2. builds the Kubernetes family (etcd, kube-apiserver,
#      kube-controller-manager, kubectl), the longest chain of builds, so
#      it no longer starts only once the command is compiled.
# The cluster's own build then finds those binaries built, or waits for the
# one being built (hack/component.sh's per-module lock) rather than building
# it twice. The go command locks the module cache the same way. A warm
# machine has everything and this ends at once.
#
#   hack/warm-up.sh TRAINER_VERSION KUEUE_VERSION
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export TRAINER_VERSION=${1:?usage: warm-up.sh TRAINER_VERSION KUEUE_VERSION} KUEUE_VERSION=${2:?}
start=$(date +%s)
dirs=("$here/..")
for c in $("$here/component.sh" --list); do
  d=$("$here/component.sh" --dir "$c") || continue
  case " ${dirs[*]} " in *" $d "*) ;; *) dirs+=("$d") ;; esac
done
for d in "${dirs[@]}"; do
  (cd "$d" && go mod download 2>&1 | sed "s|^|download $(basename "$(cd "$d" && pwd)"): |") &
done
wait
echo "warm-up: the dependencies of ${#dirs[@]} modules downloaded in $(( $(date +%s) - start ))s" >&2
for c in etcd kube-apiserver kube-controller-manager kubectl; do
  "$here/component.sh" "$c" >/dev/null || { echo "warm-up: building $c failed; the cluster's build tries again and says why" >&2; exit 0; }
done
echo "warm-up: done in $(( $(date +%s) - start ))s" >&2
