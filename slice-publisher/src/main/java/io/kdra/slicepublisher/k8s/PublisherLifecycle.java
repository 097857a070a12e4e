package io.kdra.slicepublisher.k8s;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import io.kdra.slicepublisher.config.PublisherConfig;
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
 * caches); once they have synced, the replica either becomes the writer (leader election off)
 * or campaigns for the Lease and becomes the writer when it wins. Losing the lease ends the
 * process: a writer that may be stale must stop at once, and a restart is the simplest way to
 * drop every in-memory state.
 */
@ApplicationScoped
public class PublisherLifecycle {

  private static final Logger LOG = Logger.getLogger(PublisherLifecycle.class);
  private static final long SYNC_POLL_MS = 100;

  @Inject ClusterCache cache;
  @Inject PoolReconciler reconciler;
  @Inject KubernetesClient client;
  @Inject PublisherConfig config;

  private volatile boolean leader;
  private volatile boolean stopping;
  private volatile CompletableFuture<?> election;

  void onStart(@Observes StartupEvent event) {
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
    PublisherConfig.LeaderElection le = config.leaderElection();
    if (!le.enabled()) {
      lead();
      return;
    }
    election = client.leaderElector().withConfig(new LeaderElectionConfigBuilder()
        .withName(le.leaseName())
        .withLock(new LeaseLock(le.leaseNamespace(), le.leaseName(), le.identity()))
        .withLeaseDuration(le.leaseDuration())
        .withRenewDeadline(le.renewDeadline())
        .withRetryPeriod(le.retryPeriod())
        .withReleaseOnCancel(true)
        .withLeaderCallbacks(new LeaderCallbacks(this::lead, this::lostLease,
            id -> LOG.infof("slice-publisher leader is %s", id)))
        .build()).build().start();
  }

  private void lead() {
    leader = true;
    reconciler.start();
  }

  private void lostLease() {
    leader = false;
    if (!stopping) {
      LOG.error("lost the slice-publisher lease: exiting so that only the leader writes");
      Quarkus.asyncExit(1);
    }
  }

  void onStop(@Observes ShutdownEvent event) {
    stopping = true;
    reconciler.close();
    CompletableFuture<?> e = election;
    if (e != null) {
      e.cancel(true);
    }
    cache.close();
  }

  /** True when this replica writes slices and so accepts snapshots. */
  public boolean writer() {
    return leader && reconciler.started();
  }

  /** True when the caches have synced (on the leader and on standbys alike). */
  public boolean ready() {
    return cache.synced();
  }
}
