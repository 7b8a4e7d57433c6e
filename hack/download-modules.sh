#!/usr/bin/env bash
# Downloads the Go modules of every component the local cluster runs, and
# the main module's, all at once. make demo and make cluster-up start it in
# the background (its log in bin/download.log): on a cold machine the
# downloads (network-bound) then overlap the compiling (CPU-bound) instead
# of each build waiting for its own modules in turn. The go command locks
# the module cache, so a build that needs a module this is fetching waits
# for it rather than fetching it twice. A warm machine has every module and
# this ends at once.
#
# Beside it the Makefile starts kube-apiserver's build, the cold start's
# longest chain (docs/development.md).
#
#   hack/download-modules.sh TRAINER_VERSION KUEUE_VERSION
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export TRAINER_VERSION=${1:?usage: download-modules.sh TRAINER_VERSION KUEUE_VERSION} KUEUE_VERSION=${2:?}
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
echo "download: the dependencies of ${#dirs[@]} modules in $(( $(date +%s) - start ))s" >&2
