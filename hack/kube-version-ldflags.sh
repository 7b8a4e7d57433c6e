#!/usr/bin/env bash
# Prints -ldflags stamping a Kubernetes release's version into a binary built
# from the module cache; Kueue and kubectl refuse an unparsable server version.
set -euo pipefail
v=${1:?version like v1.35.4}
major=${v#v}; major=${major%%.*}
minor=${v#v$major.}; minor=${minor%%.*}
flags=""
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  flags+=" -X $p.gitVersion=$v -X $p.gitMajor=$major -X $p.gitMinor=$minor"
  flags+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done
echo "-ldflags=${flags# }"
