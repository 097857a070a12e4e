#!/usr/bin/env bash
# Makes the JRE base image of kdra's service images from Debian packages, and caches it:
#   $KDRA_CACHE_DIR/base-image/<key>/jre-oci/   an OCI layout, tag <tag> (VERSIONS names it)
# No registry can be reached from the machines this runs on, so the image is made here:
# mmdebstrap (Debian's openjdk-17-jre-headless, ca-certificates, no apt lists, docs or caches)
# packed with umoci. User 185 (the chart's runAsUser) exists and owns /deployments.
# Installs Debian's mmdebstrap and umoci with apt-get when missing (the only system
# change). Concurrent runs are safe: one lock, the build goes to a temporary directory, a finished
# build appears by one rename. Prints the cache directory on stdout.
set -euo pipefail

SUITE="${KDRA_BASE_SUITE:-bookworm}"
# bump when this script makes something else (a new cache directory, a new tag)
RECIPE="${KDRA_BASE_RECIPE:-2}"
TAG="${KDRA_BASE_TAG:-17-${SUITE}-r${RECIPE}}"
CACHE_DIR="${KDRA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kdra}"
arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
KEY="jre-${TAG}-linux-${arch}"
TARGET="$CACHE_DIR/base-image/$KEY"

log() { printf '[base-image] %s\n' "$*" >&2; }

complete() { [ -s "$TARGET/jre-oci/index.json" ] && [ -s "$TARGET/VERSIONS" ]; }

install_debian_tools() {
  local missing=()
  command -v mmdebstrap >/dev/null || missing+=(mmdebstrap)
  command -v umoci >/dev/null || missing+=(umoci)
  if [ ${#missing[@]} -gt 0 ]; then
    if ! command -v apt-get >/dev/null || [ "$(id -u)" != 0 ]; then
      log "missing ${missing[*]}: install them (Debian packages of these names) and run again"; exit 1
    fi
    log "installing Debian's ${missing[*]} with apt-get"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

mkdir -p "$CACHE_DIR/base-image"
if complete; then
  log "using the cached JRE base image $TAG in $TARGET"
  echo "$TARGET"
  exit 0
fi
exec 9>"$CACHE_DIR/base-image/.lock"
log "waiting for the base-image cache lock (another build may be running)"
flock 9
if complete; then
  log "another run built the base image meanwhile: $TARGET"
  echo "$TARGET"
  exit 0
fi
install_debian_tools

start=$(date +%s)
log "building the JRE base image $TAG (Debian $SUITE, openjdk-17-jre-headless) into $TARGET"
log "the first build takes about 4 minutes on 2 cores; later runs reuse it"
work=$(mktemp -d "$CACHE_DIR/base-image/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT
out="$work/out"
mkdir -p "$out"

# --variant=apt: essential packages plus apt (removed below); the hooks leave out what a
# container never reads and give the image the service user before it is packed
# (the merged-usr hook makes /usr merged itself, so neither usrmerge nor the perl it needs
# come in: 50 MB less)
mmdebstrap --variant=apt --mode=root --format=directory \
  --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
  --include=openjdk-17-jre-headless,ca-certificates-java,ca-certificates \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/info/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
  --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --essential-hook='mkdir -p "$1/usr/share/man/man1"' \
  --customize-hook='test -s "$1/etc/ssl/certs/java/cacerts"' \
  --customize-hook='chroot "$1" dpkg --purge apt libapt-pkg6.0' \
  --customize-hook='chroot "$1" groupadd -g 185 jboss' \
  --customize-hook='chroot "$1" useradd -u 185 -g 185 -d /deployments -M -s /usr/sbin/nologin jboss' \
  --customize-hook='mkdir -p "$1/deployments" && chown 185:185 "$1/deployments"' \
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/var/cache/debconf/*-old "$1"/var/log/* "$1"/var/lib/dpkg/*-old "$1"/usr/share/doc-base "$1"/usr/share/lintian "$1"/tmp/*' \
  "$SUITE" "$work/rootfs" >&2

# the layout: one layer with the root file system, the JVM's defaults as config
umoci init --layout "$out/jre-oci"
umoci new --image "$out/jre-oci:$TAG"
umoci unpack --image "$out/jre-oci:$TAG" "$work/bundle" >/dev/null
rm -rf "$work/bundle/rootfs"
mv "$work/rootfs" "$work/bundle/rootfs"
umoci repack --image "$out/jre-oci:$TAG" "$work/bundle"
java_home=$(cd "$work/bundle/rootfs" && ls -d usr/lib/jvm/java-17-openjdk-* | head -1)
umoci config --image "$out/jre-oci:$TAG" --architecture "$arch" --os linux \
  --config.env "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
  --config.env "JAVA_HOME=/$java_home" --config.env "LANG=C.UTF-8" \
  --config.workingdir /deployments --config.user 185:185 \
  --config.cmd "/$java_home/bin/java" --config.cmd -version \
  --manifest.annotation "org.opencontainers.image.title=kdra JRE base (Debian $SUITE openjdk-17-jre-headless)"
umoci gc --layout "$out/jre-oci"

cat > "$out/VERSIONS" <<EOF
image kdra.local/jre:$TAG (made by build-base-image.sh recipe $RECIPE)
$(chroot "$work/bundle/rootfs" dpkg-query -W -f '${Package} ${Version}\n' openjdk-17-jre-headless ca-certificates 2>/dev/null || true)
EOF
rm -rf "$TARGET"
mv "$out" "$TARGET"
log "built in $(( $(date +%s) - start ))s: $(du -sh "$TARGET/jre-oci" | cut -f1) packed ($TARGET)"
echo "$TARGET"
