package io.kdra.devicedriver.status;

import io.fabric8.kubernetes.api.model.resource.v1.AllocatedDeviceStatus;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@link ClaimStatusStore} over the Kubernetes API. The write is a JSON patch of the {@code status}
 * subresource that sets {@code metadata.resourceVersion} to the read one (a claim changed since is
 * refused with 409, as an update would be) and replaces {@code status.devices} alone: a PUT would
 * send the whole status back as fabric8 serialises it, and the allocation's opaque parameters could
 * come back with their keys reordered, which the API server treats as a change of the allocation
 * (needing {@code resourceclaims/binding}, and refused as immutable). The patch needs {@code patch}
 * on {@code resourceclaims/status} and, from 1.36 on, {@code associated-node:patch} on {@code
 * resourceclaims/driver} for this driver's name.
 */
public final class KubernetesClaimStatusStore implements ClaimStatusStore {
  private final KubernetesClient client;

  public KubernetesClaimStatusStore(KubernetesClient client) {
    this.client = client;
  }

  @Override
  public Optional<ResourceClaim> get(String namespace, String name) {
    return Optional.ofNullable(
        client.resources(ResourceClaim.class).inNamespace(namespace).withName(name).get());
  }

  @Override
  public void writeDevices(ResourceClaim read, List<AllocatedDeviceStatus> devices)
      throws Conflict {
    Map<String, Object> version = new LinkedHashMap<>();
    version.put("op", "replace");
    version.put("path", "/metadata/resourceVersion");
    version.put("value", read.getMetadata().getResourceVersion());
    Map<String, Object> set = new LinkedHashMap<>();
    set.put("op", "add"); // replaces the list, or adds it where the status has none yet
    set.put("path", "/status/devices");
    set.put("value", devices);
    List<Map<String, Object>> ops = List.of(version, set);
    try {
      // on the read object: a patch by name alone would GET the claim first to find its path
      client
          .resource(read)
          .subresource("status")
          .patch(PatchContext.of(PatchType.JSON), Serialization.asJson(ops));
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409) {
        throw new Conflict(e.getMessage());
      }
      throw e;
    }
  }
}
