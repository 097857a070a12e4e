package io.kdra.it.services;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Watched all along while a scenario runs, not only at its end: no device is in two claims'
 * allocations in any state the claims of {@code namespace} pass through (an informer's store is a
 * prefix of the API server's history), a pod's node never changes once set, and no ResourceSlice of
 * {@code driver} is deleted ({@link #deletedSlices}) or has a tainted device ({@link
 * #taintedSlices}). Closing stops the watches.
 */
public final class AllocationInvariants implements AutoCloseable {

  public final ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
  public final ConcurrentLinkedQueue<String> deletedSlices = new ConcurrentLinkedQueue<>();

  /** Each state of a slice of the driver in which a device had a taint: a pool that flapped. */
  public final ConcurrentLinkedQueue<String> taintedSlices = new ConcurrentLinkedQueue<>();

  private final Map<String, String> nodeOfPod = new ConcurrentHashMap<>();
  private final List<SharedIndexInformer<?>> informers;

  public AllocationInvariants(KubernetesClient client, String namespace, String driver) {
    SharedIndexInformer<ResourceClaim> claims =
        client.resources(ResourceClaim.class).inNamespace(namespace).inform();
    claims.addEventHandler(handler(c -> check(claims.getStore().list()), c -> {}));
    SharedIndexInformer<Pod> pods = client.pods().inNamespace(namespace).inform();
    pods.addEventHandler(handler(this::bound, p -> {}));
    SharedIndexInformer<ResourceSlice> slices = client.resources(ResourceSlice.class).inform();
    slices.addEventHandler(
        handler(
            s -> {
              if (driver.equals(s.getSpec().getDriver())) {
                tainted(s);
              }
            },
            s -> {
              if (driver.equals(s.getSpec().getDriver())) {
                deletedSlices.add(s.getMetadata().getName() + " of " + s.getSpec().getNodeName());
              }
            }));
    informers = List.of(claims, pods, slices);
  }

  private static <T> ResourceEventHandler<T> handler(
      java.util.function.Consumer<T> changed, java.util.function.Consumer<T> deleted) {
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(T t) {
        changed.accept(t);
      }

      @Override
      public void onUpdate(T old, T t) {
        changed.accept(t);
      }

      @Override
      public void onDelete(T t, boolean unknown) {
        deleted.accept(t);
      }
    };
  }

  private void check(List<ResourceClaim> claims) {
    Map<String, String> holder = new HashMap<>();
    for (ResourceClaim c : claims) {
      for (String device : Dra.devices(c)) {
        String before = holder.put(device, c.getMetadata().getName());
        if (before != null) {
          violations.add(device + " in " + before + " and " + c.getMetadata().getName());
        }
      }
    }
  }

  private void tainted(ResourceSlice s) {
    if (s.getSpec().getDevices() == null) {
      return;
    }
    s.getSpec().getDevices().stream()
        .filter(d -> d.getTaints() != null && !d.getTaints().isEmpty())
        .findFirst()
        .ifPresent(
            d ->
                taintedSlices.add(
                    s.getMetadata().getName()
                        + " of "
                        + s.getSpec().getNodeName()
                        + ": "
                        + d.getName()
                        + " "
                        + d.getTaints().get(0).getKey()
                        + "="
                        + d.getTaints().get(0).getValue()));
  }

  private void bound(Pod p) {
    String node = p.getSpec().getNodeName();
    if (node == null) {
      return;
    }
    String before = nodeOfPod.putIfAbsent(p.getMetadata().getUid(), node);
    if (before != null && !before.equals(node)) {
      violations.add(p.getMetadata().getName() + " bound to " + before + ", then " + node);
    }
  }

  @Override
  public void close() {
    informers.forEach(SharedIndexInformer::close);
  }
}
