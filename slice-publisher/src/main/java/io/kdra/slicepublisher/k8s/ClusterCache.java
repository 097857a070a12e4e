package io.kdra.slicepublisher.k8s;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ExceptionHandler;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.kdra.slicepublisher.domain.NodeInfo;
import io.kdra.slicepublisher.domain.PoolKey;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.Function;
import org.jboss.logging.Logger;

/**
 * Informer caches of Nodes and of the ResourceSlices of the served drivers, plus an overlay of this
 * publisher's own recent writes.
 *
 * <p>Why the overlay: after a write, the informer shows the old object until the watch event
 * arrives; a sync in between would see stale state and write again (a 409 at best). Upstream uses a
 * MutationCache for the same reason. Overlay entries win while their resourceVersion is newer than
 * the cached one and are dropped once the informer catches up.
 *
 * <p>Slices are watched with a {@code spec.driver} field selector when one driver is served, and
 * all of them otherwise (one watch instead of one per driver); either way every use filters by the
 * served drivers, so other drivers' slices are never written. Thread-safe.
 */
public final class ClusterCache implements AutoCloseable {

  private static final Logger LOG = Logger.getLogger(ClusterCache.class);
  private static final String POOL_INDEX = "pool";

  private final KubernetesClient client;
  private final Set<String> drivers;
  private final boolean fieldSelector;
  private final Map<String, ResourceSlice> written = new ConcurrentHashMap<>();
  private final Map<String, String> deleted = new ConcurrentHashMap<>();
  private final List<Consumer<String>> nodeListeners = new CopyOnWriteArrayList<>();
  private final List<Consumer<PoolKey>> poolListeners = new CopyOnWriteArrayList<>();
  private SharedIndexInformer<ResourceSlice> slices;
  private SharedIndexInformer<Node> nodes;

  /**
   * @param fieldSelector watch with a {@code spec.driver} field selector when one driver is served
   *     (off for servers without field selectors, such as the fabric8 mock server)
   */
  public ClusterCache(KubernetesClient client, Set<String> drivers, boolean fieldSelector) {
    this.client = client;
    this.drivers = Set.copyOf(drivers);
    this.fieldSelector = fieldSelector;
  }

  /** Starts both informers; returns at once. */
  public synchronized void start() {
    nodes = client.nodes().runnableInformer(0);
    nodes.addEventHandler(handler(n -> n.getMetadata().getName(), this::nodeChanged));
    var sliceSource = client.resources(ResourceSlice.class);
    // A field selector can name one driver only; with several, all slices are watched and
    // filtered here (other drivers' slices are then cached but never written).
    slices =
        fieldSelector && drivers.size() == 1
            ? sliceSource.withField("spec.driver", drivers.iterator().next()).runnableInformer(0)
            : sliceSource.runnableInformer(0);
    slices.addIndexers(Map.of(POOL_INDEX, s -> List.of(key(s).toString())));
    slices.addEventHandler(handler(s -> s, this::sliceChanged));
    keepRetrying(nodes);
    keepRetrying(slices);
    nodes.start();
    slices.start();
  }

  /**
   * fabric8 gives an informer up for good when its first list fails in a way its HTTP client does
   * not retry (a timeout under a slow API server, the server away at start-up): the cache would
   * never sync and this replica would stay unready until restarted. Retried with fabric8's backoff
   * instead; only a response that cannot be decoded, which no retry mends, stops it.
   */
  private static void keepRetrying(SharedIndexInformer<?> informer) {
    informer.exceptionHandler(
        (started, error) -> !ExceptionHandler.isDeserializationException(error));
  }

  /** True once both informers have listed everything. */
  public boolean synced() {
    return nodes != null && slices != null && nodes.hasSynced() && slices.hasSynced();
  }

  public void onNodeChange(Consumer<String> listener) {
    nodeListeners.add(listener);
  }

  public void onPoolChange(Consumer<PoolKey> listener) {
    poolListeners.add(listener);
  }

