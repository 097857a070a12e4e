package io.kdra.benchmarks;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import io.kdra.core.cel.CelDevice;
import io.kdra.core.cel.CompiledSelector;
import io.kdra.core.cel.DeviceSelectorEnvironment;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One selector evaluated against one device, the inner loop of allocation. The device is built once
 * (as the allocator does per device), the program comes from the environment's cache.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class CelSelectorBenchmark {

  /** Selectors of increasing weight; the names are what docs/dev/benchmarks.md reports. */
  @Param({"driver", "memory", "model-in-list", "version", "combined"})
  public String selector;

  private CompiledSelector compiled;
  private CelDevice device;
  private DeviceSelectorEnvironment environment;
  private String expression;

  @Setup
  public void setUp() {
    expression =
        switch (selector) {
          case "driver" -> "device.driver == \"gpu.example.com\"";
          case "memory" ->
              "device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"40Gi\")) >= 0";
          case "model-in-list" ->
              "device.attributes[\"gpu.example.com\"].model in [\"A100\", \"H100\"]";
          case "version" ->
              "device.attributes[\"gpu.example.com\"].driverVersion.isGreaterThan(semver(\"535.0.0\"))";
          case "combined" ->
              "device.driver == \"gpu.example.com\""
                  + " && device.attributes[\"gpu.example.com\"].model == \"H100\""
                  + " && device.attributes[\"gpu.example.com\"].driverVersion.isGreaterThan(semver(\"535.0.0\"))"
                  + " && device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"40Gi\")) >= 0";
          default -> throw new IllegalArgumentException(selector);
        };
    environment = DeviceSelectorEnvironment.create();
    compiled = environment.compile(expression);
    DeviceAttribute model = new DeviceAttribute();
    model.setString("H100");
    DeviceAttribute version = new DeviceAttribute();
    version.setVersion("550.54.15");
    DeviceCapacity memory = new DeviceCapacity();
    memory.setValue(new Quantity("80Gi"));
    device =
        CelDevice.of(
            "gpu.example.com",
            new DeviceBuilder()
                .withName("gpu-0")
                .addToAttributes("model", model)
                .addToAttributes("driverVersion", version)
                .addToCapacity("memory", memory)
                .build());
    if (!compiled.matches(device)) {
      throw new IllegalStateException("benchmark selector must match: " + expression);
    }
  }

  /** Evaluation of an already compiled selector. */
  @Benchmark
  public boolean evaluate() {
    return compiled.matches(device);
  }

  /** Cache lookup plus evaluation, as a caller that only keeps expression text pays. */
  @Benchmark
  public boolean lookupAndEvaluate() {
    return environment.compile(expression).matches(device);
  }
}
