#!/usr/bin/env bash
# Builds every control-plane binary make test needs, in the order its tiers
# need them, into the machine's binary cache. make test starts it in the
# background at the lowest CPU priority: on a cold machine the builds then
# use the CPU its first tiers leave idle (module downloads, clusters waiting
# on pods) instead of running one after another between tiers. A warm
# machine finds every binary cached and this ends at once.
#
# Each build goes through hack/component.sh and so holds its tools module's
# component lock: a tier that needs a binary this is building waits for it
# rather than building it twice. A build that fails here is only logged; the
# tier that needs the binary builds it again and fails with the error.
#
#   hack/prefetch-components.sh MAIN_TRAINER "OTHER_TRAINERS..." "KUEUES..."
#
# The first of KUEUES is the default one (the main tiers'); the others are
# only needed with MAIN_TRAINER (make test-smoke's older Kueue releases).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
main=$1
read -ra others <<<"$2"
read -ra kueues <<<"$3"
kueue=${kueues[0]}

build() { # TRAINER KUEUE COMPONENT [KUBERNETES]
  if ! KUBE_VERSION=${4:-v1.37.2} TRAINER_VERSION=$1 KUEUE_VERSION=$2 "$here/component.sh" "$3" >/dev/null; then
    echo "prefetch: building $3 (Trainer $1, Kueue $2, Kubernetes ${4:-v1.37.2}) failed; the tier that needs it builds it again" >&2
  fi
}

start=$(date +%s)
# The integration tier: a real API server (Kubernetes v1.34.4) and etcd,
# and JobSet v0.12.0 as a process (make envtest-assets).
build v2.3.0 "$kueue" etcd
build v2.3.0 "$kueue" kube-apiserver v1.34.4
build v2.3.0 "$kueue" jobset-controller-manager
# The main e2e tier: the whole local cluster on the default releases.
for c in $("$here/component.sh" --list); do
  build "$main" "$kueue" "$c"
done
# The main tier's coscheduling tests: a cluster of Kubernetes v1.34.4,
# whose kube-scheduler is scheduler-plugins'.
for c in kube-controller-manager kube-scheduler kubectl; do
  build "$main" "$kueue" "$c" v1.34.4
done
# The smokes and the bench: each other Trainer release with its JobSet.
for v in "${others[@]}"; do
  build "$v" "$kueue" trainer-controller-manager
  build "$v" "$kueue" jobset-controller-manager
done
for k in "${kueues[@]:1}"; do
  build "$main" "$k" kueue
done
echo "prefetch: done in $(( $(date +%s) - start ))s" >&2
