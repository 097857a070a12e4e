package io.kdra.slicepublisher.config;

import io.kdra.leadership.ElectionWiring;
import io.kdra.leadership.Leadership;
import io.kdra.slicepublisher.grpc.WritingReplica;
import io.kdra.slicepublisher.k8s.ClusterCache;
import io.kdra.slicepublisher.k8s.PoolReconciler;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import org.jboss.logging.Logger;

/**
 * Start-up order and leadership: informers start at once on every replica (a standby keeps warm
 * caches); once they have synced, the replica either becomes the writer (leader election off) or
 * campaigns for the Lease and becomes the writer when it wins. Losing the Lease while running (its
 * renewals failed past the renew deadline, as in an API-server outage) stops the writing at once
 * and the replica campaigns again, in the process: it keeps its warm caches, stays ready, and
 * writes again when it wins. On shutdown the leader stops writing, then releases the Lease ({@link
 * Leadership}), so that a standby takes over at its next retry. This class alone closes the
 * reconciler and the cache, in that order.
 */
@ApplicationScoped
public class PublisherLifecycle implements WritingReplica {

  private static final Logger LOG = Logger.getLogger(PublisherLifecycle.class);
  private static final long SYNC_POLL_MS = 100;

  @Inject ClusterCache cache;
  @Inject PoolReconciler reconciler;
  @Inject ElectionWiring election;
  @Inject MeterRegistry registry;

  private volatile Leadership leadership;
  private volatile boolean stopping;

  void onStart(@Observes StartupEvent event) {
    election.registerMeters(registry, () -> leadership);
    cache.start();
    Thread t = new Thread(this::awaitSyncThenLead, "slice-publisher-startup");
    t.setDaemon(true);
    t.start();
  }

  private void awaitSyncThenLead() {
    try {
      while (!cache.synced() && !stopping) {
        Thread.sleep(SYNC_POLL_MS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return;
    }
    if (stopping) {
      return;
    }
    LOG.info("Node and ResourceSlice caches synced");
    try {
      lead();
    } catch (RuntimeException e) {
      // on this thread nobody else would see it, and a replica that never writes looks healthy
      LOG.errorf(e, "cannot take part in the leader election: %s", e.getMessage());
      Quarkus.asyncExit(1);
    }
  }

  private void lead() {
    // losing the Lease stops the writing; the wiring then campaigns again, and each win
    // starts it again
    Leadership l = election.leadership(reconciler::stop);
    leadership = l;
    if (!election.electing()) {
      reconciler.start();
      return;
    }
    election.elect(l, reconciler::start);
    if (stopping) {
      // the shutdown came while the election started and may have missed it
      l.shuttingDown();
      election.stopElections();
    }
  }

  void onStop(@Observes ShutdownEvent event) {
    stopping = true;
    Leadership l = leadership;
    if (l != null) {
      l.shuttingDown();
    }
    // writing ends before the Lease goes: a standby must never overlap with a last write
    reconciler.close();
    // the release is done before this returns, so before the client closes
    election.stopElections();
    cache.close();
  }

  /** True when this replica writes slices and so accepts snapshots. */
  @Override
  public boolean writer() {
    Leadership l = leadership;
    return l != null && l.leading() && reconciler.started();
  }

  /** True when the caches have synced (on the leader and on standbys alike). */
  public boolean ready() {
    return cache.synced();
  }
}
