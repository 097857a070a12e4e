package io.kdra.computeclassbridge;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttributeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.kdra.computeclassbridge.catalog.AcceleratorCatalog;
import io.kdra.computeclassbridge.model.ComputeClass;
import io.kdra.computeclassbridge.model.Priority;
import io.kdra.core.cel.CelDevice;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/** Tiny fixture factories shared by the bridge's tests. */
public final class TestData {

  private TestData() {}

  /** The shipped catalog with every profile enabled. */
  public static AcceleratorCatalog shippedCatalog() {
    try (InputStream in =
        TestData.class.getClassLoader().getResourceAsStream("catalog/accelerators.yaml")) {
      return AcceleratorCatalog.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The shipped catalog as the bridge uses it by default: our own drivers only. */
  public static AcceleratorCatalog defaultCatalog() {
    return shippedCatalog().using(List.of("kdra-gpu", "kdra-tpu"), Map.of());
  }

  /** A ComputeClass with a name, a uid and the priorities in order. */
  public static ComputeClass computeClass(String name, Priority... priorities) {
    ComputeClass cc = new ComputeClass();
    cc.setMetadata(
        new ObjectMetaBuilder().withName(name).withUid("uid-" + name).withGeneration(1L).build());
    cc.getSpec().setPriorities(new java.util.ArrayList<>(List.of(priorities)));
    return cc;
  }

  /** The seed's example: one A100 (40GB), else two L4s. */
  public static ComputeClass a100OrTwoL4(String name) {
    return computeClass(name, Priority.gpu("nvidia-tesla-a100", 1), Priority.gpu("nvidia-l4", 2));
  }

  /** A device with string attributes, as a selector sees it. */
  public static CelDevice celDevice(String driver, Map<String, String> attributes) {
    return CelDevice.of(driver, device("dev-0", attributes));
  }

  /** A ResourceSlice device with string attributes. */
  public static Device device(String name, Map<String, String> attributes) {
    DeviceBuilder b = new DeviceBuilder().withName(name);
    attributes.forEach(
        (k, v) -> b.addToAttributes(k, new DeviceAttributeBuilder().withString(v).build()));
    return b.build();
  }
}
