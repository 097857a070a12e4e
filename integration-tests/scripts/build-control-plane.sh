#!/usr/bin/env bash
# Builds kube-apiserver, kube-scheduler, kube-controller-manager, kubectl and etcd from their
# official Go modules at the pinned Kubernetes version, into the layout fabric8 kube-api-test reads:
#   $KDRA_CACHE_DIR/k8s/<version>-linux-<arch>/{kube-apiserver,kube-scheduler,...,kubectl,etcd}
# where etcd is a wrapper that keeps it on loopback (see ensure_etcd_loopback).
# Reused when present, and only what is missing is built (a new version is a new directory).
# Where Go is missing, kube-api-test's own download is the fallback (it needs the internet).
# KDRA_K8S_COMMANDS narrows the build to some of kubectl, kube-scheduler, kube-controller-manager
# and kube-apiserver (etcd is always built): the version matrix's older API servers need only
# kubectl (kube-api-test's readiness check) and kube-apiserver.
set -euo pipefail

K8S_VERSION="${KDRA_K8S_VERSION:-1.37.2}"
CACHE_DIR="${KDRA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kdra}"
arch=$(uname -m); case "$arch" in x86_64) arch=amd64;; aarch64) arch=arm64;; esac
TARGET="$CACHE_DIR/k8s/${K8S_VERSION}-linux-${arch}"

log() { printf '[control-plane] %s\n' "$*" >&2; }

# One build of the cache at a time, across checkouts and this script and build-upstream-alloc.sh:
# an flock on $CACHE_DIR/.build.lock, held until the script exits. Finished outputs appear by
# rename, so the check for a cached build needs no lock; only building (or wrapping etcd) takes it.
lock_cache() {
  mkdir -p "$CACHE_DIR"
  exec 9>"$CACHE_DIR/.build.lock"
  if ! flock -n 9; then
    log "another build of $CACHE_DIR is running; waiting for its lock ($CACHE_DIR/.build.lock)"
    flock 9
  fi
}

# fabric8 kube-api-test starts etcd with --listen-client-urls http://0.0.0.0:<port> (and the same
# advertise URL), which would expose the test cluster's etcd on every interface. Flags outrank
# ETCD_* environment variables and kube-api-test has no hook for etcd's flags, so the binary it
# runs, $TARGET/etcd, becomes a small wrapper that rewrites 0.0.0.0 to 127.0.0.1 in the arguments
# and execs the real etcd ($TARGET/etcd-server). Idempotent; the copy-then-rename keeps a
# working etcd in place for a test that starts one meanwhile.
ensure_etcd_loopback() {
  local dir="$1"
  if grep -q 'kdra-etcd-loopback' "$dir/etcd" 2>/dev/null; then
    return
  fi
  cp -p "$dir/etcd" "$dir/etcd-server"
  cat > "$dir/etcd.wrapper" <<'SH'
#!/bin/sh
# kdra-etcd-loopback (made by integration-tests/scripts/build-control-plane.sh): keeps etcd's
# client URLs on loopback; kube-api-test asks for http://0.0.0.0:<port>.
for arg do
  shift
  case "$arg" in
    http://0.0.0.0:*) arg="http://127.0.0.1:${arg#http://0.0.0.0:}" ;;
  esac
  set -- "$@" "$arg"
done
exec "$(dirname "$0")/etcd-server" "$@"
SH
  chmod +x "$dir/etcd.wrapper"
  mv -f "$dir/etcd.wrapper" "$dir/etcd"
  log "etcd wrapped to listen on 127.0.0.1 only ($dir/etcd -> etcd-server)"
}

# What the harness runs; kube-apiserver comes last, so that its presence (what the tests check)
# implies every other binary's.
ALL_COMMANDS=(kubectl kube-scheduler kube-controller-manager kube-apiserver)
COMMANDS=()
for cmd in "${ALL_COMMANDS[@]}"; do
  if [ -z "${KDRA_K8S_COMMANDS:-}" ] || [[ " ${KDRA_K8S_COMMANDS} " == *" $cmd "* ]]; then
    COMMANDS+=("$cmd")
  fi
done
for cmd in ${KDRA_K8S_COMMANDS:-}; do
  case " ${ALL_COMMANDS[*]} etcd " in
    *" $cmd "*) ;;
    *) log "KDRA_K8S_COMMANDS: unknown command $cmd (known: etcd ${ALL_COMMANDS[*]})"; exit 2 ;;
  esac
done
if [[ " ${COMMANDS[*]} " != *" kube-apiserver "* ]]; then
  log "KDRA_K8S_COMMANDS must include kube-apiserver (its presence marks a finished build)"; exit 2
