package io.kdra.devicedriver.testing;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAllocationConfiguration;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.OpaqueDeviceConfiguration;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatus;
import io.kdra.devicedriver.plugin.ClaimRef;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds allocated ResourceClaims for tests: {@code claim("c1").result("gpu", "gpu-0").build()}.
 */
public final class ClaimFixture {
  public static final String DRIVER = "gpu.kdra.io";
  public static final String NODE = "node-a";

  private String namespace = "default";
  private final String name;
  private String uid;
  private boolean allocated = true;
  private final List<DeviceRequestAllocationResult> results = new ArrayList<>();
  private final List<DeviceAllocationConfiguration> configs = new ArrayList<>();
  private final Map<String, String> annotations = new HashMap<>();
  private final List<String> reservedFor = new ArrayList<>();

  private ClaimFixture(String name) {
    this.name = name;
    this.uid = "uid-" + name;
  }

  /** A claim named {@code name} with UID {@code uid-<name>} in namespace default. */
  public static ClaimFixture claim(String name) {
    return new ClaimFixture(name);
  }

  public ClaimFixture uid(String value) {
    uid = value;
    return this;
  }

  public ClaimFixture namespace(String value) {
    namespace = value;
    return this;
  }

  public ClaimFixture unallocated() {
    allocated = false;
    return this;
  }

  public ClaimFixture annotation(String key, String value) {
    annotations.put(key, value);
    return this;
  }

  /** Reserves the claim for a pod of that name (in its namespace). */
  public ClaimFixture reservedFor(String pod) {
    reservedFor.add(pod);
    return this;
  }

  /** A result of this driver on this node. */
  public ClaimFixture result(String request, String device) {
    return result(request, DRIVER, NODE, device);
  }

  public ClaimFixture result(String request, String driver, String pool, String device) {
    DeviceRequestAllocationResult r = new DeviceRequestAllocationResult();
    r.setRequest(request);
    r.setDriver(driver);
    r.setPool(pool);
    r.setDevice(device);
    results.add(r);
    return this;
  }

  /** Marks the last result as allocated with {@code adminAccess: true}. */
  public ClaimFixture adminAccess() {
    results.get(results.size() - 1).setAdminAccess(true);
    return this;
  }

  /**
   * A share of a shared device of this driver on this node, with the allocator's accounting ({@code
   * consumed}: capacity name to quantity).
   */
  public ClaimFixture share(
      String request, String device, String shareId, Map<String, String> consumed) {
    result(request, device);
    DeviceRequestAllocationResult r = results.get(results.size() - 1);
    r.setShareID(shareId);
    Map<String, io.fabric8.kubernetes.api.model.Quantity> q = new LinkedHashMap<>();
    consumed.forEach((k, v) -> q.put(k, new io.fabric8.kubernetes.api.model.Quantity(v)));
    r.setConsumedCapacity(q);
    return this;
  }

  /** An opaque config of this driver. */
  public ClaimFixture config(String source, List<String> requests, Object parameters) {
    return config(source, requests, DRIVER, parameters);
  }

  public ClaimFixture config(
      String source, List<String> requests, String driver, Object parameters) {
    DeviceAllocationConfiguration c = new DeviceAllocationConfiguration();
    c.setSource(source);
    c.setRequests(new ArrayList<>(requests));
    OpaqueDeviceConfiguration o = new OpaqueDeviceConfiguration();
    o.setDriver(driver);
    o.setParameters(parameters);
    c.setOpaque(o);
    configs.add(c);
    return this;
  }

  /** The kubelet's reference to this claim. */
  public ClaimRef ref() {
    return new ClaimRef(namespace, uid, name);
  }

  public ResourceClaim build() {
    ResourceClaim claim = new ResourceClaim();
    ObjectMeta meta = new ObjectMeta();
    meta.setName(name);
    meta.setNamespace(namespace);
    meta.setUid(uid);
    if (!annotations.isEmpty()) {
      meta.setAnnotations(new HashMap<>(annotations));
    }
    claim.setMetadata(meta);
    if (allocated) {
      DeviceAllocationResult devices = new DeviceAllocationResult();
      devices.setResults(new ArrayList<>(results));
      devices.setConfig(new ArrayList<>(configs));
      AllocationResult allocation = new AllocationResult();
      allocation.setDevices(devices);
      ResourceClaimStatus status = new ResourceClaimStatus();
      status.setAllocation(allocation);
      List<ResourceClaimConsumerReference> pods = new ArrayList<>();
      for (String pod : reservedFor) {
        ResourceClaimConsumerReference ref = new ResourceClaimConsumerReference();
        ref.setResource("pods");
        ref.setName(pod);
        ref.setUid("uid-" + pod);
        pods.add(ref);
      }
      if (!pods.isEmpty()) {
        status.setReservedFor(pods);
      }
      claim.setStatus(status);
    }
    return claim;
  }

  /** A GpuConfig parameters object. */
  public static Map<String, Object> gpuConfig(Map<String, Object> sharing) {
    Map<String, Object> p = new LinkedHashMap<>();
    p.put("apiVersion", "resource.kdra.io/v1alpha1");
    p.put("kind", "GpuConfig");
    if (sharing != null) {
      p.put("sharing", sharing);
    }
    return p;
  }
}
