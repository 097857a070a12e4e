#!/usr/bin/env bash
# Builds helm-docs from its Go module, for ReferenceDocsTest, which generates
# docs/reference/helm-values.md from values.yaml's comments with it (see build-go-tool.sh for
# where it lands).
set -euo pipefail
HELM_DOCS_VERSION="${KDRA_HELM_DOCS_VERSION:-v1.14.2}"
exec "$(dirname "$0")/build-go-tool.sh" helm-docs \
  github.com/norwoodj/helm-docs/cmd/helm-docs "$HELM_DOCS_VERSION" ReferenceDocsTest
