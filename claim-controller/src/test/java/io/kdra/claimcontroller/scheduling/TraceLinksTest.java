package io.kdra.claimcontroller.scheduling;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.kdra.claimcontroller.domain.Kdra;
import java.util.List;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;

/** The slices an allocation's devices came from, for the allocate span's links. */
class TraceLinksTest {

  private static ResourceSlice slice(String name, String driver, String pool, String... devices) {
    var spec =
        new ResourceSliceBuilder()
            .withNewMetadata()
            .withName(name)
            .addToAnnotations(Kdra.TRACE_ANNOTATION, "tp-" + name)
            .endMetadata()
            .withNewSpec()
            .withDriver(driver)
            .withNewPool()
            .withName(pool)
            .withGeneration(1L)
            .withResourceSliceCount(1L)
            .endPool();
    for (String d : devices) {
      spec.addNewDevice().withName(d).endDevice();
    }
    return spec.endSpec().build();
  }

  private static final List<ResourceSlice> SLICES =
      List.of(
          slice("a-1", "gpu.example.com", "node-a", "gpu-0", "gpu-1"),
          slice("a-2", "gpu.example.com", "node-a", "gpu-2"),
          slice("b-1", "gpu.example.com", "node-b", "gpu-0"),
          slice("nic-a", "nic.example.com", "node-a", "gpu-0"),
          slice("bare", "gpu.example.com", "node-c"));

  /** As {@link ClusterView#poolSlices} answers by default, counting the pools asked for. */
  private final List<String> asked = new java.util.ArrayList<>();

  private final BiFunction<String, String, List<ResourceSlice>> poolSlices =
      (driver, pool) -> {
        asked.add(driver + "/" + pool);
        return SLICES.stream().filter(s -> TraceLinks.ofPool(s, driver, pool)).toList();
      };

  private static AllocationResult allocated(String... driverPoolDevice) {
    var devices = new AllocationResultBuilder().withNewDevices();
    for (String d : driverPoolDevice) {
      String[] f = d.split(" ");
      devices
          .addNewResult()
          .withRequest("gpu")
          .withDriver(f[0])
          .withPool(f[1])
          .withDevice(f[2])
          .endResult();
    }
    return devices.endDevices().build();
  }

  @Test
  void theSliceListingEachDeviceOfItsDriversPoolIsLinkedOnce() {
    AllocationResult a =
        allocated(
            "gpu.example.com node-a gpu-2",
            "gpu.example.com node-a gpu-0",
            "gpu.example.com node-a gpu-1",
            "gpu.example.com node-b gpu-0");

    assertThat(TraceLinks.ofSlices(poolSlices, a)).containsExactly("tp-a-2", "tp-a-1", "tp-b-1");
    assertThat(asked).containsOnly("gpu.example.com/node-a", "gpu.example.com/node-b");
  }

  @Test
  void anotherDriversPoolOfTheSameNameIsNotLinked() {
    assertThat(TraceLinks.ofSlices(poolSlices, allocated("nic.example.com node-a gpu-0")))
        .containsExactly("tp-nic-a");
  }

  @Test
  void aDeviceNoSliceListsOrNoAllocationLinksNothing() {
    assertThat(TraceLinks.ofSlices(poolSlices, allocated("gpu.example.com node-c gpu-0")))
        .isEmpty();
    assertThat(TraceLinks.ofSlices(poolSlices, null)).isEmpty();
    assertThat(TraceLinks.ofSlices(poolSlices, new AllocationResult())).isEmpty();
  }
}