  /** The node, if it exists. */
  public Optional<NodeInfo> node(String name) {
    Node n = nodes.getIndexer().getByKey(name);
    if (n == null) {
      return Optional.empty();
    }
    return Optional.of(new NodeInfo(name, n.getMetadata().getUid(), n.getMetadata().getLabels()));
  }

  /** The stored slices of one pool, our own recent writes included. */
  public List<ResourceSlice> slices(PoolKey key) {
    Map<String, ResourceSlice> byName = new TreeMap<>();
    for (ResourceSlice s : slices.getIndexer().byIndex(POOL_INDEX, key.toString())) {
      byName.put(s.getMetadata().getName(), s);
    }
    written.values().stream()
        .filter(s -> key(s).equals(key))
        .forEach(
            s ->
                byName.merge(
                    s.getMetadata().getName(),
                    s,
                    (cached, mine) -> newer(mine, cached) ? mine : cached));
    byName
        .values()
        .removeIf(
            s -> {
              String rv = deleted.get(s.getMetadata().getName());
              return rv != null && rv(s) <= Long.parseLong(rv);
            });
    return new ArrayList<>(byName.values());
  }

  /** Every pool of a served driver that has slices stored. */
  public Set<PoolKey> storedPools() {
    Set<PoolKey> keys = new HashSet<>();
    slices
        .getIndexer()
        .list()
        .forEach(
            s -> {
              if (drivers.contains(s.getSpec().getDriver())) {
                keys.add(key(s));
              }
            });
    written.values().forEach(s -> keys.add(key(s)));
    return keys;
  }

  /** Records a slice this publisher just created or updated, as the API server returned it. */
  public void wrote(ResourceSlice stored) {
    written.put(stored.getMetadata().getName(), stored);
    deleted.remove(stored.getMetadata().getName());
  }

  /** Records a slice this publisher just deleted. */
  public void deleted(String name, String resourceVersion) {
    written.remove(name);
    if (resourceVersion != null) {
      deleted.put(name, resourceVersion);
    }
  }

  /** Forgets what this publisher wrote to a slice (a write conflicted: trust the API server). */
  public void forget(String name) {
    written.remove(name);
    deleted.remove(name);
  }

  private void sliceChanged(ResourceSlice s, boolean gone) {
    String name = s.getMetadata().getName();
    ResourceSlice mine = written.get(name);
    if (mine != null && (gone || !newer(mine, s))) {
      written.remove(name, mine);
    }
    if (gone) {
      deleted.remove(name);
    }
    if (drivers.contains(s.getSpec().getDriver())) {
      poolListeners.forEach(l -> l.accept(key(s)));
    }
  }

  private void nodeChanged(String node, boolean gone) {
    nodeListeners.forEach(l -> l.accept(node));
  }

  private static boolean newer(ResourceSlice a, ResourceSlice b) {
    return rv(a) > rv(b);
  }

  private static long rv(ResourceSlice s) {
    try {
      return Long.parseLong(s.getMetadata().getResourceVersion());
    } catch (NumberFormatException | NullPointerException e) {
      // resourceVersions are opaque; every API server in use prints integers, and a non-integer
      // one only makes the overlay yield to the informer early.
      return 0L;
    }
  }

  static PoolKey key(ResourceSlice s) {
    return new PoolKey(
        String.valueOf(s.getSpec().getDriver()),
        s.getSpec().getPool() == null ? "" : String.valueOf(s.getSpec().getPool().getName()));
  }

  private interface Change<T> {
    void apply(T item, boolean gone);
  }

  private static <T, K> ResourceEventHandler<T> handler(Function<T, K> key, Change<K> change) {
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(T obj) {
        change.apply(key.apply(obj), false);
      }

      @Override
      public void onUpdate(T oldObj, T newObj) {
        change.apply(key.apply(newObj), false);
      }

      @Override
      public void onDelete(T obj, boolean deletedFinalStateUnknown) {
        change.apply(key.apply(obj), true);
      }
    };
  }

  @Override
  public synchronized void close() {
    LOG.debug("stopping informers");
    if (slices != null) {
      slices.close();
    }
    if (nodes != null) {
      nodes.close();
    }
  }
}
