package io.kdra.it.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A test's own control plane ({@link ControlPlane.Running#startOwn}) adds its gates to the shared
 * one's {@code --feature-gates}; without gates the flags are the shared control plane's.
 */
class ApiServerFlagsTest {

  private static final String WORKLOAD =
      "GenericWorkload=true,DRAWorkloadResourceClaims=true,TopologyAwareWorkloadScheduling=true";

  @Test
  void noGatesAreTheSharedControlPlanesFlags() {
    assertThat(ControlPlane.apiServerFlags("1.37.2", Map.of()))
        .isEqualTo(WorkloadApi.apiServerFlags("1.37.2"));
    assertThat(ControlPlane.apiServerFlags("1.36.3", Map.of())).isEmpty();
  }

  @Test
  void gatesFollowTheWorkloadApisInOneFlag() {
    assertThat(
            ControlPlane.apiServerFlags(
                "1.37.2", Map.of("DRAOptionalNodeOperations", true, "DRADerivedAttributes", false)))
        .containsEntry(
            "--feature-gates",
            WORKLOAD + ",DRADerivedAttributes=false,DRAOptionalNodeOperations=true")
        .containsEntry("--runtime-config", "scheduling.k8s.io/v1beta1=true")
        .hasSize(2);
  }

  @Test
  void aGateNamedInBothTakesTheTestsValue() {
    assertThat(ControlPlane.apiServerFlags("1.37.2", Map.of("GenericWorkload", false)))
        .containsEntry(
            "--feature-gates",
            "GenericWorkload=false,DRAWorkloadResourceClaims=true,"
                + "TopologyAwareWorkloadScheduling=true");
  }

  @Test
  void aVersionWithoutTheWorkloadApiGetsOnlyTheTestsGates() {
    assertThat(ControlPlane.apiServerFlags("1.36.3", Map.of("DRAOptionalNodeOperations", true)))
        .isEqualTo(Map.of("--feature-gates", "DRAOptionalNodeOperations=true"));
  }
}
