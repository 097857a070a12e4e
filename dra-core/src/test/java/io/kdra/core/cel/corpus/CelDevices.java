package io.kdra.core.cel.corpus;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import java.util.List;

/** The devices the CEL differential test evaluates expressions against. */
public final class CelDevices {

  public static final String DRIVER = "gpu.kdra.io";

  private CelDevices() {}

  /** A device with attributes of every type, a unicode string and two domains. */
  public static Device rich() {
    return new DeviceBuilder()
        .withName("rich")
        .addToAttributes("model", string("H100"))
        .addToAttributes("family", string("hopper-é"))
        .addToAttributes("uuid", string("GPU-0f1e2d3c"))
        .addToAttributes("driverVersion", version("550.54.15"))
        .addToAttributes("numaNode", integer(1))
        .addToAttributes("cores", integer(132))
        .addToAttributes("migCapable", bool(true))
        .addToAttributes("other.kdra.io/family", string("accel"))
        .addToCapacity("memory", capacity("80Gi"))
        .addToCapacity("cores", capacity("132"))
        .withAllowMultipleAllocations(true)
        .build();
  }

  /** A device without most attributes: reading them is an error. */
  public static Device sparse() {
    return new DeviceBuilder()
        .withName("sparse")
        .addToAttributes("model", string("T4"))
        .addToAttributes("driverVersion", version("1.0.0-alpha"))
        .addToAttributes("migCapable", bool(false))
        .addToCapacity("memory", capacity("500m"))
        .build();
  }

  public static List<Device> all() {
    return List.of(rich(), sparse());
  }

  private static DeviceAttribute string(String v) {
    DeviceAttribute a = new DeviceAttribute();
    a.setString(v);
    return a;
  }

  private static DeviceAttribute version(String v) {
    DeviceAttribute a = new DeviceAttribute();
    a.setVersion(v);
    return a;
  }

  private static DeviceAttribute integer(long v) {
    DeviceAttribute a = new DeviceAttribute();
    a.setInt(v);
    return a;
  }

  private static DeviceAttribute bool(boolean v) {
    DeviceAttribute a = new DeviceAttribute();
    a.setBool(v);
    return a;
  }

  private static DeviceCapacity capacity(String v) {
    DeviceCapacity c = new DeviceCapacity();
    c.setValue(new Quantity(v));
    return c;
  }
}
