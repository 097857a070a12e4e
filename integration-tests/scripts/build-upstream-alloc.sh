#!/usr/bin/env bash
# Builds dra-alloc-upstream, the reference program in integration-tests/upstream/ (upstream's
# k8s.io/dynamic-resource-allocation allocator behind bin/dra-alloc's command line, its CEL
# library, and as `filter` kube-scheduler's default Filter plugins from k8s.io/kubernetes), into
#   $KDRA_CACHE_DIR/upstream-alloc/<version>-linux-<arch>/<stamp>/dra-alloc-upstream
# where <stamp> is the first 12 hex digits of a sha256 over go.mod, go.sum and the *.go sources:
# checkouts with different sources (branches, worktrees) sharing one cache each get their own
# binary. Reused while the sources are unchanged. Prints the binary's path on stdout, progress on
# stderr. UpstreamAlloc.binary() (the ITs) computes the same path.
set -euo pipefail

ALLOC_VERSION="v0.37.2"
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/../upstream" && pwd)"
CACHE_DIR="${KDRA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kdra}"
arch=$(uname -m); case "$arch" in x86_64) arch=amd64;; aarch64) arch=arm64;; esac

log() { printf '[upstream-alloc] %s\n' "$*" >&2; }

stamp=$(cd "$SRC" && cat go.mod go.sum $(ls *.go | LC_ALL=C sort) | sha256sum | cut -d' ' -f1)
TARGET="$CACHE_DIR/upstream-alloc/${ALLOC_VERSION}-linux-${arch}/${stamp:0:12}"
BINARY="$TARGET/dra-alloc-upstream"
cached() {
  [ -x "$BINARY" ] && [ "$(cat "$TARGET/stamp" 2>/dev/null)" = "$stamp" ]
}
if cached; then
  log "using cached $BINARY (stamp ${stamp:0:12})"
  echo "$BINARY"
  exit 0
fi
# One build of the cache at a time (the same lock as build-control-plane.sh's), held until exit;
# then the check again, since a build that held the lock may have made this one.
mkdir -p "$CACHE_DIR"
exec 9>"$CACHE_DIR/.build.lock"
if ! flock -n 9; then
  log "another build of $CACHE_DIR is running; waiting for its lock ($CACHE_DIR/.build.lock)"
  flock 9
fi
if cached; then
  log "using cached $BINARY (stamp ${stamp:0:12}), just built by another run"
  echo "$BINARY"
  exit 0
fi
if ! command -v go >/dev/null; then
  log "Go is not installed: cannot build $BINARY; the tests that compare with upstream will fail"
  exit 1
fi

start=$(date +%s)
log "building dra-alloc-upstream (k8s.io/dynamic-resource-allocation ${ALLOC_VERSION}) into $TARGET"
log "the first build downloads the modules and compiles for a minute or two; later runs reuse it"
mkdir -p "$TARGET"
# Built into a directory of this build's own and moved, so that a reader never runs a
# half-written binary; the binary first, then its stamp (a reader that sees the new binary with
# the old stamp only builds again, under the lock).
out=$(mktemp -d "$TARGET/.build.XXXXXX")
trap 'rm -rf "$out"' EXIT
(cd "$SRC" && CGO_ENABLED=0 nice go build -mod=readonly -buildvcs=false -trimpath -ldflags='-s -w' \
  -o "$out/dra-alloc-upstream" .)
echo "$stamp" > "$out/stamp"
mv -f "$out/dra-alloc-upstream" "$BINARY"
mv -f "$out/stamp" "$TARGET/stamp"
log "built in $(( $(date +%s) - start ))s (stamp ${stamp:0:12})"
echo "$BINARY"
