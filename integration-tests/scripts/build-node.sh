#!/usr/bin/env bash
# Builds what a real Kubernetes node needs for the real-node ITs (RealNode, RealNode*IT), from
# official Go modules and Debian packages, and caches it:
#   $KDRA_CACHE_DIR/node/<key>/bin/{kubelet,containerd,containerd-shim-runc-v2,ctr,crictl}
#   $KDRA_CACHE_DIR/node/<key>/images/{pause,busybox}-oci.tar   (OCI layouts, made here)
# <key> names every pinned version, so a new pin is a new directory. No registry can be reached
# from the machines this runs on, so the pause and busybox images are made locally with umoci
# from a tiny static C program and Debian's busybox-static.
# Installs Debian's runc, umoci, docker-registry and skopeo with apt-get when they are missing
# (the only system change).
# Concurrent runs are safe: one lock per cache directory, the build goes to a temporary
# directory, and a finished build appears by one rename.
# Another kubelet version beside a complete node of the same containerd, crictl and recipe (the
# version matrix's older kubelets) builds only the kubelet and reuses that node's runtime and
# images (hard links where the file system allows).
set -euo pipefail

K8S_VERSION="${KDRA_K8S_VERSION:-1.37.2}"
CONTAINERD_VERSION="${KDRA_CONTAINERD_VERSION:-2.4.2}"
CRICTL_VERSION="${KDRA_CRICTL_VERSION:-1.37.0}"
# bumped (root pom: kdra.node.recipe) when this script makes something else at the same versions
RECIPE="${KDRA_NODE_RECIPE:-1}"
CACHE_DIR="${KDRA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kdra}"
arch=$(uname -m); case "$arch" in x86_64) arch=amd64;; aarch64) arch=arm64;; esac
KEY="kubelet-${K8S_VERSION}_containerd-${CONTAINERD_VERSION}_crictl-${CRICTL_VERSION}_r${RECIPE}-linux-${arch}"
TARGET="$CACHE_DIR/node/$KEY"

log() { printf '[node] %s\n' "$*" >&2; }

RUNTIME_FILES=(bin/containerd bin/containerd-shim-runc-v2 bin/ctr bin/crictl
               images/pause-oci.tar images/busybox-oci.tar)
complete() { # [dir]
  local f dir="${1:-$TARGET}"
  for f in bin/kubelet "${RUNTIME_FILES[@]}"; do
    [ -s "$dir/$f" ] || return 1
  done
}

# A complete node of another kubelet version with this runtime (containerd, crictl, recipe).
runtime_sibling() {
  local d
  for d in "$CACHE_DIR/node/kubelet-"*"_containerd-${CONTAINERD_VERSION}_crictl-${CRICTL_VERSION}_r${RECIPE}-linux-${arch}"; do
    if [ "$d" != "$TARGET" ] && complete "$d"; then
      echo "$d"
      return
    fi
  done
}

