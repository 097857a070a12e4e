package io.kdra.claimcontroller.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kdra.claimcontroller.domain.SchedulerFeatures;
import io.kdra.core.alloc.AllocatorFeatures;
import org.junit.jupiter.api.Test;

class ServerGateCheckTest {

  private static final String ALPHA_ON =
      "kubernetes_feature_enabled{name=\"DRADerivedAttributes\",stage=\"ALPHA\"} 1\n";

  @Test
  void aGateOnInTheApiServerButOffHereIsOneWarning() {
    assertThat(
            ServerGateCheck.finding(
                () -> ALPHA_ON, AllocatorFeatures.defaults(), SchedulerFeatures.defaults()))
        .contains(
            new ServerGateCheck.Finding(
                true,
                "feature gates on in the API server but off in this service's allocator:"
                    + " DRADerivedAttributes (set them as kube-scheduler has them)"));
  }

  private static final String TOPOLOGY_ON =
      "kubernetes_feature_enabled{name=\"TopologyAwareWorkloadScheduling\",stage=\"ALPHA\"} 1\n";

  /**
   * The API server keeps PodGroups' topology constraints with its gate on; this scheduler ignores
   * them with its own off, so a gate on there and off here is said.
   */
  @Test
  void aSchedulerGateOnInTheApiServerButOffHereIsWarnedBesideTheAllocatorsOnes() {
    assertThat(
            ServerGateCheck.finding(
                () -> ALPHA_ON + TOPOLOGY_ON,
                AllocatorFeatures.defaults(),
                SchedulerFeatures.defaults()))
        .contains(
            new ServerGateCheck.Finding(
                true,
                "feature gates on in the API server but off in this service's allocator:"
                    + " DRADerivedAttributes (set them as kube-scheduler has them); feature gates"
                    + " on in the API server but off in this controller's scheduler"
                    + " (kdra.claim-controller.feature-gates): TopologyAwareWorkloadScheduling"
                    + " (set them as kube-scheduler has them)"));
    assertThat(
            ServerGateCheck.finding(
                () -> TOPOLOGY_ON,
                AllocatorFeatures.defaults(),
                SchedulerFeatures.defaults().withGates("TopologyAwareWorkloadScheduling=true")))
        .isEmpty();
  }

  @Test
  void agreeingGatesSayNothing() {
    assertThat(
            ServerGateCheck.finding(
                () -> ALPHA_ON,
                AllocatorFeatures.defaults().withDerivedAttributes(true),
                SchedulerFeatures.defaults()))
        .isEmpty();
  }

  @Test
  void metricsItMayNotReadAreAnInfoNamingTheCause() {
    assertThat(
            ServerGateCheck.finding(
                () -> {
                  throw new KubernetesClientException("Forbidden", 403, null);
                },
                AllocatorFeatures.defaults(),
                SchedulerFeatures.defaults()))
        .hasValueSatisfying(
            f -> {
              assertThat(f.warn()).isFalse();
              assertThat(f.message())
                  .startsWith("cannot read the API server's feature gates from /metrics")
                  .contains("Forbidden");
            });
    assertThat(
            ServerGateCheck.finding(
                () -> null, AllocatorFeatures.defaults(), SchedulerFeatures.defaults()))
        .hasValueSatisfying(f -> assertThat(f.warn()).isFalse());
  }
}
