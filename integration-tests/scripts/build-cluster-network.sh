#!/usr/bin/env bash
# Builds what the multi-node test cluster (MultiNodeCluster) adds to real nodes, from official Go
# modules, and caches it:
#   $KDRA_CACHE_DIR/network/<key>/cni/{bridge,host-local,loopback,portmap}   the standard CNI plugins
#   $KDRA_CACHE_DIR/network/<key>/bin/kube-proxy                             same version as the control plane
#   $KDRA_CACHE_DIR/network/<key>/images/{coredns,kube-network-policies}-oci.tar   (OCI layouts, made here)
# <key> names every pinned version (kube-proxy follows KDRA_K8S_VERSION), so a new pin is a new
# directory. No registry can be reached from the machines this runs on, so the two images are made
# locally with umoci from the static binaries built here, as build-node.sh makes busybox and pause.
# Concurrent runs are safe: one lock per cache directory, the build goes to a temporary directory,
# and a finished build appears by one rename.
set -euo pipefail

K8S_VERSION="${KDRA_K8S_VERSION:-1.37.2}"
CNI_PLUGINS_VERSION="${KDRA_CNI_PLUGINS_VERSION:-1.10.0}"
COREDNS_VERSION="${KDRA_COREDNS_VERSION:-1.15.0}"
KNP_VERSION="${KDRA_KUBE_NETWORK_POLICIES_VERSION:-0.8.0}"
# bumped (root pom: kdra.network.recipe) when this script makes something else at the same versions
RECIPE="${KDRA_NETWORK_RECIPE:-2}"
CACHE_DIR="${KDRA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kdra}"
arch=$(uname -m); case "$arch" in x86_64) arch=amd64;; aarch64) arch=arm64;; esac
KEY="kube-proxy-${K8S_VERSION}_cni-${CNI_PLUGINS_VERSION}_coredns-${COREDNS_VERSION}_knp-${KNP_VERSION}_r${RECIPE}-linux-${arch}"
TARGET="$CACHE_DIR/network/$KEY"

log() { printf '[network] %s\n' "$*" >&2; }

complete() {
  local f
  for f in cni/bridge cni/host-local cni/loopback cni/portmap bin/kube-proxy \
           images/coredns-oci.tar images/kube-network-policies-oci.tar; do
    [ -s "$TARGET/$f" ] || return 1
  done
}

if [ "$(id -u)" != 0 ]; then
  # network namespaces need root: the multi-node ITs skip themselves, so build nothing
  log "not root: no multi-node cluster (its ITs are skipped)"
  echo "$TARGET"
  exit 0
fi
mkdir -p "$CACHE_DIR/network"
if complete; then
  log "using the cached cluster network (kube-proxy v${K8S_VERSION}, CNI plugins v${CNI_PLUGINS_VERSION}, CoreDNS v${COREDNS_VERSION}, kube-network-policies v${KNP_VERSION}) in $TARGET"
  echo "$TARGET"
  exit 0
fi

exec 9>"$CACHE_DIR/network/.lock"
log "waiting for the network cache lock (another build may be running)"
flock 9
if complete; then
  log "another run built the cluster network meanwhile: $TARGET"
  echo "$TARGET"
  exit 0
fi
for tool in go umoci; do
  command -v "$tool" >/dev/null || { log "$tool is not installed (build-node.sh installs umoci)"; exit 1; }
done

start=$(date +%s)
log "building the cluster network into $TARGET"
# Another Kubernetes version's complete build at the same CNI, CoreDNS, kube-network-policies and
# recipe: its plugins and images are hard-linked, and only kube-proxy is compiled.
SHARED_SUFFIX="_cni-${CNI_PLUGINS_VERSION}_coredns-${COREDNS_VERSION}_knp-${KNP_VERSION}_r${RECIPE}-linux-${arch}"
donor=""
for d in "$CACHE_DIR"/network/kube-proxy-*"$SHARED_SUFFIX"; do
  if [ -s "$d/images/coredns-oci.tar" ] && [ -s "$d/images/kube-network-policies-oci.tar" ] && [ -s "$d/cni/portmap" ]; then
    donor="$d"; break
  fi
