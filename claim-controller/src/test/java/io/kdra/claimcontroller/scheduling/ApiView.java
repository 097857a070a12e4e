package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.claimcontroller.domain.VolumeObjects;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A {@link ClusterView} that reads the API server directly: an informer that never lags, unless a
 * test hides claims from it to play a lagging one.
 */
class ApiView implements ClusterView {

  private final KubernetesClient client;
  final Set<String> hidden = new HashSet<>();

  /** Claims by name shown as a lagging informer would: as they were when frozen. */
  final Map<String, ResourceClaim> frozen = new HashMap<>();

  ApiView(KubernetesClient client) {
    this.client = client;
  }

  @Override
  public List<Node> nodes() {
    return client.nodes().list().getItems();
  }

  @Override
  public List<Pod> pods() {
    return client.pods().inAnyNamespace().list().getItems();
  }

  @Override
  public List<ResourceClaim> claims() {
    return client.resources(ResourceClaim.class).inAnyNamespace().list().getItems().stream()
        .filter(c -> !hidden.contains(c.getMetadata().getName()))
        .map(c -> frozen.getOrDefault(c.getMetadata().getName(), c))
        .toList();
  }

  @Override
  public Optional<ResourceClaim> claim(String namespace, String name) {
    return claims().stream()
        .filter(
            c ->
                c.getMetadata().getName().equals(name)
                    && c.getMetadata().getNamespace().equals(namespace))
        .findFirst();
  }

  @Override
  public Optional<ResourceClaimTemplate> template(String namespace, String name) {
    return Optional.ofNullable(
        client.resources(ResourceClaimTemplate.class).inNamespace(namespace).withName(name).get());
  }

  @Override
  public VolumeObjects volumes() {
    return VolumeObjects.of(
        client.persistentVolumeClaims().inAnyNamespace().list().getItems(),
        client.persistentVolumes().list().getItems(),
        client.storage().v1().storageClasses().list().getItems(),
        client.storage().v1().csiNodes().list().getItems(),
        client.storage().v1().csiDrivers().list().getItems(),
        client.storage().v1().csiStorageCapacities().inAnyNamespace().list().getItems());
  }

  @Override
  public Map<String, Map<String, String>> namespaceLabels() {
    Map<String, Map<String, String>> labels = new HashMap<>();
    client
        .namespaces()
        .list()
        .getItems()
        .forEach(
            n ->
                labels.put(
                    n.getMetadata().getName(),
                    n.getMetadata().getLabels() == null ? Map.of() : n.getMetadata().getLabels()));
    return labels;
  }

  @Override
  public List<ResourceSlice> slices() {
    return client.resources(ResourceSlice.class).list().getItems();
  }

  @Override
  public List<DeviceClass> deviceClasses() {
    return client.resources(DeviceClass.class).list().getItems();
  }
}
