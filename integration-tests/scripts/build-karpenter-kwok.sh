#!/usr/bin/env bash
# Builds kdra-karpenter-kwok, Karpenter's KWOK provider (sigs.k8s.io/karpenter, the version in
# integration-tests/karpenter-kwok/go.mod) with the DRA templates and capacity errors the
# scale-out tests need (karpenter-kwok/main.go), into
#   $KDRA_CACHE_DIR/karpenter-kwok/<version>-linux-<arch>/<stamp>/kdra-karpenter-kwok
# (go-program.sh says how). Karpenter's go.mod asks for Go 1.26.9, which GOTOOLCHAIN fetches
# through the Go proxy when the installed Go is older. Prints the binary's path on stdout,
# progress on stderr.
set -euo pipefail

KARPENTER_VERSION="v1.15.0"
SCRIPTS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.26.9}"
# shellcheck source=go-program.sh
. "$SCRIPTS/go-program.sh"
build_go_program karpenter-kwok "$SCRIPTS/../karpenter-kwok" karpenter-kwok "$KARPENTER_VERSION" \
  kdra-karpenter-kwok "kdra-karpenter-kwok (sigs.k8s.io/karpenter ${KARPENTER_VERSION}, kwok)"
