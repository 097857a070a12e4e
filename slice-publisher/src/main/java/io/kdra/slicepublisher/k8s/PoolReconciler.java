package io.kdra.slicepublisher.k8s;

import io.kdra.slicepublisher.domain.DesiredPool;
import io.kdra.slicepublisher.domain.InventoryStore;
import io.kdra.slicepublisher.domain.PoolDecider;
import io.kdra.slicepublisher.domain.PoolKey;
import io.kdra.slicepublisher.domain.PoolOutcome;
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
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jboss.logging.Logger;

/**
 * Keeps the stored ResourceSlices equal to the planned ones, one pool at a time. It only
 * orchestrates: the pool's outcome from {@link PoolDecider} (leave, remove, publish, and when to
 * look again), the diff from {@link PoolSyncPlanner}, the writes through {@link SliceWriter}, the
 * slices it leaves out as invalid to {@link RefusedSlices}.
 *
 * <p>Work is keyed by pool and deduplicated; one worker thread does all of it, so writes to one
 * pool never race and the global write rate is easy to bound. Triggers: a snapshot, a change of a
 * slice or a Node, the instant an outcome says the pool may change by time alone (a grace or
 * staleness timer), and a periodic resync.
 */
public final class PoolReconciler implements AutoCloseable {

  private static final Logger LOG = Logger.getLogger(PoolReconciler.class);
  private static final Duration MIN_BACKOFF = Duration.ofMillis(100);
  private static final Duration MAX_BACKOFF = Duration.ofSeconds(30);

  /** Past a recheck instant, so that the plan made then sees the timer as expired. */
  private static final Duration RECHECK_MARGIN = Duration.ofMillis(50);

  private final ClusterCache cache;
  private final InventoryStore store;
  private final SlicePlanner planner;
  private final PoolDecider decider;
  private final SliceWriter writer;
  private final DroppedFields dropped;
  private final PublisherMetrics metrics;
  private final RefusedSlices refused;
  private final Tracer tracer;
  private final Clock clock;
  private final Duration resyncPeriod;
  private static final String WORKER_THREAD = "slice-publisher-reconciler";

  /** Bounds the wait for a write under way at {@link #stop}: longer than a client request. */
  private static final Duration STOP_WAIT = Duration.ofSeconds(30);

  private final ScheduledExecutorService worker;
  private final Set<PoolKey> pending = new LinkedHashSet<>();
  private final Map<PoolKey, Integer> failures = new HashMap<>();

  /** The earliest recheck scheduled per pool; the worker thread's only, as failures. */
  private final Map<PoolKey, Instant> rechecks = new HashMap<>();

  private volatile Instant writingSince;
  private volatile boolean busy;

  /** The periodic resync while writing; guarded by this. */
  private ScheduledFuture<?> resync;

  private boolean listening;

