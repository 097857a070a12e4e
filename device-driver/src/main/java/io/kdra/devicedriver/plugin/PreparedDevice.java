package io.kdra.devicedriver.plugin;

import java.util.List;

/**
 * One prepared device as the kubelet needs it: the claim requests it serves (base request names,
 * empty = all), its pool and name, and the CDI device ids the container runtime injects.
 */
public record PreparedDevice(
    List<String> requestNames, String poolName, String deviceName, List<String> cdiDeviceIds) {
  public PreparedDevice {
    requestNames = List.copyOf(requestNames);
    cdiDeviceIds = List.copyOf(cdiDeviceIds);
  }
}
