#!/usr/bin/env bash
# Prints the path of a control-plane component's binary, building it from its
# pinned Go module into the per-machine binary cache first if needed.
#
#   hack/component.sh NAME     (hack/component.sh --list for the names)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
KUBE_VERSION=${KUBE_VERSION:-v1.35.4}
TRAINER_VERSION=${TRAINER_VERSION:-v2.1.0}
KUEUE_VERSION=${KUEUE_VERSION:-v0.19.2}
kube_ldflags() { "$here/kube-version-ldflags.sh" "$KUBE_VERSION"; }

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

# One component at a time per machine: test packages bring clusters up in
# parallel, and two builds of one component would race on its files.
if [ "${1:-}" != --list ]; then
  exec 9>"${TMPDIR:-/tmp}/trainjob-kueue-components-$(id -u).lock"
  flock 9
fi

case ${1:-} in
  --list) echo etcd kube-apiserver kube-controller-manager kubectl kube-scheduler kwok trainer-controller-manager jobset-controller-manager kueue ;;
  etcd) exec "$here/build-tool.sh" etcd go.etcd.io/etcd/server/v3 etcd ;;
  kube-apiserver|kube-controller-manager|kubectl)
    exec "$here/build-tool.sh" kubernetes "k8s.io/kubernetes/cmd/$1" "$1" "$(kube_ldflags)" ;;
  kube-scheduler) exec "$here/build-tool.sh" scheduler sigs.k8s.io/scheduler-plugins/cmd/scheduler kube-scheduler ;;
  kwok) exec "$here/build-tool.sh" kwok sigs.k8s.io/kwok/cmd/kwok kwok ;;
  trainer-controller-manager)
    jobset_for "$TRAINER_VERSION" >/dev/null
    case $TRAINER_VERSION in
      v2.0.*) # No way to give v2.0 a webhook certificate: see the script.
        "$here/derive-trainer-main.sh" "$TRAINER_VERSION"
        exec "$here/build-tool.sh" "trainer-$TRAINER_VERSION" ./cmd trainer-controller-manager ;;
      *) exec "$here/build-tool.sh" "trainer-$TRAINER_VERSION" github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager trainer-controller-manager ;;
    esac ;;
  jobset-controller-manager)
    exec "$here/build-tool.sh" "jobset-$(jobset_for "$TRAINER_VERSION")" sigs.k8s.io/jobset jobset-controller-manager ;;
  kueue)
    "$here/derive-kueue-main.sh" "$KUEUE_VERSION"
    # The derived main is part of the binary: a change of the script is a
    # new build (-X of a variable main lacks is ignored).
    derived=$(sha256sum "$here/derive-kueue-main.sh" | cut -c1-12)
    exec "$here/build-tool.sh" "kueue-$KUEUE_VERSION" ./cmd kueue "-ldflags=-X=main.derivedBy=$derived" ;;
  *) echo "usage: $0 NAME|--list" >&2; exit 2 ;;
esac
