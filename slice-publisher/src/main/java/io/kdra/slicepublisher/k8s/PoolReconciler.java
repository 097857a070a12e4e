package io.kdra.slicepublisher.k8s;

import io.kdra.slicepublisher.domain.DesiredPool;
import io.kdra.slicepublisher.domain.InventoryStore;
import io.kdra.slicepublisher.domain.NodeInventory;
import io.kdra.slicepublisher.domain.PlannerSettings.NetworkPoolSpec;
import io.kdra.slicepublisher.domain.PoolKey;
import io.kdra.slicepublisher.domain.PoolSyncPlanner;
import io.kdra.slicepublisher.domain.SlicePlanner;
import io.kdra.slicepublisher.observability.PublisherMetrics;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * Keeps the stored ResourceSlices equal to the planned ones, one pool at a time. It only
 * orchestrates: desired state from {@link SlicePlanner}, the diff from {@link PoolSyncPlanner},
 * the writes through {@link SliceWriter}, the slices it leaves out as invalid to
 * {@link RefusedSlices}.
 *
 * <p>Work is keyed by pool and deduplicated; one worker thread does all of it, so writes to one
 * pool never race and the global write rate is easy to bound. Triggers: a snapshot, a change of a
 * slice or a Node, and a periodic resync (which also drives the staleness timers).
 *
 * <p>Pools with slices but no inventory (after a restart or a leader change nobody has reported
 * yet) are left alone until the removal grace has passed since writing started, so that a new
 * leader does not wipe the cluster's devices before the drivers have reconnected; a node-local
 * pool whose Node is gone is removed at once.
 */
public final class PoolReconciler implements AutoCloseable {

  private static final Logger LOG = Logger.getLogger(PoolReconciler.class);
  private static final Duration MIN_BACKOFF = Duration.ofMillis(100);
  private static final Duration MAX_BACKOFF = Duration.ofSeconds(30);

  private final ClusterCache cache;
  private final InventoryStore store;
  private final SlicePlanner planner;
  private final SliceWriter writer;
  private final DroppedFields dropped;
  private final PublisherMetrics metrics;
  private final RefusedSlices refused;
  private final Tracer tracer;
  private final Clock clock;
  private final Duration resyncPeriod;
  private final ScheduledExecutorService worker;
  private final Set<PoolKey> pending = new LinkedHashSet<>();
  private final Map<PoolKey, Integer> failures = new HashMap<>();
  private volatile Instant writingSince;
  private volatile boolean busy;

