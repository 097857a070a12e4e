package io.kdra.devicedriver.prepare;

import static io.kdra.devicedriver.testing.ClaimFixture.claim;
import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.core.model.Quantity;
import io.kdra.devicedriver.discovery.CounterSet;
import io.kdra.devicedriver.discovery.Inventory;
import io.kdra.devicedriver.discovery.NodeDevice;
import io.kdra.devicedriver.plugin.ClaimRef;
import io.kdra.devicedriver.testing.ClaimFixture;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class DeviceFenceTest {

  /**
   * gpu-0 and gpu-1 exclusive, shared-0 shareable; gpu-2 partitionable: the whole GPU draws all 7
   * slices of counter set gpu-2-counters, mig-a 4 of them, mig-b 3, mig-c 4.
   */
  static final Inventory INVENTORY =
      new Inventory(
          List.of(
              device("gpu-0", List.of()),
              device("gpu-1", List.of()),
              device("shared-0", List.of())
                  .shared(Map.of("memory", Quantity.parse("80Gi")), Map.of()),
              device("gpu-2", slices(7)),
              device("mig-a", slices(4)),
              device("mig-b", slices(3)),
              device("mig-c", slices(4))),
          List.of(new CounterSet("gpu-2-counters", Map.of("slices", Quantity.of(7)))),
          List.of());

  static final ClaimRef OLD = new ClaimRef("team", "u-old", "old");
  static final ClaimRef OTHER = new ClaimRef("team", "u-other", "other");

  static Stream<Arguments> cases() {
    return Stream.of(
        row("a free device", Set.of("gpu-0"), List.of(), null),
        row(
            "a device another claim holds",
            Set.of("gpu-0"),
            List.of(held(OLD, "gpu-0")),
            "device \"gpu-0\" is still prepared for claim team/old (uid u-old)"),
        row(
            "the first conflict in device order, naming the holder",
            Set.of("gpu-1", "gpu-0"),
            List.of(held(OTHER, "gpu-1"), held(OLD, "gpu-0")),
            "device \"gpu-0\" is still prepared for claim team/old (uid u-old)"),
        row(
            "the claim's own entry (rebuilt from its spec) is no other holder",
            Set.of("gpu-0"),
            List.of(held(new ClaimRef("", "u-new", "u-new"), "gpu-0")),
            null),
        row("another claim's other device", Set.of("gpu-0"), List.of(held(OLD, "gpu-1")), null),
        row(
            "a shareable device many claims hold",
            Set.of("shared-0"),
            List.of(held(OLD, "shared-0"), held(OTHER, "shared-0")),
            null),
        row(
            "a device not in the inventory (any more) is exclusive",
            Set.of("gpu-9"),
            List.of(held(OLD, "gpu-9")),
            "device \"gpu-9\" is still prepared for claim team/old (uid u-old)"),
        row(
            "a partition of a whole GPU another claim holds",
            Set.of("mig-b"),
            List.of(held(OLD, "gpu-2")),
            "device \"mig-b\" needs slices 3 of counter set \"gpu-2-counters\", which has 7, while"
                + " device \"gpu-2\" of claim team/old (uid u-old) still holds 7"),
        row(
            "the whole GPU while a partition is held",
            Set.of("gpu-2"),
            List.of(held(OLD, "mig-a")),
            "device \"gpu-2\" needs slices 7 of counter set \"gpu-2-counters\", which has 7, while"
                + " device \"mig-a\" of claim team/old (uid u-old) still holds 4"),
        row(
            "two partitions that fit side by side",
            Set.of("mig-b"),
            List.of(held(OLD, "mig-a")),
            null),
        row(
            "two partitions that overlap",
            Set.of("mig-c"),
            List.of(held(OLD, "mig-a")),
            "device \"mig-c\" needs slices 4 of counter set \"gpu-2-counters\", which has 7, while"
                + " device \"mig-a\" of claim team/old (uid u-old) still holds 4"),
        row(
            "nothing wanted (adminAccess results only)",
            Set.of(),
            List.of(held(OLD, "gpu-0")),
            null));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void conflict(String name, Set<String> wanted, List<DeviceFence.Holder> others, String expected) {
    assertThat(DeviceFence.conflict("u-new", wanted, others, INVENTORY))
        .isEqualTo(Optional.ofNullable(expected));
  }

  @Test
  void theDevicesOfACounterSetAreContestedTogether() {
    assertThat(DeviceFence.contested(Set.of("gpu-0"), INVENTORY)).containsExactly("gpu-0");
    assertThat(DeviceFence.contested(Set.of("mig-b", "gpu-9"), INVENTORY))
        .containsExactly("gpu-2", "gpu-9", "mig-a", "mig-b", "mig-c");
  }

  @Test
  void aClaimTakesItsDevicesOfThisDriverAndPoolButNotThoseWithAdminAccess() {
    ClaimFixture c =
        claim("c")
            .result("a", "gpu-0")
            .result("b", "gpu-1")
            .adminAccess()
            .result("c", ClaimFixture.DRIVER, "node-z", "gpu-2")
            .result("d", "other.example.com", ClaimFixture.NODE, "nic-0")
            .result("e", "shared-0")
            .result("f", "shared-0");

    assertThat(DeviceFence.taken(c.build(), ClaimFixture.DRIVER, ClaimFixture.NODE))
        .containsExactly("gpu-0", "shared-0");
    assertThat(
            DeviceFence.taken(
                claim("u").unallocated().build(), ClaimFixture.DRIVER, ClaimFixture.NODE))
        .isEmpty();
  }

  private static Arguments row(
      String name, Set<String> wanted, List<DeviceFence.Holder> others, String expected) {
    return Arguments.of(name, wanted, others, expected);
  }

  private static DeviceFence.Holder held(ClaimRef claim, String... devices) {
    return new DeviceFence.Holder(claim, Set.of(devices));
  }

  private static NodeDevice device(String name, List<NodeDevice.CounterConsumption> counters) {
    return new NodeDevice(
        name, Map.of(), Map.of(), counters, NodeDevice.Health.HEALTHY, "", List.of(), Map.of());
  }

  private static List<NodeDevice.CounterConsumption> slices(long n) {
    return List.of(
        new NodeDevice.CounterConsumption("gpu-2-counters", Map.of("slices", Quantity.of(n))));
  }
}
