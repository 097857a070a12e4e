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
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import org.jboss.logging.Logger;

/**
 * What preemptors are promised: once a pod has preempted on a node (its {@code nominatedNodeName}),
 * the CPU, memory and devices its simulation took there are kept from every other pod of lower or
 * equal priority until it is placed, deleted or gives up (upstream's nominated pods, which
 * kube-scheduler adds to their node before filtering a pod of no higher priority). Devices are the
 * ones the simulation chose: the preemptor itself may later take others.
 *
 * <p>A promise made by this process is held in memory. One made before a restart or by another
 * leader is read back, as upstream's nominator is rebuilt, from the pending pods of this scheduler
 * whose {@code nominatedNodeName} is set ({@link #restoreFrom}, fed by the view's pod notices): its
 * CPU, memory and pod count at once, its devices simulated on its node ({@link Promise}) the first
 * time it is held against a pod. Such a promise lasts while the pod stays nominated to that node.
 * Thread-safe; {@link #against} is called under the scheduling lock.
 */
public final class Nominations {

  private static final Logger LOG = Logger.getLogger(Nominations.class);

  /** One preemptor's promise; {@code allocations} null: restored, its devices not simulated yet. */
  record Hold(
      String uid,
      String namespace,
      String name,
      String node,
      int priority,
      NodeFilter.NodeUsage usage,
      List<AllocationResult> allocations,
      boolean restored) {

    static Hold of(Pod p, String node, List<AllocationResult> allocations, boolean restored) {
      return new Hold(
          p.getMetadata().getUid(),
          p.getMetadata().getNamespace(),
          p.getMetadata().getName(),
          node,
          VictimSearch.priority(p),
          NodeFilter.NodeUsage.of(p),
          allocations,
          restored);
    }
  }

  /**
   * The devices a nominated preemptor would take on its node once the pods leaving that node are
   * gone ({@link Preemption}'s simulation); none when it would not fit.
   */
  @FunctionalInterface
  interface Promise {
    Map<String, AllocationResult> on(Pod preemptor, String node);
  }

  private record Key(String namespace, String name) {}

  /** Where nominations are read back from; null until {@link #restoreFrom}. */
  private record Source(ClusterView view, String scheduler, Promise promise, boolean live) {}

  private final Map<String, Hold> byUid = new ConcurrentHashMap<>();
  private final Set<Key> changed = ConcurrentHashMap.newKeySet();
  private volatile Source source;

  /** Guarded by the scheduling lock. */
  private boolean read;

  /**
   * Reads back the nominations of {@code scheduler}'s pending pods from {@code view} (all of them
   * before the first decision, then those the view's notices say changed), their devices simulated
   * by {@code promise}.
   */
  void restoreFrom(ClusterView view, String scheduler, Promise promise) {
    boolean live =
        view.subscribe(
            new ClusterView.Changes() {
              @Override
              public void claim(String namespace, String name) {}

              @Override
              public void pod(String namespace, String name) {
                changed.add(new Key(namespace, name));
              }
            });
    source = new Source(view, scheduler, promise, live);
  }

  /** Keeps {@code allocations} and the pod's requests on {@code node} for {@code preemptor}. */
  public void hold(Pod preemptor, String node, Map<String, AllocationResult> allocations) {
    byUid.put(
        preemptor.getMetadata().getUid(),
        Hold.of(preemptor, node, List.copyOf(allocations.values()), false));
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
   * pods gone, bound or being deleted, and restored ones no longer nominated there, are dropped on
   * the way. Restored promises held against the pod get their devices simulated first.
   */
  List<Hold> against(Pod pod, BiFunction<String, String, Optional<Pod>> podAt) {
    Source s = source;
    if (s != null) {
      readBack(s);
    }
    if (byUid.isEmpty()) {
      return List.of();
    }
    int priority = VictimSearch.priority(pod);
    String uid = pod.getMetadata().getUid();
    return byUid.values().stream()
        .filter(h -> stillPending(h, podAt))
        .filter(h -> !h.uid().equals(uid) && h.priority() >= priority)
        .map(h -> withDevices(h, s, podAt))
        .toList();
  }

  /** Restores the nominations of the pods that changed (all of them on the first call). */
  private void readBack(Source s) {
    if (!s.live() || !read) {
      changed.clear();
      s.view().pods().forEach(p -> restore(p, s.scheduler()));
      read = true;
      return;
    }
    if (changed.isEmpty()) {
      return;
    }
    List<Key> keys = List.copyOf(changed);
    // removed before they are read: a notice that comes meanwhile stays for the next call
    keys.forEach(changed::remove);
    keys.forEach(
        k -> s.view().pod(k.namespace(), k.name()).ifPresent(p -> restore(p, s.scheduler())));
  }

  /**
   * Holds a restored promise for {@code p} when it is a pending pod of {@code scheduler} nominated
   * to a node that no promise of this process names for it.
   */
  private void restore(Pod p, String scheduler) {
    String node = nominatedNode(p);
    if (node == null || !Pods.isScheduledBy(p, scheduler) || !pending(p)) {
      return;
    }
    Hold known = byUid.get(p.getMetadata().getUid());
    if (known == null || (known.restored() && !known.node().equals(node))) {
      Hold restored = Hold.of(p, node, null, true);
      if (known == null) {
        byUid.putIfAbsent(restored.uid(), restored);
      } else {
        byUid.replace(restored.uid(), known, restored);
      }
    }
  }

  /** {@code h}, a restored promise, with the devices its pod would take on its node simulated. */
  private Hold withDevices(Hold h, Source s, BiFunction<String, String, Optional<Pod>> podAt) {
    if (h.allocations() != null) {
      return h;
    }
    List<AllocationResult> devices;
    try {
      devices =
          podAt
              .apply(h.namespace(), h.name())
              .map(p -> List.copyOf(s.promise().on(p, h.node()).values()))
              .orElse(List.of());
    } catch (RuntimeException e) {
      // the attempt that asked goes on: the promise keeps the pod's CPU and memory only
      LOG.warnf(
          "cannot simulate the devices promised to %s/%s on node %s (%s): only its CPU and"
              + " memory are kept for it",
          h.namespace(), h.name(), h.node(), e.toString());
      devices = List.of();
    }
    Hold simulated =
        new Hold(
            h.uid(), h.namespace(), h.name(), h.node(), h.priority(), h.usage(), devices, true);
    // a promise made meanwhile by this process wins
    byUid.replace(h.uid(), h, simulated);
    return simulated;
  }

  private boolean stillPending(Hold h, BiFunction<String, String, Optional<Pod>> podAt) {
    Optional<Pod> now = podAt.apply(h.namespace(), h.name());
    boolean pending =
        now.isPresent()
            && h.uid().equals(now.get().getMetadata().getUid())
            && pending(now.get())
            && (!h.restored() || h.node().equals(nominatedNode(now.get())));
    if (!pending) {
      byUid.remove(h.uid(), h);
    }
    return pending;
  }

  private static String nominatedNode(Pod p) {
    String node = p.getStatus() == null ? null : p.getStatus().getNominatedNodeName();
    return node == null || node.isEmpty() ? null : node;
  }

  private static boolean pending(Pod p) {
    return !Pods.isBound(p) && !Pods.isDone(p) && p.getMetadata().getDeletionTimestamp() == null;
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
