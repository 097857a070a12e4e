#!/usr/bin/env bash
# Builds Prometheus's promtool from its Go module, for AlertRulesTest, which checks and unit-tests
# the chart's alert rules with it (see build-go-tool.sh for where it lands).
set -euo pipefail
# Prometheus v3.x is the Go module's v0.3xx.y (v0.316.0 is Prometheus 3.16.0).
PROMETHEUS_VERSION="${KDRA_PROMETHEUS_VERSION:-v0.316.0}"
exec "$(dirname "$0")/build-go-tool.sh" promtool \
  github.com/prometheus/prometheus/cmd/promtool "$PROMETHEUS_VERSION" AlertRulesTest
