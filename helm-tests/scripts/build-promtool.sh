#!/usr/bin/env bash
# Builds Prometheus's promtool from its Go module (github.com/prometheus/prometheus, the version
# below) into
#   $KDRA_CACHE_DIR/promtool/<version>-linux-<arch>/promtool
# for AlertRulesTest, which checks and unit-tests the chart's alert rules with it. Reused once
# built. Prints the binary's path on stdout, progress on stderr.
set -euo pipefail

# Prometheus v3.x is the Go module's v0.3xx.y (v0.316.0 is Prometheus 3.16.0).
PROMETHEUS_VERSION="${KDRA_PROMETHEUS_VERSION:-v0.316.0}"
CACHE_DIR="${KDRA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kdra}"
arch=$(uname -m); case "$arch" in x86_64) arch=amd64;; aarch64) arch=arm64;; esac

log() { printf '[promtool] %s\n' "$*" >&2; }

TARGET="$CACHE_DIR/promtool/${PROMETHEUS_VERSION}-linux-${arch}"
BINARY="$TARGET/promtool"
if [ -x "$BINARY" ]; then
  log "using cached $BINARY"
  echo "$BINARY"
  exit 0
fi
# One build of the cache at a time (the lock of build-control-plane.sh and
# build-upstream-alloc.sh), held until exit; then the check again, since a build that held the
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
  log "Go is not installed: cannot build $BINARY; AlertRulesTest will fail"
  exit 1
fi

start=$(date +%s)
log "building promtool (github.com/prometheus/prometheus ${PROMETHEUS_VERSION}) into $TARGET"
log "the first build downloads the modules and compiles for several minutes; later runs reuse it"
mkdir -p "$TARGET"
# Installed into a directory of this build's own and moved, so that a reader never runs a
# half-written binary.
out=$(mktemp -d "$TARGET/.build.XXXXXX")
trap 'rm -rf "$out"' EXIT
GOBIN="$out" GOTOOLCHAIN=local nice go install \
  "github.com/prometheus/prometheus/cmd/promtool@${PROMETHEUS_VERSION}"
mv -f "$out/promtool" "$BINARY"
log "built in $(( $(date +%s) - start ))s"
echo "$BINARY"
