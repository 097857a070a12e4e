package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Pod;
import io.kdra.claimcontroller.domain.InterPodAffinity;
import io.kdra.claimcontroller.domain.InterPodAffinityScore;
import io.kdra.claimcontroller.domain.NodeFilter.NodeUsage;
import io.kdra.claimcontroller.domain.Pods;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * What the pods bound to each node request, for {@link io.kdra.claimcontroller.domain.NodeFilter},
 * kept from one attempt to the next: fed by notices of the pods that changed (informer events, by
 * namespace and name), each rechecked against the informer's copy ({@code podAt}), so an attempt
 * costs the pods that changed, not every pod. Each pod's requests are parsed once per pod object.
 * Pods this controller is binding count on their node before the informer shows them bound, once.
 * Without notices ({@code live} false) every call is a full pass over the pods. The placed pods
 * themselves are kept too, and apart those with required pod anti-affinity, which every attempt
 * must check against (upstream's {@code PodsWithRequiredAntiAffinity}), and those with any pod
 * affinity term, whose preferred terms the scores read ({@code PodsWithAffinity}): usually none, so
 * the filters and scores that look at other pods cost nothing for pods without such terms.
 *
 * <p>{@link #podChanged} is thread-safe; {@link #usage} is not: the caller serialises attempts (the
 * scheduling lock).
 */
final class NodeUsageCache {

  /** A pod's namespace and name. */
  record Key(String namespace, String name) {
    static Key of(Pod p) {
      return new Key(p.getMetadata().getNamespace(), p.getMetadata().getName());
    }
  }

  private record Counted(Pod pod, String node, NodeUsage usage) {}

  private record Parsed(Pod pod, NodeUsage usage) {}

  private final Function<Key, Optional<Pod>> podAt;
  private final Supplier<Collection<Pod>> allPods;
  private final BooleanSupplier live;
  private final Set<Key> dirty = ConcurrentHashMap.newKeySet();

  /** Guarded by the caller's lock, as below. */
  private boolean built;

  private final Map<Key, Counted> counted = new HashMap<>();
  private final Set<String> countedUids = new HashSet<>();
  private final Map<String, Map<Key, NodeUsage>> perNode = new HashMap<>();
  private final Map<String, NodeUsage> byNode = new HashMap<>();
  private final Map<Key, Pod> withAntiAffinity = new HashMap<>();
  private final Map<Key, Pod> withAffinity = new HashMap<>();
  private Map<String, Parsed> binding = new HashMap<>();

  /**
   * @param podAt the informer's pod at a key
   * @param allPods every pod the informer has, for a full pass
   * @param live whether every change is noticed ({@link #podChanged})
   */
  NodeUsageCache(
      Function<Key, Optional<Pod>> podAt, Supplier<Collection<Pod>> allPods, BooleanSupplier live) {
    this.podAt = podAt;
    this.allPods = allPods;
    this.live = live;
  }

  /** The pod {@code namespace/name} may have changed (an informer event, after its cache). */
  void podChanged(String namespace, String name) {
    dirty.add(new Key(namespace, name));
  }

  /** Node name to what its bound, non-terminal pods (informed and {@code being bound}) use. */
  Map<String, NodeUsage> usage(Collection<Pod> beingBound) {
    if (!live.getAsBoolean() || !built) {
      fullPass();
    } else if (!dirty.isEmpty()) {
      List<Key> keys = List.copyOf(dirty);
      // removed before they are read again: a notice that comes meanwhile stays for the next call
      keys.forEach(dirty::remove);
      keys.forEach(this::recheck);
    }
    Map<String, NodeUsage> usage = new HashMap<>(byNode);
    Map<String, Parsed> next = new HashMap<>();
    for (Pod p : beingBound) {
      String uid = p.getMetadata().getUid();
      if (!counts(p) || countedUids.contains(uid) || next.containsKey(uid)) {
        continue;
      }
      Parsed known = binding.get(uid);
      if (known == null || known.pod() != p) {
        known = new Parsed(p, NodeUsage.of(p));
      }
      next.put(uid, known);
      usage.merge(p.getSpec().getNodeName(), known.usage(), NodeUsage::plus);
    }
    binding = next;
    return usage;
  }

  /**
   * The pods counted by the last {@link #usage} call: bound and not terminal, and those being
   * bound. A new list.
   */
  List<Pod> placed() {
    List<Pod> all = new ArrayList<>(counted.size() + binding.size());
    counted.values().forEach(c -> all.add(c.pod()));
    binding.values().forEach(b -> all.add(b.pod()));
    return all;
  }

  /** Those of {@link #placed} with required pod anti-affinity terms. */
  List<Pod> placedWithAntiAffinity() {
    List<Pod> all = new ArrayList<>(withAntiAffinity.values());
    binding.values().stream()
        .map(Parsed::pod)
        .filter(InterPodAffinity::hasRequiredAntiAffinity)
        .forEach(all::add);
    return all;
  }

  /**
   * Those of {@link #placed} with any pod affinity or anti-affinity term, required or preferred
   * (upstream's {@code PodsWithAffinity}), whose terms the InterPodAffinity score reads.
   */
  List<Pod> placedWithAffinity() {
    List<Pod> all = new ArrayList<>(withAffinity.values());
    binding.values().stream()
        .map(Parsed::pod)
        .filter(InterPodAffinityScore::hasPodAffinity)
        .forEach(all::add);
    return all;
  }

  private void fullPass() {
    dirty.clear();
    withAntiAffinity.clear();
    withAffinity.clear();
    counted.clear();
    countedUids.clear();
    perNode.clear();
    byNode.clear();
    for (Pod p : allPods.get()) {
      Key k = Key.of(p);
      if (counts(p) && !counted.containsKey(k)) {
        add(k, p);
      }
    }
    built = true;
  }

  private void recheck(Key k) {
    Pod now = podAt.apply(k).filter(NodeUsageCache::counts).orElse(null);
    Counted old = counted.get(k);
    if (old != null && old.pod() == now) {
      return;
    }
    if (old != null) {
      remove(k, old);
    }
    if (now != null) {
      add(k, now);
    }
  }

  private void add(Key k, Pod p) {
    String node = p.getSpec().getNodeName();
    Counted c = new Counted(p, node, NodeUsage.of(p));
    counted.put(k, c);
    countedUids.add(p.getMetadata().getUid());
    if (InterPodAffinity.hasRequiredAntiAffinity(p)) {
      withAntiAffinity.put(k, p);
    }
    if (InterPodAffinityScore.hasPodAffinity(p)) {
      withAffinity.put(k, p);
    }
    perNode.computeIfAbsent(node, n -> new HashMap<>()).put(k, c.usage());
    sum(node);
  }

  private void remove(Key k, Counted c) {
    counted.remove(k);
    withAntiAffinity.remove(k);
    withAffinity.remove(k);
    countedUids.remove(c.pod().getMetadata().getUid());
    Map<Key, NodeUsage> on = perNode.get(c.node());
    if (on != null) {
      on.remove(k);
      if (on.isEmpty()) {
        perNode.remove(c.node());
      }
    }
    sum(c.node());
  }

  private void sum(String node) {
    Map<Key, NodeUsage> on = perNode.get(node);
    if (on == null) {
      byNode.remove(node);
      return;
    }
    NodeUsage total = NodeUsage.NONE;
    for (NodeUsage u : on.values()) {
      total = total.plus(u);
    }
    byNode.put(node, total);
  }

  private static boolean counts(Pod p) {
    return Pods.isBound(p) && !Pods.isTerminal(p);
  }
}
