package io.kdra.kubectl;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Usage and input errors: a clear line and the exit status, before any cluster is asked. */
class MainTest {

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int run(String... args) {
    return Main.run(
        args,
        new ByteArrayInputStream(new byte[0]),
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  @Test
  void noCommandPrintsTheUsage() {
    assertThat(run()).isEqualTo(Main.USAGE);
    assertThat(out.toString(StandardCharsets.UTF_8)).contains("why", "devices", "what-if");
  }

  @Test
  void whyNeedsPodOrResourceClaim() {
    assertThat(run("why", "node/x")).isEqualTo(Main.USAGE);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("expected pod/NAME or resourceclaim/NAME");
  }

  @Test
  void anUnknownFeatureGateIsAUsageErrorNamingIt() {
    assertThat(run("devices", "--feature-gates", "DRAPrioritisedList=false")).isEqualTo(Main.USAGE);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("DRAPrioritisedList");
  }

  @Test
  void featureGatesReachTheAllocatorsOptions() {
    assertThat(new Main.GatesConverter().convert("DRAPrioritizedList=false,DRAAdminAccess=true"))
        .satisfies(
            f -> {
              assertThat(f.prioritizedList()).isFalse();
              assertThat(f.adminAccess()).isTrue();
            });
    assertThat(
            Main.options(new Main.GatesConverter().convert("DRAPrioritizedList=false"))
                .features()
                .prioritizedList())
        .isFalse();
  }

  @Test
  void whatIfNeedsAManifest() {
    assertThat(run("what-if")).isEqualTo(Main.USAGE);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("--filename");
  }

  @Test
  void aManifestThatCannotBeReadIsNamed() {
    assertThat(
            run(
                "what-if",
                "--kubeconfig",
                "src/test/resources/kubeconfig.yaml",
                "-f",
                "no-such.yaml"))
        .isEqualTo(Main.ERROR);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .isEqualTo("error: no-such.yaml: no such file\n");
  }

  @Test
  void aMissingKubeconfigOrContextIsNamed() {
    assertThat(run("devices", "--kubeconfig", "no-such-kubeconfig.yaml")).isEqualTo(Main.ERROR);
    assertThat(
            run(
                "devices",
                "--kubeconfig",
                "src/test/resources/kubeconfig.yaml",
                "--context",
                "elsewhere"))
        .isEqualTo(Main.ERROR);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .isEqualTo(
            "error: kubeconfig no-such-kubeconfig.yaml: no such file\n"
                + "error: context \"elsewhere\" does not exist in the kubeconfig\n");
  }

  @Test
  void anUnreachableClusterIsAnErrorNamingTheServer() {
    assertThat(run("devices", "--kubeconfig", "src/test/resources/kubeconfig.yaml"))
        .isEqualTo(Main.ERROR);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .startsWith(
            "error: cannot reach the API server at https://127.0.0.1:1/: connection " + "refused");
  }
}
