package io.kdra.kubectl;

import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.kdra.alloc.cli.Summary;
import java.util.stream.Collectors;

/** Short phrases the reports share. Pure. */
final class Words {

  private Words() {}

  /** {@code gpu: gpu.kdra.io/node-b/gpu-0, ...}: each request's device. */
  static String devices(AllocationResult allocation) {
    if (allocation.getDevices() == null || allocation.getDevices().getResults() == null) {
      return "no devices";
    }
    return allocation.getDevices().getResults().stream()
        .map(Words::device)
        .collect(Collectors.joining(", "));
  }

  private static String device(DeviceRequestAllocationResult r) {
    return r.getRequest() + ": " + r.getDriver() + "/" + r.getPool() + "/" + r.getDevice();
  }

  /** Where an allocation may be used: a node's name, any node, or a node selector in words. */
  static String where(AllocationResult allocation) {
    return Summary.where(allocation.getNodeSelector());
  }
}
