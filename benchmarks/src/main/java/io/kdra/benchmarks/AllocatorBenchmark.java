package io.kdra.benchmarks;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.kdra.core.alloc.AllocatedState;
import io.kdra.core.alloc.AllocationSnapshot;
import io.kdra.core.alloc.Allocator;
import io.kdra.core.alloc.AllocatorFeatures;
import io.kdra.core.alloc.AllocatorOptions;
import io.kdra.core.alloc.ClaimOutcome;
import io.kdra.core.alloc.InMemoryDeviceClassLister;
import io.kdra.core.alloc.PodScheduler;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The allocator placing one pod (one claim) at a time on a 1,000-node cluster, first fit over
 * nodes in name order, each allocation consuming devices for the next, as {@code bin/dra-alloc}
 * and the claim-controller do. One benchmark invocation = one claim, so {@code thrpt} is claims
 * per second and {@code sample} gives per-claim latency percentiles. When the cluster is full the
 * state is reset (empty allocations) and filling starts again.
 *
 * <ul>
 *   <li>{@code single-gpu}: 1,000 nodes x 8 GPUs, 8,000 claims of one GPU with a CEL memory
 *       selector ({@code >= 40Gi}).
 *   <li>{@code pcie-4gpu}: 8-GPU nodes with two PCIe roots (4 GPUs each); claims of 4 GPUs with
 *       {@code matchAttribute} on {@code resource.kubernetes.io/pcieRoot} (GPUs alternate roots,
 *       so the search has to backtrack).
 *   <li>{@code first-available}: {@code firstAvailable} of one A100 or else two L4s; every node's
 *       A100 is already allocated, so the first choice fails on every node.
 * </ul>
 *
 * <p>Run (a few seconds per case): {@code ./mvnw -q -pl benchmarks -am package -DskipTests &&
 * java -jar benchmarks/target/benchmarks.jar AllocatorBenchmark}
 */
@State(Scope.Thread)
@BenchmarkMode({Mode.Throughput, Mode.SampleTime})
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(1)
public class AllocatorBenchmark {

  static final String DRIVER = "gpu.example.com";
  static final String MEM_40 =
      "device.capacity[\"" + DRIVER + "\"].memory.compareTo(quantity(\"40Gi\")) >= 0";

  @Param({"single-gpu", "pcie-4gpu", "first-available"})
  public String scenario;

  @Param({"1000"})
  public int nodes;

  private List<Node> nodeList;
  private AllocationSnapshot empty;
  private AllocationSnapshot snapshot;
  private AllocatorOptions options;
  private List<ResourceClaim> claims;
  private int next;

  @Setup(Level.Trial)
  public void setUp() {
    List<ResourceSlice> slices = new ArrayList<>();
    nodeList = new ArrayList<>();
    List<ResourceClaim> existing = new ArrayList<>();
    for (int n = 0; n < nodes; n++) {
      String name = String.format("node-%04d", n);
      nodeList.add(new NodeBuilder().withNewMetadata().withName(name).endMetadata().build());
      List<Device> devices = new ArrayList<>();
      for (int g = 0; g < 8; g++) {
        devices.add(gpu("gpu-" + g, "L4".equals(model(g)) ? "L4" : "A100", "pci" + (g % 2)));
      }
      if (scenario.equals("first-available")) {
        devices.add(gpu("a100", "A100", "pci0"));
        existing.add(allocated(name, "a100"));
      }
      slices.add(new ResourceSliceBuilder().withNewMetadata().withName(name + "-gpu")
          .endMetadata().withNewSpec().withDriver(DRIVER).withNodeName(name)
          .withNewPool().withName(name).withGeneration(1L).withResourceSliceCount(1L).endPool()
          .withDevices(devices).endSpec().build());
    }
    DeviceClass cls = new DeviceClassBuilder().withNewMetadata().withName("gpu").endMetadata()
        .withNewSpec().addNewSelector().withNewCel()
        .withExpression("device.driver == \"" + DRIVER + "\"").endCel().endSelector()
        .endSpec().build();
    empty = AllocationSnapshot.of(slices, InMemoryDeviceClassLister.of(cls),
        AllocatedState.fromClaims(existing));
    snapshot = empty;
    AtomicLong ids = new AtomicLong();
    options = AllocatorOptions.defaults(AllocatorFeatures.defaults(),
        () -> "00000000-0000-4000-8000-" + String.format("%012d", ids.incrementAndGet()));
    claims = new ArrayList<>();
    int count = switch (scenario) {
      case "single-gpu" -> nodes * 8;
      case "pcie-4gpu" -> nodes * 2;
      default -> nodes * 4;
    };
    for (int i = 0; i < count; i++) {
      claims.add(claim("c" + i));
    }
    next = 0;
  }