  public PoolReconciler(ClusterCache cache, InventoryStore store, SlicePlanner planner,
      SliceWriter writer, DroppedFields dropped, PublisherMetrics metrics, Tracer tracer,
      Clock clock, Duration resyncPeriod) {
    this.cache = cache;
    this.store = store;
    this.planner = planner;
    this.writer = writer;
    this.dropped = dropped;
    this.metrics = metrics;
    this.refused = new RefusedSlices(metrics);
    this.tracer = tracer;
    this.clock = clock;
    this.resyncPeriod = resyncPeriod;
    this.worker = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "slice-publisher-reconciler");
      t.setDaemon(true);
      return t;
    });
  }

  /**
   * Starts writing: from now on this replica is the single writer. Idempotent. Call once the
   * caches have synced (a sync against an empty cache would recreate every slice).
   */
  public synchronized void start() {
    if (writingSince != null) {
      return;
    }
    writingSince = clock.instant();
    cache.onPoolChange(this::enqueue);
    cache.onNodeChange(this::nodeChanged);
    worker.scheduleWithFixedDelay(this::resyncAll, 0, resyncPeriod.toMillis(),
        TimeUnit.MILLISECONDS);
    LOG.infof("writing ResourceSlices (resync every %s)", resyncPeriod);
  }

  public boolean started() {
    return writingSince != null;
  }

  /** Asks for {@code key} to be reconciled soon. Thread-safe, cheap, deduplicated. */
  public void enqueue(PoolKey key) {
    if (writingSince == null) {
      return;
    }
    synchronized (pending) {
      if (!pending.add(key)) {
        return;
      }
    }
    worker.execute(this::drainOne);
  }

  /** The pools an inventory of {@code driver} on {@code node} feeds: to call after storing it. */
  public void inventoryChanged(String driver, String node) {
    enqueue(planner.poolKeyOf(driver, node));
  }

  /** As {@link #inventoryChanged}, once {@code delay} has passed (a timer of the planner's). */
  public void inventoryChangedAfter(String driver, String node, Duration delay) {
    PoolKey key = planner.poolKeyOf(driver, node);
    // a little past the instant, so that the plan made then sees the timer as expired
    worker.schedule(() -> enqueue(key), delay.toMillis() + 50, TimeUnit.MILLISECONDS);
  }

  /** True when nothing is queued (for tests and benchmarks). */
  public boolean idle() {
    synchronized (pending) {
      return pending.isEmpty() && !busy;
    }
  }

  private void nodeChanged(String node) {
    if (cache.node(node).isEmpty()) {
      // Node-local inventories go with their Node; a network pool's source node going away is
      // handled by the staleness timers instead, as its devices may still be reachable.
      store.all().stream()
          .filter(i -> i.nodeName().equals(node)
              && planner.poolKeyOf(i.driver(), node).pool().equals(node))
          .forEach(store::remove);
    }
    planner.settings().drivers().forEach(d -> enqueue(planner.poolKeyOf(d, node)));
  }

  private void resyncAll() {
    try {
      Set<PoolKey> keys = new HashSet<>(cache.storedPools());
      store.all().forEach(i -> keys.add(planner.poolKeyOf(i.driver(), i.nodeName())));
      keys.forEach(this::enqueue);
    } catch (RuntimeException e) {
      LOG.warn("resync failed", e);
    }
  }

  private void drainOne() {
    PoolKey key;
    synchronized (pending) {
      var it = pending.iterator();
      if (!it.hasNext()) {
        return;
      }
      key = it.next();
      it.remove();
      busy = true;
    }
    try {
      sync(key);
    } catch (RuntimeException e) {
      LOG.warnf(e, "reconciling pool %s failed", key);
      retryLater(key);
    } finally {
      busy = false;
    }
  }

  private void sync(PoolKey key) {
    Span span = tracer.spanBuilder("reconcile pool").setAttribute("kdra.driver", key.driver())
        .setAttribute("kdra.pool", key.pool()).startSpan();
    long start = System.nanoTime();
    try (Scope ignored = span.makeCurrent()) {
      Optional<Optional<DesiredPool>> desired = desired(key);
      if (desired.isEmpty()) {
        span.setAttribute("kdra.outcome", "waiting for inventory");
        return;
      }
      var plan = PoolSyncPlanner.plan(desired.get(), cache.slices(key), dropped::sameContent);
      span.setAttribute("kdra.writes", plan.writes().size());
      span.setAttribute("kdra.generation", plan.generation());
      span.setAttribute("kdra.refused", plan.refused().size());
      refused.report(key, plan.refused());
      SliceWriter.Outcome outcome = writer.apply(plan.writes());
      span.setAttribute("kdra.outcome", outcome.name());
      if (outcome == SliceWriter.Outcome.DONE) {
        failures.remove(key);
      } else {
        retryLater(key);
      }
    } finally {
      metrics.reconcileTimer().record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
      span.end();
    }
  }

  /**
   * The desired pool: outer empty = leave the pool alone for now; inner empty = it should not
   * exist.
   */
  private Optional<Optional<DesiredPool>> desired(PoolKey key) {
    Instant now = clock.instant();
    Optional<NetworkPoolSpec> network = planner.settings().networkPools().stream()
        .filter(p -> p.driver().equals(key.driver()) && p.name().equals(key.pool())).findFirst();
    String sourceNode = network.map(NetworkPoolSpec::sourceNode).orElse(key.pool());
    Optional<NodeInventory> inventory = store.get(key.driver(), sourceNode)
        .filter(i -> planner.poolKeyOf(i.driver(), i.nodeName()).equals(key));
    if (inventory.isPresent()) {
      NodeInventory i = inventory.get();
      return Optional.of(planner.planPool(i, cache.node(i.nodeName()).orElse(null), now));
    }
    if (!planner.settings().drivers().contains(key.driver())) {
      return Optional.empty();
    }
    boolean nodeGone = network.isEmpty() && cache.node(key.pool()).isEmpty();
    boolean graceOver = now.isAfter(writingSince.plus(planner.settings().staleRemoveAfter()));
    return nodeGone || graceOver ? Optional.of(Optional.empty()) : Optional.empty();
  }

  private void retryLater(PoolKey key) {
    int n = failures.merge(key, 1, Integer::sum);
    long delay = Math.min(MAX_BACKOFF.toMillis(), MIN_BACKOFF.toMillis() << Math.min(n - 1, 16));
    worker.schedule(() -> enqueue(key), delay, TimeUnit.MILLISECONDS);
  }

  @Override
  public void close() {
    worker.shutdownNow();
  }
}
