#!/usr/bin/env bash
# Builds one command-line tool from its Go module into
#   $KDRA_CACHE_DIR/<name>/<version>-linux-<arch>/<name>
# and prints the binary's path on stdout (progress on stderr). Reused once built. Called by the
# per-tool scripts beside it, which hold the tools' pinned versions.
#
# usage: build-go-tool.sh <name> <go package path> <version> <what uses it>
set -euo pipefail

NAME="$1"
PACKAGE="$2"
VERSION="$3"
USED_BY="$4"
CACHE_DIR="${KDRA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kdra}"
arch=$(uname -m); case "$arch" in x86_64) arch=amd64;; aarch64) arch=arm64;; esac

log() { printf '[%s] %s\n' "$NAME" "$*" >&2; }

TARGET="$CACHE_DIR/$NAME/${VERSION}-linux-${arch}"
BINARY="$TARGET/$NAME"
if [ -x "$BINARY" ]; then
  log "using cached $BINARY"
  echo "$BINARY"
  exit 0
fi
# One build of the cache at a time (the lock the integration tests' build scripts take too), held
# until exit; then the check again, since a build that held the lock may have made this one.
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
  log "Go is not installed: cannot build $BINARY; $USED_BY will fail"
  exit 1
fi

start=$(date +%s)
log "building $NAME ($PACKAGE@$VERSION) into $TARGET"
log "the first build downloads the modules and compiles (minutes); later runs reuse it"
mkdir -p "$TARGET"
# Installed into a directory of this build's own and moved, so that a reader never runs a
# half-written binary.
out=$(mktemp -d "$TARGET/.build.XXXXXX")
trap 'rm -rf "$out"' EXIT
GOBIN="$out" GOTOOLCHAIN=local nice go install "$PACKAGE@$VERSION"
mv -f "$out/$NAME" "$BINARY"
log "built in $(( $(date +%s) - start ))s"
echo "$BINARY"
