#!/usr/bin/env bash
# Derives Trainer v2.0.x's controller manager main from the module cache into
# hack/tools/trainer-<version>/cmd (git-ignored). One change: v2.0 always
# generates its webhook certificate for a Service DNS name and has no
# setting to take one instead; the local control plane serves webhooks on
# 127.0.0.1 with a certificate it provides (from controller-runtime's
# default directory), so certificate management is replaced by a no-op.
#
#   hack/derive-trainer-main.sh VERSION
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=${1:?Trainer version}
tools=$root/hack/tools/trainer-$version
src=$(cd "$tools" && go mod download -json "github.com/kubeflow/trainer/v2@$version" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
[ -n "$src" ] && [ -f "$src/cmd/trainer-controller-manager/main.go" ] || { echo "derive-trainer-main: Trainer $version is not in the module cache" >&2; exit 1; }
mkdir -p "$tools/cmd"
sed 's|if err = cert.ManageCerts(mgr, cert.Config{|if err = providedCerts(mgr, cert.Config{|' \
  "$src/cmd/trainer-controller-manager/main.go" > "$tools/cmd/main.go.tmp"
grep -q 'providedCerts(mgr' "$tools/cmd/main.go.tmp" || { echo "derive-trainer-main: certificate management moved in Trainer $version" >&2; exit 1; }
cat >> "$tools/cmd/main.go.tmp" <<'GO'

// providedCerts replaces certificate management: the local control plane
// writes the webhook certificate itself.
func providedCerts(_ ctrl.Manager, _ cert.Config, ready chan struct{}) error {
	close(ready)
	return nil
}
GO
mv "$tools/cmd/main.go.tmp" "$tools/cmd/main.go"
