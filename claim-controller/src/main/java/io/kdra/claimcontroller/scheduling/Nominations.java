package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.kdra.claimcontroller.domain.NodeFilter;
import io.kdra.claimcontroller.domain.Pods;
import io.kdra.claimcontroller.domain.VictimSearch;
import io.kdra.core.alloc.AllocatedState;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;

/**
 * What preemptors are promised: once a pod has preempted on a node (its {@code nominatedNodeName}),
 * the CPU, memory and devices its simulation took there are kept from every other pod of lower or
 * equal priority until it is placed, deleted or gives up (upstream's nominated pods, which
 * kube-scheduler adds to their node before filtering a pod of no higher priority). Devices are the
 * ones the simulation chose: the preemptor itself may later take others. Held in memory: after a
 * restart or a change of leader a preemptor keeps its nominated node but not the devices, until it
 * preempts again. Thread-safe.
 */
public final class Nominations {

  /** One preemptor's promise. */
  record Hold(
      String uid,
      String namespace,
      String name,
      String node,
      int priority,
      NodeFilter.NodeUsage usage,
      List<AllocationResult> allocations) {}

  private final Map<String, Hold> byUid = new ConcurrentHashMap<>();

  /** Keeps {@code allocations} and the pod's requests on {@code node} for {@code preemptor}. */
  public void hold(Pod preemptor, String node, Map<String, AllocationResult> allocations) {
    byUid.put(
        preemptor.getMetadata().getUid(),
        new Hold(
            preemptor.getMetadata().getUid(),
            preemptor.getMetadata().getNamespace(),
            preemptor.getMetadata().getName(),
            node,
            VictimSearch.priority(preemptor),
            NodeFilter.NodeUsage.of(preemptor),
            List.copyOf(allocations.values())));
  }

  /** The pod with this UID was placed, or gave up: its promise ends. */
  public void release(String uid) {
    byUid.remove(uid);
  }

  /** The node promised to the pod with this UID, if any. */
  public Optional<String> nodeOf(String uid) {
    return Optional.ofNullable(byUid.get(uid)).map(Hold::node);
  }

  /**
   * The promises that keep resources from {@code pod}: those of other preemptors, of no lower
   * priority, still pending ({@code podAt} answers the pod at a namespace and name); promises of
   * pods gone, bound or being deleted are dropped on the way.
   */
  List<Hold> against(Pod pod, BiFunction<String, String, Optional<Pod>> podAt) {
    if (byUid.isEmpty()) {
      return List.of();
    }
    int priority = VictimSearch.priority(pod);
    String uid = pod.getMetadata().getUid();
    return byUid.values().stream()
        .filter(h -> stillPending(h, podAt))
        .filter(h -> !h.uid().equals(uid) && h.priority() >= priority)
        .toList();
  }

  private boolean stillPending(Hold h, BiFunction<String, String, Optional<Pod>> podAt) {
    Optional<Pod> now = podAt.apply(h.namespace(), h.name());
    boolean pending =
        now.isPresent()
            && h.uid().equals(now.get().getMetadata().getUid())
            && !Pods.isBound(now.get())
            && !Pods.isDone(now.get())
            && now.get().getMetadata().getDeletionTimestamp() == null;
    if (!pending) {
      byUid.remove(h.uid(), h);
    }
    return pending;
  }

  /** {@code used} (node name to what its pods request) with the holds' requests added. */
  static Map<String, NodeFilter.NodeUsage> withHeld(
      List<Hold> holds, Map<String, NodeFilter.NodeUsage> used) {
    if (holds.isEmpty()) {
      return used;
    }
    Map<String, NodeFilter.NodeUsage> all = new HashMap<>(used);
    holds.forEach(h -> all.merge(h.node(), h.usage(), NodeFilter.NodeUsage::plus));
    return all;
  }

  /** {@code state} with the holds' devices, counters and capacity taken. */
  static AllocatedState withHeld(List<Hold> holds, AllocatedState state) {
    AllocatedState s = state;
    for (Hold h : holds) {
      for (AllocationResult a : h.allocations()) {
        s = s.plus(a);
      }
    }
    return s;
  }
}
