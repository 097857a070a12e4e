package io.kdra.slicepublisher.domain;

import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSet;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.ResourcePool;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceSpec;
import io.kdra.core.model.NewerFields;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The desired content of one pool: where it is reachable and its slices in order. Exactly one of
 * {@code nodeName}, {@code nodeSelector} and {@code allNodes} is set. The generation is not part of
 * it: it depends on what is stored and is decided by {@link PoolSyncPlanner}.
 *
 * @param key driver and pool name
 * @param nodeName the node of a node-local pool, else null
 * @param nodeSelector the nodes reaching a network-attached pool, else null
 * @param allNodes true for a network-attached pool reachable from every node
 * @param owner the owner reference (the Node of a node-local pool), else null
 * @param slices the slices' content in order; never empty
 * @param skipNodeOperations the node operations the pool's devices need not have, written as the
 *     {@code skipNodeOperations} of every slice with devices; empty: not written
 */
public record DesiredPool(
    PoolKey key,
    String nodeName,
    NodeSelector nodeSelector,
    boolean allNodes,
    OwnerReference owner,
    List<SliceContent> slices,
    List<String> skipNodeOperations) {

  /** A pool whose devices need every node operation. */
  public DesiredPool(
      PoolKey key,
      String nodeName,
      NodeSelector nodeSelector,
      boolean allNodes,
      OwnerReference owner,
      List<SliceContent> slices) {
    this(key, nodeName, nodeSelector, allNodes, owner, slices, List.of());
  }

  public DesiredPool {
    Objects.requireNonNull(key, "key");
    slices = List.copyOf(slices);
    skipNodeOperations = List.copyOf(skipNodeOperations);
    if (slices.isEmpty()) {
      throw new IllegalArgumentException("a pool has at least one slice: " + key);
    }
    int set = (nodeName != null ? 1 : 0) + (nodeSelector != null ? 1 : 0) + (allNodes ? 1 : 0);
    if (set != 1) {
      throw new IllegalArgumentException(
          "exactly one of nodeName, nodeSelector, allNodes must be set: " + key);
    }
  }

  /**
   * The pool as ResourceSlice objects at {@code generation}, named by {@link SliceNames}. The slice
   * and spec objects are fresh on every call; the devices and counter sets are this pool's own and
   * must not be modified (copy a slice with its builder before changing devices).
   */
  public List<ResourceSlice> toSlices(long generation) {
    List<ResourceSlice> result = new ArrayList<>(slices.size());
    for (int i = 0; i < slices.size(); i++) {
      SliceContent content = slices.get(i);
      // Plain setters, not builders: builders deep-copy every device, which was most of the
      // cost of a steady-state sync.
      ObjectMeta meta = new ObjectMeta();
      meta.setName(SliceNames.name(key.driver(), key.pool(), i));
      if (owner != null) {
        meta.setOwnerReferences(new ArrayList<>(List.of(owner)));
      }
      ResourceSliceSpec spec = new ResourceSliceSpec();
      spec.setDriver(key.driver());
      spec.setPool(new ResourcePool(generation, key.pool(), (long) slices.size()));
      spec.setNodeName(nodeName);
      spec.setNodeSelector(nodeSelector);
      spec.setAllNodes(allNodes ? Boolean.TRUE : null);
      spec.setDevices(new ArrayList<>(content.devices()));
      spec.setSharedCounters(new ArrayList<>(content.sharedCounters()));
      if (!content.devices().isEmpty()) {
        // a counter-only slice has no devices the kubelet could skip a call for
        NewerFields.setSkipNodeOperations(spec, skipNodeOperations);
      }
      ResourceSlice slice = new ResourceSlice();
      slice.setMetadata(meta);
      slice.setSpec(spec);
      result.add(slice);
    }
    return result;
  }

  /**
   * One slice's content: devices or shared counters, never both (the 1.35+ layout).
   *
   * @param devices the devices, in stable order
   * @param sharedCounters the counter sets, in stable order
   */
  public record SliceContent(List<Device> devices, List<CounterSet> sharedCounters) {
    public SliceContent {
      devices = List.copyOf(devices);
      sharedCounters = List.copyOf(sharedCounters);
    }

    public static SliceContent ofDevices(List<Device> devices) {
      return new SliceContent(devices, List.of());
    }

    public static SliceContent ofCounters(List<CounterSet> counters) {
      return new SliceContent(List.of(), counters);
    }
  }
}
