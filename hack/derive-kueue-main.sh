#!/usr/bin/env bash
# Derives Kueue's manager main from the module cache into
# hack/tools/kueue-<version>/cmd (git-ignored). One change: with internal certificate
# management off, upstream main exits unless metrics certificates exist in
# the absolute path /etc/kueue/metrics/certs; the local control plane gives
# them from $KUEUE_METRICS_CERTS_DIR instead, without touching /etc.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tools=$root/hack/tools/kueue-${1:?usage: derive-kueue-main.sh KUEUE_VERSION}
[ -f "$tools/go.mod" ] || { echo "derive-kueue-main: unsupported KUEUE_VERSION $1 (supported: $(cd "$root/hack/tools" && ls -d kueue-v* | sed 's/kueue-//' | tr '\n' ' '))" >&2; exit 2; }
version=$(cd "$tools" && go list -m -f '{{.Version}}' sigs.k8s.io/kueue)
src=$(cd "$tools" && go mod download -json "sigs.k8s.io/kueue@$version" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
[ -n "$src" ] && [ -f "$src/cmd/kueue/main.go" ] || { echo "derive-kueue-main: cannot find Kueue $version's cmd/kueue in the module cache" >&2; exit 1; }
mkdir -p "$tools/cmd"
sed 's|metricsCertPath := "/etc/kueue/metrics/certs"|metricsCertPath := os.Getenv("KUEUE_METRICS_CERTS_DIR")|' \
  "$src/cmd/kueue/main.go" > "$tools/cmd/main.go.tmp"
grep -q 'os.Getenv("KUEUE_METRICS_CERTS_DIR")' "$tools/cmd/main.go.tmp" || { echo "derive-kueue-main: the metrics certificate path moved in Kueue $version" >&2; exit 1; }
mv "$tools/cmd/main.go.tmp" "$tools/cmd/main.go"
