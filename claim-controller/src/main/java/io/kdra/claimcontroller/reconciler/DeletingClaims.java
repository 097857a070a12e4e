package io.kdra.claimcontroller.reconciler;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.jboss.logging.Logger;

/**
 * Releases claims marked for deletion, which the operator SDK never dispatches to a reconciler
 * without a finalizer of its own (JOSDK's {@code triggerReconcilerOnAllEvents} would, but
 * quarkus-operator-sdk 7.7 does not pass that setting on to the running controller).
 *
 * <p>A claim being deleted is offered when one of its pods changes (a pod deleted while the claim
 * waits on it), and found by a sweep over the informer's cache every {@link #SWEEP_INTERVAL}
 * (claims whose pods were gone before the deletion was asked, a release that failed, claims left by
 * a previous leader). Each runs the reconciler's own release, one claim at a time, on the leader
 * only; a claim already queued is not queued twice.
 */
final class DeletingClaims implements AutoCloseable {

  /** The longest a claim marked for deletion waits for its release once nothing holds it. */
  static final Duration SWEEP_INTERVAL = Duration.ofSeconds(5);

  private static final Logger LOG = Logger.getLogger(DeletingClaims.class);

  private final IndexerResourceCache<ResourceClaim> claims;
  private final Predicate<ResourceClaim> ours;
  private final Consumer<ResourceClaim> release;
  private final BooleanSupplier leading;
  private final BooleanSupplier synced;
  private final Set<ResourceID> queued = ConcurrentHashMap.newKeySet();
  private final ScheduledExecutorService worker =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "deleting-claims");
            t.setDaemon(true);
            return t;
          });

  private DeletingClaims(
      IndexerResourceCache<ResourceClaim> claims,
      Predicate<ResourceClaim> ours,
      Consumer<ResourceClaim> release,
      BooleanSupplier leading,
      BooleanSupplier synced) {
    this.claims = claims;
    this.ours = ours;
    this.release = release;
    this.leading = leading;
    this.synced = synced;
  }

  /**
   * Starts the sweep over {@code claims} every {@code interval}; sweeps wait until {@code synced}
   * says the claims' informer has synced.
   */
  static DeletingClaims start(
      IndexerResourceCache<ResourceClaim> claims,
      Predicate<ResourceClaim> ours,
      Consumer<ResourceClaim> release,
      BooleanSupplier leading,
      BooleanSupplier synced,
      Duration interval) {
    DeletingClaims d = new DeletingClaims(claims, ours, release, leading, synced);
    d.worker.scheduleWithFixedDelay(
        d::sweep, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
    return d;
  }

  /** Queues {@code claim} for release if it is being deleted and this controller's to clean. */
  void offer(ResourceClaim claim) {
    if (claim.getMetadata().getDeletionTimestamp() == null || !ours.test(claim)) {
      return;
    }
    ResourceID id = ResourceID.fromResource(claim);
    if (queued.add(id)) {
      try {
        worker.execute(() -> releaseQueued(id));
      } catch (RejectedExecutionException e) {
        queued.remove(id); // shutting down
      }
    }
  }

  private void sweep() {
    if (!synced.getAsBoolean()) {
      return;
    }
    try {
      claims.list(c -> c.getMetadata().getDeletionTimestamp() != null).forEach(this::offer);
    } catch (RuntimeException e) {
      LOG.warnf(
          "sweeping claims being deleted failed, retrying in %s: %s", SWEEP_INTERVAL, e.toString());
    }
  }

  private void releaseQueued(ResourceID id) {
    queued.remove(id);
    if (!leading.getAsBoolean()) {
      return;
    }
    claims
        .get(id)
        .ifPresent(
            claim -> {
              try {
                release.accept(claim);
              } catch (RuntimeException e) {
                // a conflict or an unreachable API server: the next sweep tries again
                LOG.infof(
                    "releasing claim %s, which is being deleted, failed; retrying within %s: %s",
                    id, SWEEP_INTERVAL, e.getMessage());
              }
            });
  }

  @Override
  public void close() {
    worker.shutdownNow();
  }
}
