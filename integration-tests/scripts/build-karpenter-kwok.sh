#!/usr/bin/env bash
# Builds kdra-karpenter-kwok, Karpenter's KWOK provider (sigs.k8s.io/karpenter, the version in
# integration-tests/karpenter-kwok/go.mod) with the DRA templates and capacity errors the
# scale-out tests need (karpenter-kwok/main.go), into
#   $KDRA_CACHE_DIR/karpenter-kwok/<version>-linux-<arch>/<stamp>/kdra-karpenter-kwok
# (go-program.sh says how), and copies the module's CRDs (NodePool, NodeClaim, NodeOverlay,
# CapacityBuffer, and the KWOK provider's KWOKNodeClass) beside it into crds/. Karpenter's go.mod
# asks for Go 1.26.9, which GOTOOLCHAIN fetches through the Go proxy when the installed Go is
# older. Prints the binary's path on stdout, progress on stderr.
set -euo pipefail

KARPENTER_VERSION="v1.15.0"
SCRIPTS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRC="$SCRIPTS/../karpenter-kwok"
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.26.9}"
# shellcheck source=go-program.sh
. "$SCRIPTS/go-program.sh"
binary=$(build_go_program karpenter-kwok "$SRC" karpenter-kwok "$KARPENTER_VERSION" \
  kdra-karpenter-kwok "kdra-karpenter-kwok (sigs.k8s.io/karpenter ${KARPENTER_VERSION}, kwok)")

crds="$(dirname "$binary")/crds"
if [ ! -d "$crds" ]; then
  # the module is in Go's module cache after the build (downloaded again if that cache is gone)
  module=$(cd "$SRC" && go mod download -json "sigs.k8s.io/karpenter@${KARPENTER_VERSION}" \
    | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -d "$module" ] || { echo "[karpenter-kwok] sigs.k8s.io/karpenter ${KARPENTER_VERSION} not found" >&2; exit 1; }
  # into a directory of its own, then renamed: a reader never sees half of them
  tmp=$(mktemp -d "$(dirname "$binary")/.crds.XXXXXX")
  cp "$module"/pkg/apis/crds/*.yaml "$module"/kwok/apis/crds/*.yaml "$tmp/"
  chmod 0755 "$tmp"
  chmod 0644 "$tmp"/*.yaml
  mv -T "$tmp" "$crds" 2>/dev/null || rm -rf "$tmp"
  echo "[karpenter-kwok] copied Karpenter's CRDs into $crds" >&2
fi
echo "$binary"
