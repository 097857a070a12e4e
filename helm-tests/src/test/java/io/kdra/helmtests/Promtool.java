package io.kdra.helmtests;

import java.nio.file.Path;

/**
 * Prometheus's promtool, built from its Go module by helm-tests/scripts/build-promtool.sh into the
 * kdra cache on first use (several minutes cold, then reused).
 */
final class Promtool {

  private static final GoTool TOOL = new GoTool("build-promtool.sh", "AlertRulesTest");

  private Promtool() {}

  /** What promtool printed and how it exited. */
  record Result(int exitCode, String output) {}

  /** Runs promtool with these arguments in {@code dir}. */
  static Result run(Path dir, String... args) {
    GoTool.Result r = TOOL.run(dir, args);
    return new Result(r.exitCode(), r.output());
  }
}
