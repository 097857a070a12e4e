package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * All ResourceSlices of a snapshot, parsed once and indexed by node and pool, with a cache of the
 * pools gathered per node. Immutable apart from its caches; thread-safe. Build a new inventory when
 * slices change; allocated state changes do not require one.
 */
public final class DeviceInventory {

  private final List<SliceInfo> all;
  private final Map<String, List<SliceInfo>> byNode;
  private final Set<String> nodeNames;
  private final List<SliceInfo> notNodeLocal;
  private final Map<String, List<SliceInfo>> byPool;
  private final ConcurrentHashMap<PoolCacheKey, List<Pool>> poolCache = new ConcurrentHashMap<>();
  private final AtomicReference<SelectorEvaluator> cacheOwner = new AtomicReference<>();

  private record PoolCacheKey(String node, Map<String, String> labels, boolean partitionable) {}

  /** Same Node object (callers reuse them across pods): skips hashing the labels. */
  private record IdentityKey(Node node, boolean partitionable) {
    @Override
    public boolean equals(Object o) {
      return o instanceof IdentityKey k && k.node == node && k.partitionable == partitionable;
    }

    @Override
    public int hashCode() {
      return System.identityHashCode(node) * 31 + (partitionable ? 1 : 0);
    }
  }

  private final ConcurrentHashMap<IdentityKey, List<Pool>> identityCache =
      new ConcurrentHashMap<>();
  private final AtomicReference<NodeIndex> lastNodeIndex = new AtomicReference<>();

  private DeviceInventory(List<SliceInfo> all) {
    this.all = all;
    Map<String, List<SliceInfo>> nodes = new HashMap<>();
    Map<String, List<SliceInfo>> pools = new HashMap<>();
    List<SliceInfo> shared = new ArrayList<>();
    Set<String> names = new HashSet<>();
    for (SliceInfo s : all) {
      if (s.nodeName() != null) {
        names.add(s.nodeName());
      }
      // as upstream's NewAllocator (1.37; 1.36 made node-local slices with shared counters
      // candidates on every node)
      if (s.nodeName() != null) {
        nodes.computeIfAbsent(s.nodeName(), k -> new ArrayList<>()).add(s);
      } else {
        shared.add(s);
      }
      pools.computeIfAbsent(poolKey(s.driver(), s.poolName()), k -> new ArrayList<>()).add(s);
    }
    this.byNode = nodes;
    this.nodeNames = Set.copyOf(names);
    this.notNodeLocal = shared;
    this.byPool = pools;
  }

  /** Parses the slices; slices without spec, driver or pool are ignored. */
  public static DeviceInventory of(Collection<ResourceSlice> slices) {
    List<SliceInfo> list = new ArrayList<>();
    for (ResourceSlice s : slices) {
      if (s.getSpec() == null
          || s.getSpec().getDriver() == null
          || s.getSpec().getPool() == null
          || s.getSpec().getPool().getName() == null) {
        continue;
      }
      list.add(new SliceInfo(s));
    }
    return new DeviceInventory(List.copyOf(list));
  }

  /**
   * Whether the per-device selector caches may hold results of {@code evaluator}: true for the
   * first evaluator that asks and only for it, so two evaluators that disagree (for example with
   * and without {@code DRAConsumableCapacity}) never see each other's results.
   */
  boolean cachesResultsOf(SelectorEvaluator evaluator) {
    return cacheOwner.compareAndSet(null, evaluator) || cacheOwner.get() == evaluator;
  }

  /**
   * Key of {@link #selectorsFailSomewhere}: which pools are seen (features) and the selectors
   * evaluated, in order (a later selector is only evaluated where the earlier ones match). Lists
   * may hold nulls (a selector without CEL), so they are not {@code List.copyOf}.
   */
  record SelectorsKey(
      AllocatorFeatures features, List<String> classSelectors, List<String> requestSelectors) {}

  /** Bounds the memo below: distinct (class, request selectors) pairs are few in practice. */
  private static final int SELECTOR_ERROR_MEMO_LIMIT = 4096;

  private final ConcurrentHashMap<SelectorsKey, Boolean> selectorErrorMemo =
      new ConcurrentHashMap<>();

