package io.kdra.slicepublisher.k8s;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import io.kdra.leadership.Leadership;
import io.kdra.leadership.LeadershipMeters;
import io.kdra.leadership.LeaseRelease;
import io.kdra.slicepublisher.config.PublisherConfig;
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
 * caches); once they have synced, the replica either becomes the writer (leader election off)
 * or campaigns for the Lease and becomes the writer when it wins. Losing the lease ends the
 * process: a writer that may be stale must stop at once, and a restart is the simplest way to
 * drop every in-memory state. On shutdown the leader stops writing, then releases the Lease
 * ({@link Leadership}), so that a standby takes over at its next retry.
 */
@ApplicationScoped
public class PublisherLifecycle {

  private static final Logger LOG = Logger.getLogger(PublisherLifecycle.class);
  private static final long SYNC_POLL_MS = 100;
  private static final String COMPONENT = "slice-publisher";

  @Inject ClusterCache cache;
  @Inject PoolReconciler reconciler;
  @Inject KubernetesClient client;
  @Inject PublisherConfig config;
  @Inject MeterRegistry registry;

  private volatile Leadership leadership;
  private volatile boolean stopping;
  private volatile CompletableFuture<?> election;

  void onStart(@Observes StartupEvent event) {
    LeadershipMeters.register(registry, COMPONENT, () -> leadership);
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
      leadership = Leadership.single(COMPONENT, le.identity());
      reconciler.start();
      return;
    }
    LeaseRelease release = new LeaseRelease(client, le.leaseNamespace(), le.leaseName(),
        le.identity());
    Leadership elected = Leadership.elected(COMPONENT, le.identity(), release::release,
        () -> Quarkus.asyncExit(1));
    leadership = elected;
    // releaseOnCancel off: fabric8's release patches the Lease, which keeps the holder, so a
    // standby would still wait a whole lease duration; Leadership releases it with an update
    election = client.leaderElector().withConfig(new LeaderElectionConfigBuilder()
        .withName(le.leaseName())
        .withLock(new LeaseLock(le.leaseNamespace(), le.leaseName(), le.identity()))
        .withLeaseDuration(le.leaseDuration())
        .withRenewDeadline(le.renewDeadline())
        .withRetryPeriod(le.retryPeriod())
        .withReleaseOnCancel(false)
        .withLeaderCallbacks(elected.callbacks(reconciler::start))
        .build()).build().start();
    if (stopping) {
      // the shutdown came while the election started and may have missed it
      elected.shuttingDown();
      election.cancel(true);
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
    CompletableFuture<?> e = election;
    if (e != null) {
      // fabric8 ends the leadership on this thread (onStopLeading), so the release is done
      // before the client closes
      e.cancel(true);
    }
    cache.close();
  }

  /** True when this replica writes slices and so accepts snapshots. */
  public boolean writer() {
    Leadership l = leadership;
    return l != null && l.leading() && reconciler.started();
  }

  /** True when the caches have synced (on the leader and on standbys alike). */
  public boolean ready() {
    return cache.synced();
  }
}
