package io.kdra.helmtests;

import static org.assertj.core.api.Assertions.assertThat;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** helm lint --strict, with the default values and with every value set. */
class LintTest {

  @Test
  void embeddedHelmIsVersion3() {
    assertThat(Helm.version().call()).startsWith("v3.");
  }

  @Test
  void lintPassesWithDefaults() {
    assertClean(Chart.lint(Map.of()));
  }

  @Test
  void lintPassesWithEveryValueSet() {
    assertClean(Chart.lint(Chart.fullValues()));
  }

  @Test
  void lintPassesOnGkeWithTheBridge() {
    assertClean(
        Chart.lint(
            Chart.values(
                "cluster.gke",
                true,
                "computeClassBridge.enabled",
                true,
                "deviceDriver.backend",
                "tpu",
                "deviceDriver.hostDevices.enabled",
                true)));
  }

  private static void assertClean(LintResult result) {
    assertThat(result.isFailed()).as("%s", result.getMessages()).isFalse();
    assertThat(result.getMessages())
        .as("only informational messages")
        .allMatch(m -> m.startsWith("[INFO]") || m.isBlank() || m.contains("1 chart(s) linted"));
  }
}
