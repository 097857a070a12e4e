package io.kdra.core.alloc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class GateSkewTest {

  /** What kube-apiserver 1.37.2 serves on /metrics, cut down, with two alpha gates turned on. */
  private static final String METRICS =
      """
      # HELP kubernetes_feature_enabled [BETA] This metric records the data about the stage and enablement of a k8s feature.
      # TYPE kubernetes_feature_enabled gauge
      kubernetes_feature_enabled{name="DRAAdminAccess",stage=""} 1
      kubernetes_feature_enabled{name="DRADerivedAttributes",stage="ALPHA"} 1
      kubernetes_feature_enabled{name="DRADeviceCompatibilityGroups",stage="ALPHA"} 0
      kubernetes_feature_enabled{name="DRAPrioritizedList",stage=""} 1
      kubernetes_feature_enabled{name="DRAListTypeAttributes",stage="ALPHA"} 1
      kubernetes_feature_enabled{name="DRAFractionalCapacityRange",stage="BETA"} 1
      apiserver_request_total{code="200",name="DRADerivedAttributes"} 3
      """;

  @ParameterizedTest(name = "{0}")
  @MethodSource
  void gatesOnInTheApiServerButOffHere(
      String name, String metrics, AllocatorFeatures ours, Optional<String> warning) {
    assertThat(GateSkew.warning(GateSkew.parseMetrics(metrics), ours)).isEqualTo(warning);
  }

  static Stream<Arguments> gatesOnInTheApiServerButOffHere() {
    return Stream.of(
        Arguments.of(
            "an alpha gate on in the server, off here",
            METRICS,
            AllocatorFeatures.defaults(),
            Optional.of(
                "feature gates on in the API server but off in this service's allocator:"
                    + " DRADerivedAttributes (set them as kube-scheduler has them)")),
        Arguments.of(
            "the same gates on here too",
            METRICS,
            AllocatorFeatures.defaults().withDerivedAttributes(true),
            Optional.empty()),
        Arguments.of(
            "several, sorted; gates this allocator does not know are not named",
            METRICS,
            AllocatorFeatures.defaults()
                .withPrioritizedList(false)
                .withFractionalCapacityRange(false),
            Optional.of(
                "feature gates on in the API server but off in this service's allocator:"
                    + " DRADerivedAttributes, DRAFractionalCapacityRange, DRAPrioritizedList"
                    + " (set them as kube-scheduler has them)")),
        Arguments.of(
            "a gate off here and absent from an older server's metrics",
            "kubernetes_feature_enabled{name=\"DRAAdminAccess\",stage=\"BETA\"} 1\n",
            AllocatorFeatures.defaults().withDerivedAttributes(false),
            Optional.empty()),
        Arguments.of("no metrics at all", "", AllocatorFeatures.none(), Optional.empty()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource
  void readsTheFeatureMetricOnly(String line, Map<String, Boolean> gates) {
    assertThat(GateSkew.parseMetrics(line)).isEqualTo(gates);
  }

  static Stream<Arguments> readsTheFeatureMetricOnly() {
    return Stream.of(
        Arguments.of("kubernetes_feature_enabled{name=\"A\",stage=\"ALPHA\"} 1", Map.of("A", true)),
        Arguments.of("kubernetes_feature_enabled{stage=\"\",name=\"A\"} 0", Map.of("A", false)),
        Arguments.of("kubernetes_feature_enabled{name=\"A\",stage=\"\"} 1e+00", Map.of("A", true)),
        Arguments.of("# kubernetes_feature_enabled{name=\"A\",stage=\"\"} 1", Map.of()),
        Arguments.of("other_metric{name=\"A\"} 1", Map.of()),
        Arguments.of("kubernetes_feature_enabled{name=\"A\",stage=\"\"} x", Map.of()));
  }
}
