package io.kdra.it.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The Workload API's flags go only to API servers that know its gates: an unknown gate name stops
 * kube-apiserver from starting (the 1.34 and 1.36 runs of the version matrix).
 */
class WorkloadApiTest {

  @ParameterizedTest(name = "{0}: {1}")
  @CsvSource({"1.37.2, true", "1.38.0, true", "1.36.3, false", "1.34.4, false"})
  void flagsOnlyWhereTheVersionServesIt(String version, boolean served) {
    assertThat(WorkloadApi.apiServerFlags(version))
        .isEqualTo(
            served
                ? Map.of(
                    "--feature-gates",
                    "GenericWorkload=true,DRAWorkloadResourceClaims=true,"
                        + "TopologyAwareWorkloadScheduling=true",
                    "--runtime-config",
                    "scheduling.k8s.io/v1beta1=true")
                : Map.of());
  }
}
