#!/usr/bin/env bash
# Builds cert-manager's controller and CA injector (one command, kdra-cert-manager:
# integration-tests/cert-manager/, whose go.mod pins cert-manager's module) with cert-manager's
# CRDs, for CertManagerWebhookIT, and caches them:
#   $KDRA_CACHE_DIR/cert-manager/<version>_r<recipe>-linux-<arch>/{kdra-cert-manager,crds/*.yaml}
# Reused when present; a new pin or recipe is a new directory. Concurrent runs are safe: one lock,
# the build goes to a temporary directory, and a finished build appears by one rename.
# Where Go is missing it builds nothing and the IT skips itself.
set -euo pipefail

SRC="$(cd "$(dirname "$0")/../cert-manager" && pwd)"
# the version go.mod pins; CertManagerControllers (the IT) names the same directory
VERSION=$(sed -n 's|^\s*github.com/cert-manager/cert-manager v\(.*\)$|\1|p' "$SRC/go.mod")
# bumped (with CertManagerControllers.RECIPE) when main.go or this script makes something else
RECIPE=1
CACHE_DIR="${KDRA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kdra}"
arch=$(uname -m); case "$arch" in x86_64) arch=amd64;; aarch64) arch=arm64;; esac
TARGET="$CACHE_DIR/cert-manager/${VERSION}_r${RECIPE}-linux-${arch}"

log() { printf '[cert-manager] %s\n' "$*" >&2; }
complete() { [ -x "$TARGET/kdra-cert-manager" ] && [ -s "$TARGET/crds/cert-manager.io_certificates.yaml" ]; }

if complete; then
  log "using the cached cert-manager v${VERSION} in $TARGET"
  echo "$TARGET"; exit 0
fi
if ! command -v go >/dev/null; then
  log "Go is not installed: CertManagerWebhookIT skips itself"
  echo "$TARGET"; exit 0
fi
mkdir -p "$CACHE_DIR/cert-manager"
exec 9>"$CACHE_DIR/cert-manager/.lock"
flock 9
if complete; then
  log "another run built cert-manager v${VERSION} meanwhile: $TARGET"
  echo "$TARGET"; exit 0
fi

start=$(date +%s)
log "building cert-manager v${VERSION} (controller and CA injector) into $TARGET; about 12 minutes on a loaded 2-core machine the first time"
work=$(mktemp -d "$CACHE_DIR/cert-manager/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/out/crds"
cd "$SRC"
CGO_ENABLED=0 nice go build -mod=readonly -trimpath -ldflags='-s -w' -o "$work/out/kdra-cert-manager" .
# downloaded by the build
dir=$(go list -mod=readonly -m -f '{{.Dir}}' github.com/cert-manager/cert-manager)
# the CRDs as cert-manager's release ships them (its static manifests' source)
cp "$dir"/deploy/crds/cert-manager.io_*.yaml "$work/out/crds/"
chmod -R u+w "$work/out/crds"
echo "cert-manager v${VERSION} (github.com/cert-manager/cert-manager), kdra-cert-manager recipe ${RECIPE}" > "$work/out/VERSION"
rm -rf "$TARGET"
mv "$work/out" "$TARGET"
log "built in $(( $(date +%s) - start ))s"
echo "$TARGET"