fi
WHAT="etcd ${COMMANDS[*]}"
missing() {
  local m=()
  [ -x "$TARGET/etcd" ] || m+=(etcd)
  for cmd in "${COMMANDS[@]}"; do
    [ -x "$TARGET/$cmd" ] || m+=("$cmd")
  done
  echo "${m[*]}"
}
if [ -z "$(missing)" ] && grep -q 'kdra-etcd-loopback' "$TARGET/etcd" 2>/dev/null; then
  log "using cached ${WHAT} v${K8S_VERSION} in $TARGET"
  echo "$CACHE_DIR"
  exit 0
fi
lock_cache
# again under the lock: a build that held it may have just finished
todo=$(missing)
if [ -z "$todo" ]; then
  log "using cached ${WHAT} v${K8S_VERSION} in $TARGET"
  ensure_etcd_loopback "$TARGET"
  echo "$CACHE_DIR"
  exit 0
fi
if ! command -v go >/dev/null; then
  log "Go is not installed: the tests will let kube-api-test download v${K8S_VERSION} (needs the internet); the full control plane's tests will fail"
  echo "$CACHE_DIR"
  exit 0
fi

start=$(date +%s)
# Only what is missing: a cache of an earlier version of this script (kube-apiserver, kubectl and
# etcd) gains the scheduler and controller-manager, and whatever is there stays in place and in
# use by runs going on meanwhile.
log "building ${todo} v${K8S_VERSION} from their Go modules into $TARGET"
log "the first build takes several minutes per binary on 2 cores and about 2 GiB of module cache; later runs reuse it"
work=$(mktemp -d)
# the binaries go to a directory of this build's own next to the target and are renamed into it
# one by one once all are built (kube-apiserver last), so a reader never sees a half-written
# binary and an interrupted build leaves nothing behind
mkdir -p "$TARGET"
out=$(mktemp -d "$TARGET.partial.XXXXXX")
trap 'rm -rf "$work" "$out"' EXIT
cd "$work"
cat > go.mod <<GOMOD
module kdra.local/controlplane

go 1.25
GOMOD
cat > etcd.go <<'GO'
// Command etcd runs the etcd server, as the official etcd binary does.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
# Keeps the commands' modules required (the usual tools.go pattern); never compiled. Only the
# commands asked for: a subset resolves (and downloads) only what those need.
{
  printf '//go:build tools\n\npackage main\n\nimport (\n'
  for cmd in "${COMMANDS[@]}"; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$cmd"; done
  printf ')\n'
} > tools.go

# k8s.io/kubernetes points its staging modules at ./staging; point them at their published twins.
log "resolving k8s.io/kubernetes v${K8S_VERSION} and its staging modules"
go mod edit -require="k8s.io/kubernetes@v${K8S_VERSION}"
gomod=$(go mod download -json "k8s.io/kubernetes@v${K8S_VERSION}" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
staging_version="v0.${K8S_VERSION#1.}"
grep -oE '^\s*k8s.io/[a-z0-9-]+ => ./staging/src/k8s.io/[a-z0-9-]+' "$gomod" | awk '{print $1}' | sort -u |
  while read -r mod; do go mod edit -replace="${mod}=${mod}@${staging_version}"; done
log "resolving the dependency graph (downloads modules on the first run)"
go mod tidy

export CGO_ENABLED=0
# What the official release build stamps in, so /version and kubectl report the real version.
minor="${K8S_VERSION#1.}"; minor="${minor%%.*}"
version_flags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  version_flags+=" -X ${pkg}.gitVersion=v${K8S_VERSION} -X ${pkg}.gitMajor=1 -X ${pkg}.gitMinor=${minor}"
  version_flags+=" -X ${pkg}.gitTreeState=clean"
done
for cmd in $todo; do
  t=$(date +%s)
  if [ "$cmd" = etcd ]; then
    log "compiling etcd"
    nice go build -trimpath -ldflags='-s -w' -o "$out/etcd" .
    ensure_etcd_loopback "$out"
  else
    log "compiling $cmd"
    nice go build -trimpath -ldflags="-s -w ${version_flags}" -o "$out/$cmd" "k8s.io/kubernetes/cmd/$cmd"
  fi
  log "compiled $cmd in $(( $(date +%s) - t ))s"
done
chmod 755 "$TARGET"
# into place one by one (rename: atomic, same file system), in the order of $todo, which puts
# kube-apiserver last; etcd's server before its wrapper
for f in etcd-server etcd $todo; do
  if [ -e "$out/$f" ]; then
    mv -f "$out/$f" "$TARGET/$f"
  fi
done
log "built ${todo} in $(( $(date +%s) - start ))s: $(ls "$TARGET" | tr '\n' ' ')"
echo "$CACHE_DIR"
