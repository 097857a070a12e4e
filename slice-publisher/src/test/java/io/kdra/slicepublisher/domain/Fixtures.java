package io.kdra.slicepublisher.domain;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.Counter;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSet;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSetBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttributeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacityBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCounterConsumptionBuilder;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

/** Tiny fixture factories for planning tests, with fluent with*() wrappers. */
public final class Fixtures {

  public static final String DRIVER = "gpu.kdra.io";
  public static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  private Fixtures() {}

  /** A healthy device with a model attribute and 80Gi memory. */
  public static Dev dev(String name) {
    return new Dev(
        new DeviceBuilder()
            .withName(name)
            .addToAttributes("model", new DeviceAttributeBuilder().withString("H100").build())
            .addToCapacity(
                "memory", new DeviceCapacityBuilder().withValue(new Quantity("80Gi")).build()),
        true,
        "");
  }

  /** {@code n} healthy devices gpu-000 ... */
  public static List<Dev> devs(int n) {
    return IntStream.range(0, n).mapToObj(i -> dev(String.format("gpu-%03d", i))).toList();
  }

  public static CounterSet counterSet(String name) {
    return new CounterSetBuilder()
        .withName(name)
        .withCounters(Map.of("memory", new Counter(new Quantity("80Gi"))))
        .build();
  }

  public static NodeInfo node(String name, Map<String, String> labels) {
    return new NodeInfo(name, "uid-" + name, labels);
  }

  public static NodeInfo node(String name) {
    return node(name, Map.of());
  }

  public static Inv inv(String node, List<Dev> devices) {
    return new Inv(DRIVER, node, devices, List.of(), T0);
  }

  /** A device under construction. */
  public record Dev(DeviceBuilder builder, boolean healthy, String message) {
    public Dev unhealthy(String why) {
      return new Dev(builder, false, why);
    }

    public Dev withAttribute(String key, String value) {
      builder.addToAttributes(key, new DeviceAttributeBuilder().withString(value).build());
      return this;
    }

    public Dev withMemory(String quantity) {
      builder.addToCapacity(
          "memory", new DeviceCapacityBuilder().withValue(new Quantity(quantity)).build());
      return this;
    }

    public Dev consuming(String set) {
      builder.addToConsumesCounters(
          new DeviceCounterConsumptionBuilder()
              .withCounterSet(set)
              .withCounters(Map.of("memory", new Counter(new Quantity("10Gi"))))
              .build());
      return this;
    }

    InventoryDevice build() {
      return new InventoryDevice(builder.build(), healthy, message);
    }
  }

  /** An inventory under construction. */
  public record Inv(
      String driver, String node, List<Dev> devices, List<CounterSet> counters, Instant at) {
    public Inv withDriver(String d) {
      return new Inv(d, node, devices, counters, at);
    }

    public Inv withCounters(CounterSet... sets) {
      return new Inv(driver, node, devices, List.of(sets), at);
    }

    public Inv receivedAt(Instant when) {
      return new Inv(driver, node, devices, counters, when);
    }

    public NodeInventory build() {
      List<InventoryDevice> built = new ArrayList<>();
      devices.forEach(d -> built.add(d.build()));
      return new NodeInventory(driver, node, 1, built, counters, at);
    }
  }
}
