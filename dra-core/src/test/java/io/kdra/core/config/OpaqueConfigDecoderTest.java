package io.kdra.core.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kdra.core.model.Quantity;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class OpaqueConfigDecoderTest {
  private static final String P = "p";

  /** Our config kind's parameters with this {@code sharing} (none when null). */
  static Map<String, Object> gpuConfig(Map<String, Object> sharing) {
    Map<String, Object> p = new LinkedHashMap<>();
    p.put("apiVersion", OpaqueConfigDecoder.API_VERSION);
    p.put("kind", OpaqueConfigDecoder.KIND);
    if (sharing != null) {
      p.put("sharing", sharing);
    }
    return p;
  }

  record Good(Object parameters, SharingConfig expected) {}

  static Stream<Named<Good>> good() {
    return Stream.of(
        Named.of("no sharing: exclusive", new Good(gpuConfig(null), SharingConfig.EXCLUSIVE)),
        Named.of(
            "explicit exclusive",
            new Good(gpuConfig(Map.of("strategy", "Exclusive")), SharingConfig.EXCLUSIVE)),
        Named.of(
            "time slicing, default interval",
            new Good(
                gpuConfig(Map.of("strategy", "TimeSlicing")),
                new SharingConfig.TimeSlicing(SharingConfig.Interval.Default))),
        Named.of(
            "time slicing, short",
            new Good(
                gpuConfig(
                    Map.of("strategy", "TimeSlicing", "timeSlicing", Map.of("interval", "Short"))),
                new SharingConfig.TimeSlicing(SharingConfig.Interval.Short))),
        Named.of(
            "MPS with both settings",
            new Good(
                gpuConfig(
                    Map.of(
                        "strategy",
                        "MPS",
                        "mps",
                        Map.of("activeThreadPercentage", 30, "pinnedMemoryLimit", "10Gi"))),
                new SharingConfig.Mps(30, Optional.of(Quantity.parse("10Gi"))))),
        Named.of(
            "MPS defaults",
            new Good(
                gpuConfig(Map.of("strategy", "MPS")),
                new SharingConfig.Mps(100, Optional.empty()))));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("good")
  void decodes(Good g) throws Exception {
    assertThat(OpaqueConfigDecoder.decode(g.parameters(), P)).isEqualTo(g.expected());
  }

  record Bad(Object parameters, String field, String message) {}

  static Stream<Named<Bad>> bad() {
    Map<String, Object> extraTop = new LinkedHashMap<>(gpuConfig(null));
    extraTop.put("sharng", Map.of());
    return Stream.of(
        Named.of("missing parameters", new Bad(null, "p", "is required")),
        Named.of("not an object", new Bad(List.of(1), "p", "must be an object")),
        Named.of(
            "missing apiVersion",
            new Bad(Map.of("kind", "GpuConfig"), "p.apiVersion", "is required")),
        Named.of(
            "wrong apiVersion",
            new Bad(
                Map.of("apiVersion", "v9", "kind", "GpuConfig"),
                "p.apiVersion",
                "\"v9\" is not supported")),
        Named.of(
            "wrong kind",
            new Bad(
                Map.of("apiVersion", OpaqueConfigDecoder.API_VERSION, "kind", "GpuSettings"),
                "p.kind",
                "\"GpuSettings\" is not supported")),
        Named.of("unknown top-level field", new Bad(extraTop, "p.sharng", "unknown field")),
        Named.of(
            "unknown strategy",
            new Bad(
                gpuConfig(Map.of("strategy", "Spatial")),
                "p.sharing.strategy",
                "not one of Exclusive, TimeSlicing, MPS")),
        Named.of(
            "strategy not a string",
            new Bad(gpuConfig(Map.of("strategy", 3)), "p.sharing.strategy", "must be a string")),
        Named.of(
            "unknown interval",
            new Bad(
                gpuConfig(
                    Map.of(
                        "strategy", "TimeSlicing", "timeSlicing", Map.of("interval", "Forever"))),
                "p.sharing.timeSlicing.interval",
                "not one of Default, Short, Medium, Long")),
        Named.of(
            "mps settings with time slicing",
            new Bad(
                gpuConfig(Map.of("strategy", "TimeSlicing", "mps", Map.of())),
                "p.sharing.mps",
                "not allowed with strategy")),
        Named.of(
            "time slicing settings with MPS",
            new Bad(
                gpuConfig(Map.of("strategy", "MPS", "timeSlicing", Map.of())),
                "p.sharing.timeSlicing",
                "not allowed with strategy MPS")),
        Named.of(
            "settings with exclusive",
            new Bad(
                gpuConfig(Map.of("timeSlicing", Map.of())),
                "p.sharing.timeSlicing",
                "not allowed with strategy Exclusive")),
        Named.of(
            "percentage above 100",
            new Bad(
                gpuConfig(Map.of("strategy", "MPS", "mps", Map.of("activeThreadPercentage", 150))),
                "p.sharing.mps.activeThreadPercentage",
                "from 1 to 100, got 150")),
        Named.of(
            "percentage not an integer",
            new Bad(
                gpuConfig(
                    Map.of("strategy", "MPS", "mps", Map.of("activeThreadPercentage", "half"))),
                "p.sharing.mps.activeThreadPercentage",
                "must be an integer")),
        Named.of(
            "pinned limit not a quantity",
            new Bad(
                gpuConfig(Map.of("strategy", "MPS", "mps", Map.of("pinnedMemoryLimit", "lots"))),
                "p.sharing.mps.pinnedMemoryLimit",
                "\"lots\" is not a quantity")),
        Named.of(
            "pinned limit zero",
            new Bad(
                gpuConfig(Map.of("strategy", "MPS", "mps", Map.of("pinnedMemoryLimit", "0"))),
                "p.sharing.mps.pinnedMemoryLimit",
                "must be positive")),
        Named.of(
            "unknown mps field",
            new Bad(
                gpuConfig(Map.of("strategy", "MPS", "mps", Map.of("pinnedMemory", "1Gi"))),
                "p.sharing.mps.pinnedMemory",
                "unknown field")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("bad")
  void refusesNamingTheField(Bad b) {
    assertThatThrownBy(() -> OpaqueConfigDecoder.decode(b.parameters(), P))
        .isInstanceOfSatisfying(
            OpaqueConfigException.class,
            e -> {
              assertThat(e.field()).isEqualTo(b.field());
              assertThat(e.getMessage()).contains(b.message());
            });
  }
}