  /** With 8 A100s per node except in first-available, where the 8 are L4s. */
  private String model(int g) {
    return scenario.equals("first-available") ? "L4" : "A100";
  }

  private ResourceClaim claim(String name) {
    ResourceClaimBuilder b = new ResourceClaimBuilder().withNewMetadata().withName(name)
        .withNamespace("bench").endMetadata();
    return switch (scenario) {
      case "single-gpu" -> b.withNewSpec().withNewDevices().withRequests(new DeviceRequestBuilder()
          .withName("gpu").withNewExactly().withDeviceClassName("gpu").addNewSelector()
          .withNewCel().withExpression(MEM_40).endCel().endSelector().endExactly().build())
          .endDevices().endSpec().build();
      case "pcie-4gpu" -> b.withNewSpec().withNewDevices().withRequests(new DeviceRequestBuilder()
          .withName("gpu").withNewExactly().withDeviceClassName("gpu")
          .withAllocationMode("ExactCount").withCount(4L).endExactly().build())
          .addNewConstraint().withMatchAttribute("resource.kubernetes.io/pcieRoot").endConstraint()
          .endDevices().endSpec().build();
      default -> b.withNewSpec().withNewDevices().withRequests(firstAvailable())
          .endDevices().endSpec().build();
    };
  }

  private static DeviceRequest firstAvailable() {
    return new DeviceRequestBuilder().withName("gpu")
        .addNewFirstAvailable().withName("a100").withDeviceClassName("gpu")
        .addNewSelector().withNewCel().withExpression(
            "device.attributes[\"" + DRIVER + "\"].model == \"A100\"").endCel().endSelector()
        .endFirstAvailable()
        .addNewFirstAvailable().withName("two-l4").withDeviceClassName("gpu")
        .withAllocationMode("ExactCount").withCount(2L)
        .addNewSelector().withNewCel().withExpression(
            "device.attributes[\"" + DRIVER + "\"].model == \"L4\"").endCel().endSelector()
        .endFirstAvailable().build();
  }

  private static Device gpu(String name, String model, String root) {
    DeviceAttribute m = new DeviceAttribute();
    m.setString(model);
    DeviceAttribute r = new DeviceAttribute();
    r.setString(root);
    DeviceCapacity mem = new DeviceCapacity();
    mem.setValue(new Quantity("40Gi"));
    Device d = new Device();
    d.setName(name);
    d.setAttributes(Map.of("model", m, "resource.kubernetes.io/pcieRoot", r));
    d.setCapacity(Map.of("memory", mem));
    return d;
  }

  private static ResourceClaim allocated(String pool, String device) {
    ResourceClaim c = new ResourceClaimBuilder().withNewMetadata().withName("pre-" + pool)
        .withNamespace("bench").endMetadata().withNewStatus().withNewAllocation()
        .withNewDevices().addNewResult().withRequest("gpu").withDriver(DRIVER).withPool(pool)
        .withDevice(device).endResult().endDevices().endAllocation().endStatus().build();
    return c;
  }

  /** Allocates the next claim as its own pod; returns the chosen node (null: none). */
  @Benchmark
  public String allocateOnePod() {
    if (next == claims.size()) {
      snapshot = empty;
      next = 0;
    }
    ResourceClaim claim = claims.get(next++);
    PodScheduler.Placement p = PodScheduler.schedule(new Allocator(snapshot, options), nodeList,
        null, List.of(claim));
    if (!p.allocated()) {
      throw new IllegalStateException("benchmark claim not allocated: "
          + ((ClaimOutcome.NotAllocated) p.outcomes().get(0)).explanation().summary());
    }
    AllocationResult result = ((ClaimOutcome.Allocated) p.outcomes().get(0)).result();
    snapshot = snapshot.withAllocated(snapshot.allocated().plus(result));
    return p.node();
  }
}
