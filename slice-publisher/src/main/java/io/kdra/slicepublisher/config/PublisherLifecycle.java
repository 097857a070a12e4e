package io.kdra.slicepublisher.config;

import io.fabric8.kubernetes.client.KubernetesClient;
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
import java.util.concurrent.CompletableFuture;
import org.jboss.logging.Logger;

/**
 * Start-up order and leadership: informers start at once on every replica (a standby keeps warm
 * caches); once they have synced, the replica either becomes the writer (leader election off) or
 * campaigns for the Lease and becomes the writer when it wins. Losing the lease ends the process: a
 * writer that may be stale must stop at once, and a restart is the simplest way to drop every
 * in-memory state. On shutdown the leader stops writing, then releases the Lease ({@link
 * Leadership}), so that a standby takes over at its next retry. This class alone closes the
 * reconciler and the cache, in that order.
 */
@ApplicationScoped
public class PublisherLifecycle implements WritingReplica {

  private static final Logger LOG = Logger.getLogger(PublisherLifecycle.class);
  private static final long SYNC_POLL_MS = 100;

  @Inject ClusterCache cache;
  @Inject PoolReconciler reconciler;
  @Inject KubernetesClient client;
  @Inject ElectionWiring election;
  @Inject MeterRegistry registry;

  private volatile Leadership leadership;
  private volatile boolean stopping;
  private volatile CompletableFuture<?> elector;

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
    Leadership l = election.leadership(() -> Quarkus.asyncExit(1));
    leadership = l;
    if (!election.electing()) {
      reconciler.start();
      return;
    }
    elector =
        client
            .leaderElector()
            .withConfig(election.electorConfig(l, reconciler::start))
            .build()
            .start();
    if (stopping) {
      // the shutdown came while the election started and may have missed it
      l.shuttingDown();
      elector.cancel(true);
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
    CompletableFuture<?> e = elector;
    if (e != null) {
      // fabric8 ends the leadership on this thread (onStopLeading), so the release is done
      // before the client closes
      e.cancel(true);
    }
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
