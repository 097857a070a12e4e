# Sourced, not run: builds a Go program of this repository (a directory with go.mod, go.sum and
# *.go sources) into the kdra cache once per content of those sources, at
#   $KDRA_CACHE_DIR/<cache dir>/<version>-linux-<arch>/<stamp>/<binary>
# where <stamp> is the first 12 hex digits of a sha256 over go.mod, go.sum and the *.go sources:
# checkouts with different sources (branches, worktrees) sharing one cache each get their own
# binary. Reused while the sources are unchanged. build-upstream-alloc.sh and
# build-karpenter-kwok.sh use it.
#
#   build_go_program <log tag> <source dir> <cache dir> <version> <binary> <what, for the log>
#
# prints the binary's path on stdout, progress on stderr. GOTOOLCHAIN is passed through (a module
# whose go.mod needs a newer Go than the installed one names it; the Go proxy serves it).

build_go_program() {
  local tag="$1" src="$2" cache_dir_name="$3" version="$4" binary_name="$5" what="$6"
  local cache_dir="${KDRA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kdra}"
  local arch
  arch=$(uname -m); case "$arch" in x86_64) arch=amd64;; aarch64) arch=arm64;; esac
  log() { printf '[%s] %s\n' "$tag" "$*" >&2; }

  local stamp target binary
  stamp=$(cd "$src" && cat go.mod go.sum $(ls *.go | LC_ALL=C sort) | sha256sum | cut -d' ' -f1)
  target="$cache_dir/$cache_dir_name/${version}-linux-${arch}/${stamp:0:12}"
  binary="$target/$binary_name"
  cached() {
    [ -x "$binary" ] && [ "$(cat "$target/stamp" 2>/dev/null)" = "$stamp" ]
  }
  if cached; then
    log "using cached $binary (stamp ${stamp:0:12})"
    echo "$binary"
    return 0
  fi
  # One build of the cache at a time (the same lock as build-control-plane.sh's), held until the
  # shell exits; then the check again, since a build that held the lock may have made this one.
  mkdir -p "$cache_dir"
  exec 9>"$cache_dir/.build.lock"
  if ! flock -n 9; then
    log "another build of $cache_dir is running; waiting for its lock ($cache_dir/.build.lock)"
    flock 9
  fi
  if cached; then
    log "using cached $binary (stamp ${stamp:0:12}), just built by another run"
    echo "$binary"
    return 0
  fi
  if ! command -v go >/dev/null; then
    log "Go is not installed: cannot build $binary; the tests that need it will fail"
    return 1
  fi

  local start out
  start=$(date +%s)
  log "building $what into $target"
  log "the first build downloads the modules and compiles; later runs reuse it"
  mkdir -p "$target"
  # Built into a directory of this build's own and moved, so that a reader never runs a
  # half-written binary; the binary first, then its stamp (a reader that sees the new binary with
  # the old stamp only builds again, under the lock).
  out=$(mktemp -d "$target/.build.XXXXXX")
  trap "rm -rf '$out'" EXIT
  (cd "$src" && CGO_ENABLED=0 nice go build -mod=readonly -buildvcs=false -trimpath -ldflags='-s -w' \
    -o "$out/$binary_name" .)
  echo "$stamp" > "$out/stamp"
  mv -f "$out/$binary_name" "$binary"
  mv -f "$out/stamp" "$target/stamp"
  log "built in $(( $(date +%s) - start ))s (stamp ${stamp:0:12})"
  echo "$binary"
}
