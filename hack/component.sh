#!/usr/bin/env bash
# Prints the path of a control-plane component's binary, building it from its
# pinned Go module into the per-machine binary cache first if needed.
#
#   hack/component.sh NAME          (hack/component.sh --list for the names)
#   hack/component.sh --dir NAME    the tools module it is built from
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
KUBE_VERSION=${KUBE_VERSION:-v1.37.2}
TRAINER_VERSION=${TRAINER_VERSION:-v2.1.0}
KUEUE_VERSION=${KUEUE_VERSION:-v0.19.2}
kube_ldflags() { "$here/kube-version-ldflags.sh" "$KUBE_VERSION"; }

# Kubernetes release -> the tools module its control plane is built from.
# v1.34.4's kube-scheduler is scheduler-plugins' (coscheduling), the newest
# release that builds against; v1.37.2's is Kubernetes' own, whose default
# profile gang schedules PodGroups of the Workload API (docs/local-cluster.md).
kubernetes_tools() {
  case $1 in
    v1.34.4) echo kubernetes ;;
    v1.37.2) echo kubernetes-v1.37.2 ;;
    *) echo "unsupported KUBE_VERSION $1 (supported: v1.34.4, v1.37.2)" >&2; exit 2 ;;
  esac
}

# Trainer release -> the JobSet release it pins in its go.mod.
jobset_for() {
  case $1 in
    v2.0.1) echo v0.8.2 ;;
    v2.1.0) echo v0.10.1 ;;
    v2.2.0) echo v0.11.1 ;;
    v2.3.0) echo v0.12.0 ;;
    *) echo "unsupported TRAINER_VERSION $1 (supported: v2.0.1, v2.1.0, v2.2.0, v2.3.0)" >&2; exit 2 ;;
  esac
}

# args: build-tool.sh's arguments for the component; prepare: what must run
# before building it (a derived main).
prepare=()
dir_only=
if [ "${1:-}" = --dir ]; then dir_only=1; shift; fi
case ${1:-} in
  --list) echo etcd kube-apiserver kube-controller-manager kubectl kube-scheduler kwok trainer-controller-manager jobset-controller-manager kueue; exit 0 ;;
  etcd) args=(etcd go.etcd.io/etcd/server/v3 etcd) ;;
  kube-apiserver|kube-controller-manager|kubectl)
    args=("$(kubernetes_tools "$KUBE_VERSION")" "k8s.io/kubernetes/cmd/$1" "$1" "$(kube_ldflags)") ;;
  kube-scheduler)
    case $(kubernetes_tools "$KUBE_VERSION") in
      kubernetes) args=(scheduler sigs.k8s.io/scheduler-plugins/cmd/scheduler kube-scheduler) ;;
      *) args=("$(kubernetes_tools "$KUBE_VERSION")" k8s.io/kubernetes/cmd/kube-scheduler kube-scheduler "$(kube_ldflags)") ;;
    esac ;;
  kwok) args=(kwok sigs.k8s.io/kwok/cmd/kwok kwok) ;;
  trainer-controller-manager)
    jobset_for "$TRAINER_VERSION" >/dev/null
    case $TRAINER_VERSION in
      v2.0.*) # No way to give v2.0 a webhook certificate: see the script.
        prepare=("$here/derive-trainer-main.sh" "$TRAINER_VERSION")
        args=("trainer-$TRAINER_VERSION" ./cmd trainer-controller-manager) ;;
      *) args=("trainer-$TRAINER_VERSION" github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager trainer-controller-manager) ;;
    esac ;;
  jobset-controller-manager)
    args=("jobset-$(jobset_for "$TRAINER_VERSION")" sigs.k8s.io/jobset jobset-controller-manager) ;;
  kueue)
    prepare=("$here/derive-kueue-main.sh" "$KUEUE_VERSION")
    # The derived main is part of the binary: a change of the script is a
    # new build (-X of a variable main lacks is ignored).
    derived=$(sha256sum "$here/derive-kueue-main.sh" | cut -c1-12)
    args=("kueue-$KUEUE_VERSION" ./cmd kueue "-ldflags=-X=main.derivedBy=$derived") ;;
  *) echo "usage: $0 NAME|--list" >&2; exit 2 ;;
esac

if [ -n "$dir_only" ]; then echo "$here/tools/${args[0]}"; exit 0; fi

# A cached binary needs no lock: clusters of parallel test packages start
# while another process may hold it for a long build.
if BUILD_TOOL_LOOKUP=1 "$here/build-tool.sh" "${args[@]}"; then exit 0; fi

# One build at a time per tools module: two builds of one component would
# race on its files (and its derived main), and two of one module would
# compile the same packages twice. Whoever waited finds the binary the
# holder built. Builds from different modules run side by side: a cold
# cluster start builds its module families in parallel (localcluster).
exec 9>"${TMPDIR:-/tmp}/trainjob-kueue-components-$(id -u)-${args[0]}.lock"
if ! flock -n 9; then
  echo ">> $1: waiting for another process's build from hack/tools/${args[0]} (make test's prefetch: bin/prefetch.log; make demo's or cluster-up's early build: bin/early-build.log; or another cluster's start)" >&2
  flock 9
fi
if [ ${#prepare[@]} -gt 0 ]; then "${prepare[@]}"; fi
exec "$here/build-tool.sh" "${args[@]}"