install_debian_tools() {
  local missing=()
  command -v runc >/dev/null || missing+=(runc)
  command -v umoci >/dev/null || missing+=(umoci)
  # ImagesIT: its registry (LocalRegistry) and what pushes the images into it
  command -v docker-registry >/dev/null || missing+=(docker-registry)
  command -v skopeo >/dev/null || missing+=(skopeo)
  if [ ${#missing[@]} -gt 0 ]; then
    if ! command -v apt-get >/dev/null; then
      log "missing ${missing[*]} and no apt-get: install them and run again"; exit 1
    fi
    log "installing Debian's ${missing[*]} with apt-get"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

if [ "$(id -u)" != 0 ]; then
  # mount namespaces, cgroups and containerd need root: RealNodeIT skips itself, so build nothing
  log "not root: no real node (the real-node ITs are skipped)"
  echo "$TARGET"
  exit 0
fi
mkdir -p "$CACHE_DIR/node"
if complete; then
  install_debian_tools
  log "using the cached node (kubelet v${K8S_VERSION}, containerd v${CONTAINERD_VERSION}, crictl v${CRICTL_VERSION}) in $TARGET"
  echo "$TARGET"
  exit 0
fi

exec 9>"$CACHE_DIR/node/.lock"
log "waiting for the node cache lock (another build may be running)"
flock 9
if complete; then
  install_debian_tools
  log "another run built the node meanwhile: $TARGET"
  echo "$TARGET"
  exit 0
fi
install_debian_tools
if ! command -v go >/dev/null; then
  log "Go is not installed: the real-node ITs need it to build the kubelet and containerd"; exit 1
fi
# the pause image's program is a static C binary: gcc and a static libc
if ! command -v gcc >/dev/null || [ ! -f "$(gcc -print-file-name=libc.a)" ]; then
  log "installing Debian's gcc and libc6-dev with apt-get (for the pause image)"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends gcc libc6-dev >/dev/null
fi

start=$(date +%s)
sibling=$(runtime_sibling)
if [ -n "$sibling" ]; then
  log "building the kubelet v${K8S_VERSION} into $TARGET; containerd, crictl and the images come from $sibling"
else
  log "building a node into $TARGET: kubelet v${K8S_VERSION}, containerd v${CONTAINERD_VERSION} (+ shim, ctr), crictl v${CRICTL_VERSION}, pause and busybox images"
  log "the first build takes about 20 minutes on 2 cores (kubelet, containerd, crictl); later runs reuse it"
fi
work=$(mktemp -d "$CACHE_DIR/node/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT
out="$work/out"
mkdir -p "$out/bin" "$out/images"
export CGO_ENABLED=0
step() { log "$1 ($(( $(date +%s) - start ))s so far)"; }
write_versions() {
  cat > "$out/VERSIONS" <<EOF
kubelet v${K8S_VERSION} (k8s.io/kubernetes/cmd/kubelet)
containerd v${CONTAINERD_VERSION} (github.com/containerd/containerd/v2)
crictl v${CRICTL_VERSION} (sigs.k8s.io/cri-tools)
images k8s.local/pause:3.10 k8s.local/busybox:1 (made by build-node.sh recipe ${RECIPE})
EOF
}

# --- kubelet: k8s.io/kubernetes at the pin, its staging modules replaced by their published twins
# (the same module trick build-control-plane.sh uses for kube-apiserver)
step "resolving k8s.io/kubernetes v${K8S_VERSION} for cmd/kubelet"
mkdir -p "$work/kubelet" && cd "$work/kubelet"
cat > go.mod <<GOMOD
module kdra.local/node

go 1.25
GOMOD
cat > tools.go <<'GO'
//go:build tools

package main

import _ "k8s.io/kubernetes/cmd/kubelet"
GO
go mod edit -require="k8s.io/kubernetes@v${K8S_VERSION}"
gomod=$(go mod download -json "k8s.io/kubernetes@v${K8S_VERSION}" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
staging_version="v0.${K8S_VERSION#1.}"
grep -oE '^\s*k8s.io/[a-z0-9-]+ => ./staging/src/k8s.io/[a-z0-9-]+' "$gomod" | awk '{print $1}' | sort -u |
  while read -r mod; do go mod edit -replace="${mod}=${mod}@${staging_version}"; done
go mod tidy
minor="${K8S_VERSION#1.}"; minor="${minor%%.*}"
version_flags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  version_flags+=" -X ${pkg}.gitVersion=v${K8S_VERSION} -X ${pkg}.gitMajor=1 -X ${pkg}.gitMinor=${minor}"
  version_flags+=" -X ${pkg}.gitTreeState=clean"
done
step "compiling kubelet"
nice go build -trimpath -ldflags="-s -w ${version_flags}" -o "$out/bin/kubelet" k8s.io/kubernetes/cmd/kubelet

if [ -n "$sibling" ]; then
  step "reusing containerd, crictl and the images of $sibling"
  for f in "${RUNTIME_FILES[@]}"; do
    cp -l "$sibling/$f" "$out/$f" 2>/dev/null || cp -p "$sibling/$f" "$out/$f"
  done
  write_versions
  rm -rf "$TARGET"
  mv "$out" "$TARGET"
  log "built in $(( $(date +%s) - start ))s: $(cd "$TARGET" && ls bin images | tr '\n' ' ')"
  echo "$TARGET"
  exit 0
fi

# --- containerd 2.x with its runc shim and ctr (CDI is built in and on by default in 2.x)
step "compiling containerd, containerd-shim-runc-v2 and ctr v${CONTAINERD_VERSION}"
cd "$work"
GOBIN="$out/bin" nice go install -trimpath -tags 'no_btrfs no_devmapper no_zfs' \
  -ldflags "-s -w -X github.com/containerd/containerd/v2/version.Version=v${CONTAINERD_VERSION}" \
  "github.com/containerd/containerd/v2/cmd/containerd@v${CONTAINERD_VERSION}" \
  "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2@v${CONTAINERD_VERSION}" \
  "github.com/containerd/containerd/v2/cmd/ctr@v${CONTAINERD_VERSION}"

step "compiling crictl v${CRICTL_VERSION}"
GOBIN="$out/bin" nice go install -trimpath -ldflags "-s -w" "sigs.k8s.io/cri-tools/cmd/crictl@v${CRICTL_VERSION}"

# --- images (no registry can be reached): a static pause and Debian's busybox-static
step "making the pause and busybox images"
img="$work/img" && mkdir -p "$img" && cd "$img"
cat > pause.c <<'C'
/* The pod sandbox's process: sleeps, reaps children, exits on SIGINT/SIGTERM. */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
static void on_term(int s) { (void)s; _exit(0); }
static void on_chld(int s) { (void)s; while (waitpid(-1, 0, WNOHANG) > 0) {} }
int main(void) {
  struct sigaction t = {.sa_handler = on_term}, c = {.sa_handler = on_chld, .sa_flags = SA_NOCLDSTOP};
  sigaction(SIGINT, &t, 0); sigaction(SIGTERM, &t, 0); sigaction(SIGCHLD, &c, 0);
  for (;;) pause();
}
C
gcc -Os -static -o pause.bin pause.c && strip pause.bin
# busybox-static unpacked here, not installed: it would replace the system's busybox
apt-get download busybox-static >/dev/null 2>&1 || {
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null; apt-get download busybox-static >/dev/null; }
dpkg-deb -x busybox-static_*.deb bb
mkimage() { # name tag rootfs-setup-function umoci-config-args...
  local name=$1 tag=$2 setup=$3; shift 3
  umoci init --layout "$img/$name" && umoci new --image "$img/$name:$tag"
  umoci unpack --image "$img/$name:$tag" "$img/$name.b" >/dev/null
  $setup "$img/$name.b/rootfs"
  umoci repack --image "$img/$name:$tag" "$img/$name.b"
  umoci config --image "$img/$name:$tag" --architecture "$arch" --os linux "$@"
  (cd "$img/$name" && tar cf "$out/images/$name-oci.tar" .)
}
pause_fs() { cp "$img/pause.bin" "$1/pause"; }
busybox_fs() {
  mkdir -p "$1"/{bin,etc,tmp,proc,sys,dev}
  cp "$img/bb/bin/busybox" "$1/bin/"
  for a in sh ls cat echo env id sleep ip ps grep sort mount stat test head tail wc tr; do
    ln -s busybox "$1/bin/$a"
  done
  echo 'root:x:0:0:root:/root:/bin/sh' > "$1/etc/passwd"
  echo 'root:x:0:' > "$1/etc/group"
}
mkimage pause 3.10 pause_fs --config.entrypoint /pause --config.user 65535:65535
mkimage busybox 1 busybox_fs --config.cmd /bin/sh --config.env PATH=/bin

write_versions
rm -rf "$TARGET"
mv "$out" "$TARGET"
log "built in $(( $(date +%s) - start ))s: $(cd "$TARGET" && ls bin images | tr '\n' ' ')"
echo "$TARGET"
