#!/usr/bin/env bash
# Builds helm-docs from its Go module (github.com/norwoodj/helm-docs, the version below) into
#   $KDRA_CACHE_DIR/helm-docs/<version>-linux-<arch>/helm-docs
# for ReferenceDocsTest, which generates docs/reference/helm-values.md from values.yaml's comments
# with it. Reused once built (about half a minute the first time). Prints the binary's path on
# stdout, progress on stderr.
set -euo pipefail

HELM_DOCS_VERSION="${KDRA_HELM_DOCS_VERSION:-v1.14.2}"
CACHE_DIR="${KDRA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kdra}"
arch=$(uname -m); case "$arch" in x86_64) arch=amd64;; aarch64) arch=arm64;; esac

log() { printf '[helm-docs] %s\n' "$*" >&2; }

TARGET="$CACHE_DIR/helm-docs/${HELM_DOCS_VERSION}-linux-${arch}"
BINARY="$TARGET/helm-docs"
if [ -x "$BINARY" ]; then
  log "using cached $BINARY"
  echo "$BINARY"
  exit 0
fi
# One build of the cache at a time (the lock of build-control-plane.sh, build-upstream-alloc.sh
# and build-promtool.sh), held until exit; then the check again, since a build that held the
# lock may have made this one.
mkdir -p "$CACHE_DIR"
exec 9>"$CACHE_DIR/.build.lock"
if ! flock -n 9; then
  log "another build of $CACHE_DIR is running; waiting for its lock ($CACHE_DIR/.build.lock)"
  flock 9
fi
if [ -x "$BINARY" ]; then
  log "using cached $BINARY, just built by another run"
  echo "$BINARY"
  exit 0
fi
if ! command -v go >/dev/null; then
  log "Go is not installed: cannot build $BINARY; ReferenceDocsTest will fail"
  exit 1
fi

start=$(date +%s)
log "building helm-docs (github.com/norwoodj/helm-docs ${HELM_DOCS_VERSION}) into $TARGET"
log "the first build downloads the modules and compiles; later runs reuse it"
mkdir -p "$TARGET"
# Installed into a directory of this build's own and moved, so that a reader never runs a
# half-written binary.
out=$(mktemp -d "$TARGET/.build.XXXXXX")
trap 'rm -rf "$out"' EXIT
GOBIN="$out" GOTOOLCHAIN=local nice go install \
  "github.com/norwoodj/helm-docs/cmd/helm-docs@${HELM_DOCS_VERSION}"
mv -f "$out/helm-docs" "$BINARY"
log "built in $(( $(date +%s) - start ))s"
echo "$BINARY"
