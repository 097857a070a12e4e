package io.kdra.core.cel;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import io.kdra.core.testing.Fixtures;

/** The environment and the two devices the selector tests evaluate against. */
final class SelectorDevices {

  private SelectorDevices() {}

  static final String DRIVER = "gpu.example.com";
  static final DeviceSelectorEnvironment ENV = DeviceSelectorEnvironment.create();

  /** An 80Gi H100 like the facts sheet's example slice, plus a few typed attributes. */
  static CelDevice h100() {
    Device device =
        new DeviceBuilder()
            .withName("gpu-0")
            .addToAttributes("model", Fixtures.stringAttribute("H100"))
            .addToAttributes("family", Fixtures.stringAttribute("hopper"))
            .addToAttributes("driverVersion", Fixtures.versionAttribute("550.54.15"))
            .addToAttributes("numaNode", Fixtures.intAttribute(0))
            .addToAttributes("migCapable", Fixtures.boolAttribute(true))
            .addToAttributes(
                "resource.kubernetes.io/pcieRoot", Fixtures.stringAttribute("pci0000:40"))
            .addToAttributes("other.example.com/family", Fixtures.stringAttribute("accel"))
            .addToCapacity("memory", capacity("80Gi"))
            .addToCapacity("cores", capacity("132"))
            .build();
    return CelDevice.of(DRIVER, device);
  }

  static CelDevice smallGpu() {
    Device device =
        new DeviceBuilder()
            .withName("gpu-1")
            .addToAttributes("model", Fixtures.stringAttribute("T4"))
            .addToAttributes("driverVersion", Fixtures.versionAttribute("535.1.0"))
            .addToCapacity("memory", capacity("16Gi"))
            .build();
    return CelDevice.of(DRIVER, device);
  }

  static DeviceCapacity capacity(String value) {
    DeviceCapacity c = new DeviceCapacity();
    c.setValue(new Quantity(value));
    return c;
  }
}
