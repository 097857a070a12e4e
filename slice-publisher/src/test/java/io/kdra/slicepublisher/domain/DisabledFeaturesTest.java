package io.kdra.slicepublisher.domain;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicyBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.CounterBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSetBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacityBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCounterConsumptionBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaintBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.kdra.core.model.NewerFields;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What an older API server (1.34, 1.35: these gates off by default) drops from a slice, and the
 * features the publisher then names, as upstream's ResourceSlice controller does.
 */
class DisabledFeaturesTest {

  /** A slice with a field of every gated feature the publisher writes. */
  private static ResourceSlice everything() {
    Device device =
        new DeviceBuilder()
            .withName("gpu-0")
            .addToCapacity(
                "memory",
                new DeviceCapacityBuilder()
                    .withValue(new Quantity("24Gi"))
                    .withRequestPolicy(
                        new CapacityRequestPolicyBuilder().withDefault(new Quantity("1Gi")).build())
                    .build())
            .withTaints(
                new DeviceTaintBuilder()
                    .withKey("gpu.kdra.io/unhealthy")
                    .withEffect("NoSchedule")
                    .build())
            .withConsumesCounters(
                new DeviceCounterConsumptionBuilder()
                    .withCounterSet("gpu-0-counters")
                    .withCounters(
                        Map.of(
                            "memory", new CounterBuilder().withValue(new Quantity("24Gi")).build()))
                    .build())
            .withBindingConditions("gpu.kdra.io/attached")
            .withBindingFailureConditions("gpu.kdra.io/attach-failed")
            .withAllowMultipleAllocations(true)
            .build();
    ResourceSlice slice =
        new ResourceSliceBuilder()
            .withNewMetadata()
            .withName("n1-gpu.kdra.io-abc")
            .endMetadata()
            .withNewSpec()
            .withDriver("gpu.kdra.io")
            .withNodeName("n1")
            .withNewPool()
            .withName("n1")
            .withGeneration(1L)
            .withResourceSliceCount(1L)
            .endPool()
            .withSharedCounters(
                new CounterSetBuilder()
                    .withName("gpu-0-counters")
                    .withCounters(
                        Map.of(
                            "memory", new CounterBuilder().withValue(new Quantity("24Gi")).build()))
                    .build())
            .withDevices(device)
            .endSpec()
            .build();
    NewerFields.setSkipNodeOperations(slice.getSpec(), List.of("*"));
    return slice;
  }

  /** {@link #everything()} as a server stores it that dropped what {@code drop} removes. */
  private static ResourceSlice storedWithout(Consumer<ResourceSlice> drop) {
    ResourceSlice stored = everything();
    drop.accept(stored);
    return stored;
  }

  private static Device device(ResourceSlice s) {
    return s.getSpec().getDevices().get(0);
  }

  static Stream<Arguments> drops() {
    return Stream.of(
        Arguments.of("nothing dropped", storedWithout(s -> {}), List.of()),
        Arguments.of(
            "a taint's timeAdded defaulted is no drop",
            storedWithout(s -> device(s).getTaints().get(0).setTimeAdded("2026-12-06T07:00:00Z")),
            List.of()),
        Arguments.of(
            "taints (1.34, 1.35)",
            storedWithout(s -> device(s).setTaints(null)),
            List.of("DRADeviceTaints")),
        Arguments.of(
            "sharedCounters",
            storedWithout(s -> s.getSpec().setSharedCounters(null)),
            List.of("DRAPartitionableDevices")),
        Arguments.of(
            "consumesCounters",
            storedWithout(s -> device(s).setConsumesCounters(null)),
            List.of("DRAPartitionableDevices")),
        Arguments.of(
            "binding conditions",
            storedWithout(
                s -> {
                  device(s).setBindingConditions(null);
                  device(s).setBindingFailureConditions(null);
                }),
            List.of("DRADeviceBindingConditions")),
        Arguments.of(
            "allowMultipleAllocations and the capacity's request policy",
            storedWithout(
                s -> {
                  device(s).setAllowMultipleAllocations(null);
                  device(s).getCapacity().get("memory").setRequestPolicy(null);
                }),
            List.of("DRAConsumableCapacity")),
        Arguments.of(
            "skipNodeOperations (1.37 with its alpha gate off)",
            storedWithout(s -> NewerFields.setSkipNodeOperations(s.getSpec(), List.of())),
            List.of("DRAOptionalNodeOperations")),
        Arguments.of(
            "all of what a default 1.34 server drops, in upstream's order",
            storedWithout(
                s -> {
                  s.getSpec().setSharedCounters(null);
                  Device d = device(s);
                  d.setTaints(null);
                  d.setConsumesCounters(null);
                  d.setBindingConditions(null);
                  d.setBindingFailureConditions(null);
                  d.setAllowMultipleAllocations(null);
                  NewerFields.setSkipNodeOperations(s.getSpec(), List.of());
                }),
            List.of(
                "DRADeviceTaints",
                "DRAPartitionableDevices",
                "DRADeviceBindingConditions",
                "DRAConsumableCapacity",
                "DRAOptionalNodeOperations")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("drops")
  void namesTheFeaturesWhoseFieldsTheServerDropped(
      String what, ResourceSlice stored, List<String> disabled) {
    assertThat(DisabledFeatures.between(everything(), stored)).isEqualTo(disabled);
  }

  @Test
  void namesNothingForASliceWithoutGatedFields() {
    ResourceSlice plain = everything();
    plain.getSpec().setSharedCounters(null);
    NewerFields.setSkipNodeOperations(plain.getSpec(), List.of());
    plain.getSpec().setDevices(List.of(new DeviceBuilder().withName("gpu-0").build()));
    assertThat(DisabledFeatures.between(plain, plain)).isEmpty();
  }
}
