#!/usr/bin/env bash
# Builds what the version matrix's VersionSmokeIT needs on the older Kubernetes versions, into the
# caches build-control-plane.sh and build-node.sh fill: per version only kube-apiserver, etcd and
# kubectl (kube-api-test's readiness check), and the kubelet beside the default node's containerd,
# crictl and images (build-node.sh reuses them). Cached like the rest; a version already built
# costs nothing.
#
# Arguments: <skip>:<version>... as integration-tests/pom.xml passes them, e.g. false:1.34.4
# true:1.35.4; a version whose skip is true is not built (its failsafe run is skipped too).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
log() { printf '[version-matrix] %s\n' "$*" >&2; }

if [ "$(id -u)" != 0 ]; then
  # VersionSmokeIT runs on real nodes, which need root: it is skipped, so build nothing
  log "not root: no real node, so no version matrix (VersionSmokeIT is skipped)"
  exit 0
fi
for arg in "$@"; do
  skip=${arg%%:*}
  version=${arg#*:}
  if [ "$skip" = true ]; then
    continue
  fi
  log "Kubernetes ${version}: kube-apiserver, etcd, kubectl and the kubelet"
  start=$(date +%s)
  KDRA_K8S_VERSION="$version" KDRA_K8S_COMMANDS="kubectl kube-apiserver" \
    bash "$here/build-control-plane.sh" >/dev/null
  KDRA_K8S_VERSION="$version" bash "$here/build-node.sh" >/dev/null
  log "Kubernetes ${version} ready in $(( $(date +%s) - start ))s"
done
