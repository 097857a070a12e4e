#!/usr/bin/env bash
# Builds dra-alloc-upstream, the reference program in integration-tests/upstream/ (upstream's
# k8s.io/dynamic-resource-allocation allocator behind bin/dra-alloc's command line, its CEL
# library, and as `filter` kube-scheduler's default Filter plugins from k8s.io/kubernetes), into
#   $KDRA_CACHE_DIR/upstream-alloc/<version>-linux-<arch>/<stamp>/dra-alloc-upstream
# (go-program.sh says how; UpstreamAlloc.binary(), the ITs, computes the same path). Prints the
# binary's path on stdout, progress on stderr.
set -euo pipefail

ALLOC_VERSION="v0.37.2"
SCRIPTS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=go-program.sh
. "$SCRIPTS/go-program.sh"
build_go_program upstream-alloc "$SCRIPTS/../upstream" upstream-alloc "$ALLOC_VERSION" \
  dra-alloc-upstream "dra-alloc-upstream (k8s.io/dynamic-resource-allocation ${ALLOC_VERSION})"
