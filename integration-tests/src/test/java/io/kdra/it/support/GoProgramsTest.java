package io.kdra.it.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The harness finds a Go program where go-program.sh put it only if both compute the same stamp
 * over its sources: compared with the script's own pipeline on the repository's programs.
 */
class GoProgramsTest {

  @Test
  void theStampIsTheOneGoProgramShComputes() throws Exception {
    for (String program : new String[] {"karpenter-kwok", "upstream"}) {
      assertThat(GoPrograms.sourceStamp(program)).as(program).isEqualTo(scriptStamp(program));
    }
  }

  @Test
  void theBinaryIsUnderItsCacheDirVersionAndStamp() {
    Path binary =
        GoPrograms.cached("karpenter-kwok", "karpenter-kwok", "v1.15.0", "kdra-karpenter-kwok");
    assertThat(binary.getFileName().toString()).isEqualTo("kdra-karpenter-kwok");
    assertThat(binary.getParent().getFileName().toString())
        .isEqualTo(GoPrograms.sourceStamp("karpenter-kwok"));
    assertThat(binary.getParent().getParent().getFileName().toString())
        .isEqualTo("v1.15.0-linux-" + GoPrograms.arch());
    assertThat(binary.getParent().getParent().getParent())
        .isEqualTo(Leftovers.cacheDir().resolve("karpenter-kwok"));
  }

  /** What go-program.sh runs, in the program's directory. */
  private static String scriptStamp(String program) throws Exception {
    Process p =
        new ProcessBuilder(
                "bash",
                "-c",
                "cd " + program + " && cat go.mod go.sum $(ls *.go | LC_ALL=C sort) | sha256sum")
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor()).as(out).isZero();
    return out.substring(0, 12);
  }
}
