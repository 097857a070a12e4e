package io.kdra.core.testing;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttributeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacityBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import java.util.ArrayList;
import java.util.List;

/**
 * Small valid {@code resource.k8s.io/v1} objects for tests; each call returns a fresh, mutable
 * object that tests may break one field at a time.
 */
public final class Fixtures {

  public static final String DRIVER = "gpu.example.com";

  private Fixtures() {}

  /** A node-local slice {@code node-a-gpu} of driver {@code gpu.example.com} with one device. */
  public static ResourceSlice slice(Device... devices) {
    List<Device> list =
        new ArrayList<>(devices.length == 0 ? List.of(device("gpu-0")) : List.of(devices));
    return new ResourceSliceBuilder()
        .withNewMetadata()
        .withName("node-a-gpu")
        .endMetadata()
        .withNewSpec()
        .withDriver(DRIVER)
        .withNodeName("node-a")
        .withNewPool()
        .withName("node-a")
        .withGeneration(1L)
        .withResourceSliceCount(1L)
        .endPool()
        .withDevices(list)
        .endSpec()
        .build();
  }

  /** A device with a string attribute {@code model} and a capacity {@code memory}. */
  public static Device device(String name) {
    return new DeviceBuilder()
        .withName(name)
        .addToAttributes("model", stringAttribute("H100"))
        .addToCapacity(
            "memory", new DeviceCapacityBuilder().withValue(new Quantity("80Gi")).build())
        .build();
  }

  public static DeviceAttribute stringAttribute(String value) {
    return new DeviceAttributeBuilder().withString(value).build();
  }

  public static DeviceAttribute intAttribute(long value) {
    return new DeviceAttributeBuilder().withInt(value).build();
  }

  public static DeviceAttribute boolAttribute(boolean value) {
    return new DeviceAttributeBuilder().withBool(value).build();
  }

  public static DeviceAttribute versionAttribute(String value) {
    return new DeviceAttributeBuilder().withVersion(value).build();
  }

  /** An exact request for one device of class {@code gpu}. */
  public static DeviceRequest request(String name) {
    return new DeviceRequestBuilder()
        .withName(name)
        .withNewExactly()
        .withDeviceClassName("gpu")
        .endExactly()
        .build();
  }

  /** Claim {@code ns/claim} with the given requests (one request {@code gpu} by default). */
  public static ResourceClaim claim(DeviceRequest... requests) {
    List<DeviceRequest> list =
        new ArrayList<>(requests.length == 0 ? List.of(request("gpu")) : List.of(requests));
    return new ResourceClaimBuilder()
        .withNewMetadata()
        .withNamespace("ns")
        .withName("claim")
        .endMetadata()
        .withNewSpec()
        .withNewDevices()
        .withRequests(list)
        .endDevices()
        .endSpec()
        .build();
  }

  /** Class {@code gpu} selecting the driver's devices. */
  public static DeviceClass deviceClass() {
    return new DeviceClassBuilder()
        .withNewMetadata()
        .withName("gpu")
        .endMetadata()
        .withNewSpec()
        .addNewSelector()
        .withNewCel()
        .withExpression("device.driver == \"" + DRIVER + "\"")
        .endCel()
        .endSelector()
        .endSpec()
        .build();
  }
}
