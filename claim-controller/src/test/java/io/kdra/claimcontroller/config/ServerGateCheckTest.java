package io.kdra.claimcontroller.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kdra.core.alloc.AllocatorFeatures;
import org.junit.jupiter.api.Test;

class ServerGateCheckTest {

  private static final String ALPHA_ON =
      "kubernetes_feature_enabled{name=\"DRADerivedAttributes\",stage=\"ALPHA\"} 1\n";

  @Test
  void aGateOnInTheApiServerButOffHereIsOneWarning() {
    assertThat(ServerGateCheck.finding(() -> ALPHA_ON, AllocatorFeatures.defaults()))
        .contains(
            new ServerGateCheck.Finding(
                true,
                "feature gates on in the API server but off in this service's allocator:"
                    + " DRADerivedAttributes (set them as kube-scheduler has them)"));
  }

  @Test
  void agreeingGatesSayNothing() {
    assertThat(
            ServerGateCheck.finding(
                () -> ALPHA_ON, AllocatorFeatures.defaults().withDerivedAttributes(true)))
        .isEmpty();
  }

  @Test
  void metricsItMayNotReadAreAnInfoNamingTheCause() {
    assertThat(
            ServerGateCheck.finding(
                () -> {
                  throw new KubernetesClientException("Forbidden", 403, null);
                },
                AllocatorFeatures.defaults()))
        .hasValueSatisfying(
            f -> {
              assertThat(f.warn()).isFalse();
              assertThat(f.message())
                  .startsWith("cannot read the API server's feature gates from /metrics")
                  .contains("Forbidden");
            });
    assertThat(ServerGateCheck.finding(() -> null, AllocatorFeatures.defaults()))
        .hasValueSatisfying(f -> assertThat(f.warn()).isFalse());
  }
}
