package io.kdra.it.karpenter;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.kdra.it.services.Dra;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * What a scale-out run did, seen from outside through the API server while it runs (the objects
 * come and go, so they are recorded as they come): the nodes Karpenter launched with their instance
 * types, the node each pod of the scenario's Deployment was bound to, and the devices each pod's
 * claim was allocated and reserved for it. For {@code DemoIT}, which watches {@code bin/demo
 * --scale-out}.
 */
public final class ScaleOutWatch implements AutoCloseable {

  /** A pod's claim as allocated: its devices ({@code pool/device}) and the request of each. */
  public record Allocation(List<String> devices, List<String> requests) {}

  private final Map<String, String> nodes = new ConcurrentHashMap<>();
  private final Map<String, String> bindings = new ConcurrentHashMap<>();
  private final Map<String, Allocation> allocations = new ConcurrentHashMap<>();
  private final List<SharedIndexInformer<?>> informers;

  public ScaleOutWatch(KubernetesClient client, String namespace) {
    informers =
        List.of(
            client.nodes().withLabel(LaunchedNodes.NODE_POOL_LABEL).inform(seen(this::node)),
            client
                .pods()
                .inNamespace(namespace)
                .withLabel("app", ScaleOutScenario.APP)
                .inform(seen(this::pod)),
            client.resources(ResourceClaim.class).inNamespace(namespace).inform(seen(this::claim)));
  }

  /** Every node Karpenter launched so far: name to instance type. */
  public Map<String, String> nodes() {
    return Map.copyOf(nodes);
  }

  /** Every pod bound so far: name to node. */
  public Map<String, String> bindings() {
    return Map.copyOf(bindings);
  }

  /** Every pod whose claim was allocated and reserved for it so far: name to allocation. */
  public Map<String, Allocation> allocations() {
    return Map.copyOf(allocations);
  }

  private void node(Node n) {
    String type = n.getMetadata().getLabels().get(ScaleOutScenario.INSTANCE_TYPE_LABEL);
    if (type != null) {
      nodes.put(n.getMetadata().getName(), type);
    }
  }

  private void pod(Pod p) {
    if (p.getSpec().getNodeName() != null) {
      bindings.put(p.getMetadata().getName(), p.getSpec().getNodeName());
    }
  }

  private void claim(ResourceClaim c) {
    if (c.getStatus() == null
        || c.getStatus().getAllocation() == null
        || c.getStatus().getReservedFor() == null) {
      return;
    }
    Allocation allocation =
        new Allocation(
            Dra.devices(c),
            c.getStatus().getAllocation().getDevices().getResults().stream()
                .map(DeviceRequestAllocationResult::getRequest)
                .toList());
    for (ResourceClaimConsumerReference r : c.getStatus().getReservedFor()) {
      if ("pods".equals(r.getResource())) {
        allocations.put(r.getName(), allocation);
      }
    }
  }

  private static <T> ResourceEventHandler<T> seen(Consumer<T> record) {
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(T o) {
        record.accept(o);
      }

      @Override
      public void onUpdate(T old, T o) {
        record.accept(o);
      }

      @Override
      public void onDelete(T o, boolean unknown) {}
    };
  }

  @Override
  public void close() {
    informers.forEach(SharedIndexInformer::close);
  }
}
