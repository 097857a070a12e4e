package io.kdra.core.alloc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Named.named;

import java.util.List;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class AllocatorFeaturesTest {

  private static final List<String> ALL = AllocatorFeatures.GATES;

  /**
   * Kubernetes 1.37's defaults: the alpha gates DRADerivedAttributes and compatibility groups off.
   */
  private static final List<String> DEFAULT_ON =
      List.of(
          "DRAAdminAccess",
          "DRAConsumableCapacity",
          "DRADeviceBindingConditions",
          "DRADeviceTaints",
          "DRAFractionalCapacityRange",
          "DRAPartitionableDevices",
          "DRAPrioritizedList");

  /** Columns: base, --feature-gates value, the enabled gates after. */
  static Stream<Arguments> gates() {
    return Stream.of(
        Arguments.of(
            named("empty: the base unchanged", AllocatorFeatures.defaults()), "", DEFAULT_ON),
        Arguments.of(
            named("one gate off", AllocatorFeatures.defaults()),
            "DRAPrioritizedList=false",
            DEFAULT_ON.subList(0, 6)),
        Arguments.of(
            named("the alpha gates on", AllocatorFeatures.defaults()),
            "DRADerivedAttributes=true,DRADeviceCompatibilityGroups=true,"
                + "DRAOptionalNodeOperations=true",
            ALL),
        Arguments.of(
            named("two on over none, blanks and empty entries ignored", AllocatorFeatures.none()),
            " DRAAdminAccess=true, ,DRADeviceTaints=t ,",
            List.of("DRAAdminAccess", "DRADeviceTaints")),
        Arguments.of(
            named("the later entry for a gate wins", AllocatorFeatures.none()),
            "DRAConsumableCapacity=true,DRAConsumableCapacity=false",
            List.of()),
        Arguments.of(
            named("Go's booleans", AllocatorFeatures.none()),
            "DRAAdminAccess=1,DRADeviceTaints=TRUE,DRAPrioritizedList=True,"
                + "DRAPartitionableDevices=T",
            List.of(
                "DRAAdminAccess",
                "DRADeviceTaints",
                "DRAPartitionableDevices",
                "DRAPrioritizedList")),
        Arguments.of(
            named("every gate off", AllocatorFeatures.defaults()),
            "DRAAdminAccess=false,DRAConsumableCapacity=0,DRADeviceBindingConditions=f,"
                + "DRADeviceTaints=F,DRAFractionalCapacityRange=0,DRAPartitionableDevices=FALSE,"
                + "DRAPrioritizedList=False",
            List.of()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("gates")
  void gatesSetTheirFeatures(AllocatorFeatures base, String spec, List<String> enabled) {
    assertThat(base.withGates(spec).enabledNames()).isEqualTo(enabled);
  }

  /** Columns: --feature-gates value, the error. */
  static Stream<Arguments> badGates() {
    return Stream.of(
        Arguments.of(
            named("an unknown gate names those known", "DRAFancy=true"),
            "unrecognized feature gate: DRAFancy (known: DRAAdminAccess, DRAConsumableCapacity,"
                + " DRADerivedAttributes, DRADeviceBindingConditions, DRADeviceCompatibilityGroups,"
                + " DRADeviceTaints, DRAFractionalCapacityRange, DRAOptionalNodeOperations,"
                + " DRAPartitionableDevices, DRAPrioritizedList)"),
        Arguments.of(
            named("gate names are case-sensitive", "draadminaccess=true"),
            "unrecognized feature gate: draadminaccess (known: DRAAdminAccess,"
                + " DRAConsumableCapacity, DRADerivedAttributes, DRADeviceBindingConditions,"
                + " DRADeviceCompatibilityGroups, DRADeviceTaints, DRAFractionalCapacityRange,"
                + " DRAOptionalNodeOperations, DRAPartitionableDevices, DRAPrioritizedList)"),
        Arguments.of(named("no value", "DRAAdminAccess"), "missing bool value for DRAAdminAccess"),
        Arguments.of(
            named("not a bool", "DRAAdminAccess=yes"),
            "invalid value of DRAAdminAccess=yes: not a bool (true or false)"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badGates")
  void badGatesAreRefusedWithTheEntry(String spec, String message) {
    assertThatThrownBy(() -> AllocatorFeatures.defaults().withGates(spec))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(message);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("gateNames")
  void everyGateNameSwitchesItsOwnFeatureOnly(String gate) {
    assertThat(AllocatorFeatures.none().with(gate, true).enabledNames()).containsExactly(gate);
    assertThat(AllocatorFeatures.all().with(gate, false).enabledNames())
        .doesNotContain(gate)
        .hasSize(ALL.size() - 1);
  }

  /** Columns: upstream gate name, the component it switches. */
  static Stream<Arguments> gateComponents() {
    return Stream.of(
        Arguments.of("DRAAdminAccess", (Predicate<AllocatorFeatures>) f -> f.adminAccess()),
        Arguments.of(
            "DRAConsumableCapacity", (Predicate<AllocatorFeatures>) f -> f.consumableCapacity()),
        Arguments.of(
            "DRADerivedAttributes", (Predicate<AllocatorFeatures>) f -> f.derivedAttributes()),
        Arguments.of(
            "DRADeviceBindingConditions",
            (Predicate<AllocatorFeatures>) f -> f.bindingConditions()),
        Arguments.of(
            "DRADeviceCompatibilityGroups",
            (Predicate<AllocatorFeatures>) f -> f.compatibilityGroups()),
        Arguments.of("DRADeviceTaints", (Predicate<AllocatorFeatures>) f -> f.deviceTaints()),
        Arguments.of(
            "DRAFractionalCapacityRange",
            (Predicate<AllocatorFeatures>) f -> f.fractionalCapacityRange()),
        Arguments.of(
            "DRAOptionalNodeOperations",
            (Predicate<AllocatorFeatures>) f -> f.optionalNodeOperations()),
        Arguments.of(
            "DRAPartitionableDevices",
            (Predicate<AllocatorFeatures>) f -> f.partitionableDevices()),
        Arguments.of(
            "DRAPrioritizedList", (Predicate<AllocatorFeatures>) f -> f.prioritizedList()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("gateComponents")
  void everyGateNameSwitchesTheComponentTheAllocatorReads(
      String gate, Predicate<AllocatorFeatures> component) {
    assertThat(component.test(AllocatorFeatures.none().with(gate, true))).isTrue();
    assertThat(component.test(AllocatorFeatures.all().with(gate, false))).isFalse();
    assertThat(gateComponents()).hasSize(ALL.size());
  }

  @org.junit.jupiter.api.Test
  void theAlphaGatesAreOffByDefaultAsIn137() {
    assertThat(AllocatorFeatures.defaults().derivedAttributes()).isFalse();
    assertThat(AllocatorFeatures.defaults().compatibilityGroups()).isFalse();
    assertThat(AllocatorFeatures.defaults().optionalNodeOperations()).isFalse();
    assertThat(AllocatorFeatures.all().enabledNames()).isEqualTo(ALL);
  }

  /**
   * Upstream picks its experimental allocator when a gate only it supports is on (1.37.2:
   * DRADerivedAttributes, DRADeviceCompatibilityGroups, DRAOptionalNodeOperations,
   * DRAListTypeAttributes); decisions that differ between the two follow this.
   */
  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.CsvSource({
    "'', false",
    "DRAAdminAccess=false, false",
    "DRADerivedAttributes=true, true",
    "DRADeviceCompatibilityGroups=true, true",
    "DRAOptionalNodeOperations=true, true"
  })
  void experimentalWhenAGateOnlyTheExperimentalAllocatorSupportsIsOn(
      String gates, boolean experimental) {
    assertThat(AllocatorFeatures.defaults().withGates(gates).experimental())
        .isEqualTo(experimental);
  }

  static Stream<String> gateNames() {
    return ALL.stream();
  }
}