  public PoolReconciler(
      ClusterCache cache,
      InventoryStore store,
      SlicePlanner planner,
      SliceWriter writer,
      DroppedFields dropped,
      PublisherMetrics metrics,
      Tracer tracer,
      Clock clock,
      Duration resyncPeriod) {
    this.cache = cache;
    this.store = store;
    this.planner = planner;
    this.decider = new PoolDecider(planner);
    this.writer = writer;
    this.dropped = dropped;
    this.metrics = metrics;
    this.refused = new RefusedSlices(metrics);
    this.tracer = tracer;
    this.clock = clock;
    this.resyncPeriod = resyncPeriod;
    this.worker =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, WORKER_THREAD);
              t.setDaemon(true);
              return t;
            });
  }

  /**
   * Starts writing: from now on this replica is the single writer. Idempotent; again after {@link
   * #stop}. Call once the caches have synced (a sync against an empty cache would recreate every
   * slice).
   */
  public synchronized void start() {
    if (writingSince != null) {
      return;
    }
    // a new term: pools without inventory get the new leader's grace again, since drivers
    // reconnect to whoever leads
    writingSince = clock.instant();
    if (!listening) {
      cache.onPoolChange(this::enqueue);
      cache.onNodeChange(this::nodeChanged);
      listening = true;
    }
    resync =
        worker.scheduleWithFixedDelay(
            this::resyncAll, 0, resyncPeriod.toMillis(), TimeUnit.MILLISECONDS);
    LOG.infof("writing ResourceSlices (resync every %s)", resyncPeriod);
  }

  /**
   * Stops writing until the next {@link #start}: this replica no longer leads. What is queued is
   * dropped (the next start resyncs every pool); a write already under way ends first.
   */
  public synchronized void stop() {
    if (writingSince == null) {
      return;
    }
    resync.cancel(false);
    synchronized (pending) {
      // under the queue's lock, so that no enqueue slips a key in after the clear
      writingSince = null;
      pending.clear();
    }
    awaitWriteUnderWay();
    LOG.info("stopped writing ResourceSlices: this replica no longer leads");
  }

  /**
   * Waits until the pass the worker may be running has ended, so that no write lands after {@link
   * #stop} returns. The worker runs one task at a time: an empty task queued now runs after it.
   */
  private void awaitWriteUnderWay() {
    if (Thread.currentThread().getName().equals(WORKER_THREAD)) {
      return;
    }
    try {
      worker.submit(() -> {}).get(STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | RejectedExecutionException e) {
      // shut down: nothing runs any more
    } catch (TimeoutException e) {
      LOG.warnf(
          "a ResourceSlice write still runs %s after this replica stopped leading", STOP_WAIT);
    }
  }

  public boolean started() {
    return writingSince != null;
  }

  /** Asks for {@code key} to be reconciled soon. Thread-safe, cheap, deduplicated. */
  public void enqueue(PoolKey key) {
    synchronized (pending) {
      if (writingSince == null || !pending.add(key)) {
        return;
      }
    }
    worker.execute(this::drainOne);
  }

  /** The pools an inventory of {@code driver} on {@code node} feeds: to call after storing it. */
  public void inventoryChanged(String driver, String node) {
    enqueue(planner.poolKeyOf(driver, node));
  }

  /** True when nothing is queued (for tests and benchmarks). */
  public boolean idle() {
    synchronized (pending) {
      return pending.isEmpty() && !busy;
    }
  }

  private void nodeChanged(String node) {
    if (writingSince == null) {
      return;
    }
    PoolDecider.NodeChange change = decider.nodeChanged(node, cache.node(node), store.all());
    change.forget().forEach(store::remove);
    change.recheck().forEach(this::enqueue);
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
    Span span =
        tracer
            .spanBuilder("reconcile pool")
            .setAttribute("kdra.driver", key.driver())
            .setAttribute("kdra.pool", key.pool())
            .startSpan();
    Instant since = writingSince;
    if (since == null) {
      span.setAttribute("kdra.outcome", "not leading");
      span.end();
      return;
    }
    long start = System.nanoTime();
    try (Scope ignored = span.makeCurrent()) {
      PoolOutcome outcome = decider.decide(key, store, cache::node, since, clock.instant());
      outcome.recheckAt().ifPresent(at -> recheckAt(key, at));
      if (outcome instanceof PoolOutcome.Leave) {
        span.setAttribute("kdra.outcome", "waiting for inventory");
        return;
      }
      Optional<DesiredPool> desired =
          outcome instanceof PoolOutcome.Publish p ? Optional.of(p.pool()) : Optional.empty();
      var plan = PoolSyncPlanner.plan(desired, cache.slices(key), dropped::sameContent);
      span.setAttribute("kdra.writes", plan.writes().size());
      span.setAttribute("kdra.generation", plan.generation());
      span.setAttribute("kdra.refused", plan.refused().size());
      refused.report(key, plan.refused());
      SliceWriter.Outcome written = writer.apply(plan.writes());
      span.setAttribute("kdra.outcome", written.name());
      if (written == SliceWriter.Outcome.DONE) {
        failures.remove(key);
      } else {
        retryLater(key);
      }
    } finally {
      metrics.reconcileTimer().record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
      span.end();
    }
  }

  /** Plans {@code key} again just after {@code at}, unless an earlier recheck is pending. */
  private void recheckAt(PoolKey key, Instant at) {
    Instant pending = rechecks.get(key);
    if (pending != null && !pending.isAfter(at)) {
      return;
    }
    rechecks.put(key, at);
    long delay =
        Math.max(0, Duration.between(clock.instant(), at).toMillis()) + RECHECK_MARGIN.toMillis();
    worker.schedule(
        () -> {
          rechecks.remove(key, at);
          enqueue(key);
        },
        delay,
        TimeUnit.MILLISECONDS);
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
