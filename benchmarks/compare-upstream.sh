#!/usr/bin/env bash
# Ours against upstream's allocator, side by side: builds dra-alloc-upstream (cached) and the
# benchmarks jar (unless built), runs UpstreamComparison (both implementations on the same
# workloads, alternating) and prints the markdown table; --plot FILE.png also draws the plot.
# Extra arguments go to UpstreamComparison, e.g.
#   benchmarks/compare-upstream.sh --nodes 100,1000 --claims 400,200 --rounds 3
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
binary=$(integration-tests/scripts/build-upstream-alloc.sh)
if [ ! -f benchmarks/target/benchmarks.jar ]; then
  echo "[compare] building the benchmarks jar" >&2
  ./mvnw -B -q -pl benchmarks -am package -DskipTests
fi
exec java -cp benchmarks/target/benchmarks.jar io.kdra.benchmarks.UpstreamComparison \
  --upstream "$binary" "$@"