done
work=$(mktemp -d "$CACHE_DIR/network/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT
out="$work/out"
mkdir -p "$out/bin" "$out/cni" "$out/images"
export CGO_ENABLED=0
step() { log "$1 ($(( $(date +%s) - start ))s so far)"; }

# a module's own directory in the module cache, as its go.mod and go.sum pin its dependencies
module_dir() {
  go mod download -json "$1" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'
}

if [ -n "$donor" ]; then
  log "reusing the CNI plugins and images of $donor"
  cp -al "$donor/cni/." "$out/cni/" && cp -al "$donor/images/." "$out/images/"
else
# --- the standard CNI plugins
step "compiling the CNI plugins v${CNI_PLUGINS_VERSION} (bridge, host-local, loopback, portmap)"
dir=$(module_dir "github.com/containernetworking/plugins@v${CNI_PLUGINS_VERSION}")
(cd "$dir" && for p in main/bridge ipam/host-local main/loopback meta/portmap; do
  nice go build -trimpath -ldflags "-s -w" -o "$out/cni/${p#*/}" "./plugins/$p"
done)

fi

# --- kube-proxy: k8s.io/kubernetes at the pin, its staging modules replaced by their published
# twins (build-node.sh's trick for the kubelet)
step "resolving k8s.io/kubernetes v${K8S_VERSION} for cmd/kube-proxy"
mkdir -p "$work/kube-proxy" && cd "$work/kube-proxy"
cat > go.mod <<GOMOD
module kdra.local/network

go 1.25
GOMOD
cat > tools.go <<'GO'
//go:build tools

package main

import _ "k8s.io/kubernetes/cmd/kube-proxy"
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
step "compiling kube-proxy v${K8S_VERSION}"
nice go build -trimpath -ldflags="-s -w ${version_flags}" -o "$out/bin/kube-proxy" k8s.io/kubernetes/cmd/kube-proxy

if [ -z "$donor" ]; then
# --- CoreDNS with only the plugins a cluster's DNS uses (kubeadm's Corefile), in upstream's
# directive order: the full build carries every cloud's SDK and takes most of this script's time
step "compiling CoreDNS v${COREDNS_VERSION} (cluster DNS plugins only)"
mkdir -p "$work/coredns-src" && cd "$work/coredns-src"
cat > go.mod <<GOMOD
module kdra.local/coredns

go 1.26.0
GOMOD
cat > main.go <<'GO'
// Command coredns is CoreDNS with the plugins of a Kubernetes cluster's Corefile only.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
)

func init() {
	dnsserver.Directives = []string{
		"reload", "ready", "health", "prometheus", "errors", "log", "loadbalance",
		"cache", "kubernetes", "loop", "forward",
	}
}

func main() { coremain.Run() }
GO
go mod edit -require="github.com/coredns/coredns@v${COREDNS_VERSION}"
go mod tidy
nice go build -trimpath \
  -ldflags "-s -w -X github.com/coredns/coredns/coremain.GitCommit=v${COREDNS_VERSION}" \
  -o "$work/coredns" .
step "compiling kube-network-policies v${KNP_VERSION}"
dir=$(module_dir "sigs.k8s.io/kube-network-policies@v${KNP_VERSION}")
(cd "$dir" && nice go build -trimpath -ldflags "-s -w" -o "$work/kube-network-policies" ./cmd)

# --- images: each a static binary on an otherwise empty root
step "making the coredns and kube-network-policies images"
img="$work/img" && mkdir -p "$img"
mkimage() { # name tag binary umoci-config-args...
  local name=$1 tag=$2 binary=$3; shift 3
  umoci init --layout "$img/$name" && umoci new --image "$img/$name:$tag"
  umoci unpack --image "$img/$name:$tag" "$img/$name.b" >/dev/null
  local root="$img/$name.b/rootfs"
  mkdir -p "$root/etc" "$root/tmp"
  cp "$binary" "$root/$name"
  echo 'root:x:0:0:root:/:/nonexistent' > "$root/etc/passwd"
  echo 'nonroot:x:65532:65532:nonroot:/:/nonexistent' >> "$root/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' > "$root/etc/group"
  umoci repack --image "$img/$name:$tag" "$img/$name.b"
  umoci config --image "$img/$name:$tag" --architecture "$arch" --os linux "$@"
  (cd "$img/$name" && tar cf "$out/images/$name-oci.tar" .)
}
mkimage coredns "$COREDNS_VERSION" "$work/coredns" --config.entrypoint /coredns
mkimage kube-network-policies "$KNP_VERSION" "$work/kube-network-policies" \
  --config.entrypoint /kube-network-policies

fi

cat > "$out/VERSIONS" <<EOF
kube-proxy v${K8S_VERSION} (k8s.io/kubernetes/cmd/kube-proxy)
CNI plugins v${CNI_PLUGINS_VERSION} (github.com/containernetworking/plugins: bridge, host-local, loopback, portmap)
images k8s.local/coredns:${COREDNS_VERSION} (github.com/coredns/coredns)
       k8s.local/kube-network-policies:${KNP_VERSION} (sigs.k8s.io/kube-network-policies)
       (made by build-cluster-network.sh recipe ${RECIPE})
EOF
rm -rf "$TARGET"
mv "$out" "$TARGET"
log "built in $(( $(date +%s) - start ))s: $(cd "$TARGET" && ls cni bin images | tr '\n' ' ')"
echo "$TARGET"