  /**
   * Whether evaluating these selectors on every device throws, memoized per inventory: a device's
   * selector results depend only on the device (fixed for this inventory) and the evaluator (the
   * cache owner's), never on what is allocated, so the answer holds for every pod scheduled against
   * this inventory. {@code check} runs the evaluation and reports whether it threw; it is only
   * memoized for the evaluator that owns the caches.
   */
  boolean selectorsFailSomewhere(
      SelectorEvaluator evaluator, SelectorsKey key, BooleanSupplier check) {
    if (!cachesResultsOf(evaluator)) {
      return check.getAsBoolean();
    }
    Boolean known = selectorErrorMemo.get(key);
    if (known != null) {
      return known;
    }
    boolean fails = check.getAsBoolean();
    if (selectorErrorMemo.size() < SELECTOR_ERROR_MEMO_LIMIT) {
      selectorErrorMemo.putIfAbsent(key, fails);
    }
    return fails;
  }

  private final ConcurrentHashMap<SelectorsKey, MatchingDevices> matchingMemo =
      new ConcurrentHashMap<>();

  /**
   * The devices these selectors match, cluster-wide, built once per inventory and selector set by
   * {@code collect} (for the same reason as {@link #selectorsFailSomewhere}: matching does not
   * depend on what is allocated); null when {@code evaluator} does not own the selector caches or
   * the memo is full, and the caller scans the cluster itself.
   */
  MatchingDevices matchingDevices(
      SelectorEvaluator evaluator, SelectorsKey key, Supplier<List<CandidateDevice>> collect) {
    if (!cachesResultsOf(evaluator)) {
      return null;
    }
    MatchingDevices known = matchingMemo.get(key);
    if (known != null) {
      return known;
    }
    if (matchingMemo.size() >= SELECTOR_ERROR_MEMO_LIMIT) {
      return null;
    }
    return matchingMemo.computeIfAbsent(key, k -> new MatchingDevices(collect.get()));
  }

  /** Every slice, in input order. */
  List<SliceInfo> slices() {
    return all;
  }

  /** Slices with this node name plus all slices that are not node-local. */
  List<SliceInfo> candidateSlices(String nodeName) {
    List<SliceInfo> local = byNode.getOrDefault(nodeName, List.of());
    List<SliceInfo> result = new ArrayList<>(local.size() + notNodeLocal.size());
    result.addAll(local);
    result.addAll(notNodeLocal);
    return result;
  }

  /** Every slice of the pool, any generation. */
  List<SliceInfo> poolSlices(String driver, String pool) {
    return byPool.getOrDefault(poolKey(driver, pool), List.of());
  }

  /** The distinct node names that node-local slices name, unsorted. */
  public Collection<String> nodeNames() {
    return nodeNames;
  }

  /** The pools visible from the node (cached per node name and labels). */
  List<Pool> poolsFor(Node node, AllocatorFeatures features) {
    IdentityKey fast = new IdentityKey(node, features.partitionableDevices());
    List<Pool> cached = identityCache.get(fast);
    if (cached != null) {
      return cached;
    }
    List<Pool> pools = poolsByValue(node, features);
    identityCache.put(fast, pools);
    return pools;
  }

  private List<Pool> poolsByValue(Node node, AllocatorFeatures features) {
    Map<String, String> labels =
        node.getMetadata().getLabels() == null
            ? Map.of()
            : Map.copyOf(node.getMetadata().getLabels());
    PoolCacheKey key =
        new PoolCacheKey(node.getMetadata().getName(), labels, features.partitionableDevices());
    return poolCache.computeIfAbsent(key, k -> PoolGatherer.gather(this, node, features));
  }

  /**
   * The node index for this node list, reused while callers pass the same list of node objects (one
   * pod after another); one slot, since a scheduler walks one node list at a time.
   */
  NodeIndex nodeIndex(List<Node> nodes, AllocatorFeatures features) {
    NodeIndex current = lastNodeIndex.get();
    if (current != null && current.sameNodes(nodes, features.partitionableDevices())) {
      return current;
    }
    NodeIndex fresh = NodeIndex.of(nodes, features.partitionableDevices());
    lastNodeIndex.set(fresh);
    return fresh;
  }

  /** Every pool regardless of node, for cluster-wide explanations. */
  List<Pool> allPools(AllocatorFeatures features) {
    return poolCache.computeIfAbsent(
        new PoolCacheKey(null, Map.of(), features.partitionableDevices()),
        k -> PoolGatherer.gather(this, null, features));
  }

  private static String poolKey(String driver, String pool) {
    return driver + "\u0000" + pool;
  }
}
