#!/usr/bin/env bash
# Builds one service's image from src/main/docker/Dockerfile.jvm with podman (no daemon) onto the
# JRE base image that integration-tests/scripts/build-base-image.sh makes, and leaves it as an
# OCI archive in the service's target directory:
#   <module>/target/container-image/<service>-oci.tar   tagged kdra/<service>:<tag>
# Push it to any registry with skopeo (docs/user/install.md, "Images"). The Maven build runs this
# in each service's package phase (-Dkdra.images=true|false|auto, root pom).
#
# usage: build-image.sh <module directory> <service> <tag> [true|false|auto [<skipITs>]]
#   auto (the default): build when the integration tests will run (skipITs is not true) as root
#   (ImagesIT, the one test of the images, needs root; root can install podman with apt-get),
#   else say why not and build nothing; true: also with -DskipTests (the base image still needs
#   root), failing without podman; false: build nothing.
set -euo pipefail

module=$(cd "$1" && pwd)
service=$2
tag=$3
mode=${4:-auto}
skip_its=${5:-false}
root=$(cd "$(dirname "$0")/../../.." && pwd)
CACHE_DIR="${KDRA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kdra}"
out="$module/target/container-image"
archive="$out/$service-oci.tar"
image="kdra/$service:$tag"

log() { printf '[image] %s\n' "$*" >&2; }

# an image of an earlier package must never pass for this one
rm -f "$archive"
[ "$mode" = false ] && { log "kdra.images=false: no image for $service"; exit 0; }
if [ "$mode" = auto ] && [ "$skip_its" = true ]; then
  log "no image for $service: tests skipped and kdra.images=auto (-Dkdra.images=true builds it)"; exit 0
fi
if [ "$mode" = auto ] && [ "$(id -u)" != 0 ]; then
  log "no image for $service: not root, so no test would run it (-Dkdra.images=true builds it)"; exit 0
fi
if ! command -v podman >/dev/null || ! command -v skopeo >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "installing Debian's podman and skopeo with apt-get"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends podman skopeo >/dev/null
  else
    log "building images needs podman and skopeo (Debian packages of these names)"; exit 1
  fi
fi
if [ ! -f "$module/target/quarkus-app/quarkus-run.jar" ]; then
  log "$module/target/quarkus-app is missing: package $service first"; exit 1
fi

start=$(date +%s%N)
base=$(bash "$root/integration-tests/scripts/build-base-image.sh")
base_tag=$(sed -n 's/^image kdra.local\/jre:\([^ ]*\) .*/\1/p' "$base/VERSIONS")

# podman's own storage in the cache, not the machine's (/var/lib/containers): the base image is
# unpacked once for all services; cgroupfs and no event log (no systemd or journald needed).
# One lock around build, save and removal, so parallel builds of other checkouts never see (or
# overwrite) this build's tag.
storage="$CACHE_DIR/podman"
mkdir -p "$storage" "$out"
podman_() {
  podman --root "$storage/root" --runroot "$storage/run" --storage-driver overlay \
    --cgroup-manager cgroupfs --events-backend none "$@"
}
exec 8>"$storage/.lock"
flock 8
# the base into the storage once, by name (podman names an oci: image after its path, which a
# cache directory under ~/.cache makes an invalid reference)
base_image="kdra.local/jre:$base_tag"
if ! podman_ image exists "$base_image"; then
  skopeo --insecure-policy copy --quiet "oci:$base/jre-oci:$base_tag" \
    "containers-storage:[overlay@$storage/root+$storage/run]$base_image" >&2
fi
podman_ build --quiet --pull=never -f "$root/src/main/docker/Dockerfile.jvm" \
  --build-arg "JAVA_IMAGE=$base_image" --build-arg "SERVICE=$service" \
  --build-arg "APP=target/quarkus-app" --label "org.opencontainers.image.version=$tag" \
  -t "$image" "$module" >/dev/null
podman_ save --quiet --format oci-archive -o "$archive" "$image"
podman_ rmi --force "$image" >/dev/null
flock -u 8
log "built $image into $archive in $(( ($(date +%s%N) - start) / 1000000 )) ms ($(du -h "$archive" | cut -f1), layers gzip-compressed)"
