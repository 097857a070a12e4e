package io.kdra.core.testing;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import java.util.ArrayList;
import java.util.List;

/** How the checker names claims and devices, and reads a claim's results. */
final class ClaimKeys {

  private ClaimKeys() {}

  /** A claim's allocation results; empty when it has none. */
  static List<DeviceRequestAllocationResult> results(ResourceClaim c) {
    if (c.getStatus() == null
        || c.getStatus().getAllocation() == null
        || c.getStatus().getAllocation().getDevices() == null
        || c.getStatus().getAllocation().getDevices().getResults() == null) {
      return List.of();
    }
    return c.getStatus().getAllocation().getDevices().getResults();
  }

  /** A result's device as driver/pool/name. */
  static String id(DeviceRequestAllocationResult r) {
    return r.getDriver() + "/" + r.getPool() + "/" + r.getDevice();
  }

  /** A claim as namespace/name. */
  static String key(ResourceClaim c) {
    return ns(c.getMetadata().getNamespace()) + "/" + c.getMetadata().getName();
  }

  /** The keys of the claims a pod uses, templates as {@code <pod>-<entry>}. */
  static List<String> claimKeys(Pod pod) {
    List<String> out = new ArrayList<>();
    if (pod.getSpec() == null || pod.getSpec().getResourceClaims() == null) {
      return out;
    }
    for (PodResourceClaim prc : pod.getSpec().getResourceClaims()) {
      String name =
          prc.getResourceClaimName() != null
              ? prc.getResourceClaimName()
              : pod.getMetadata().getName() + "-" + prc.getName();
      out.add(ns(pod.getMetadata().getNamespace()) + "/" + name);
    }
    return out;
  }

  private static String ns(String ns) {
    return ns == null ? "default" : ns;
  }

  /** The list, empty for null. */
  static List<String> list(List<String> l) {
    return l == null ? List.of() : l;
  }
}
