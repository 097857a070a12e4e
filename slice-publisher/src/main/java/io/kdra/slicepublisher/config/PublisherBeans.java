package io.kdra.slicepublisher.config;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.leadership.ElectionWiring;
import io.kdra.leadership.LeaseFence;
import io.kdra.slicepublisher.domain.InventoryStore;
import io.kdra.slicepublisher.domain.PlannerSettings;
import io.kdra.slicepublisher.domain.PlannerSettings.NetworkPoolSpec;
import io.kdra.slicepublisher.domain.SlicePlanner;
import io.kdra.slicepublisher.grpc.DriverAuthenticator;
import io.kdra.slicepublisher.grpc.DriverIdentity;
import io.kdra.slicepublisher.grpc.KubernetesTokenReviewer;
import io.kdra.slicepublisher.grpc.SnapshotConverter;
import io.kdra.slicepublisher.grpc.SnapshotIntake;
import io.kdra.slicepublisher.grpc.TokenReviewer;
import io.kdra.slicepublisher.k8s.ClusterCache;
import io.kdra.slicepublisher.k8s.DroppedFields;
import io.kdra.slicepublisher.k8s.PoolReconciler;
import io.kdra.slicepublisher.k8s.SliceWriter;
import io.kdra.slicepublisher.observability.PublisherMetrics;
import io.opentelemetry.api.trace.Tracer;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.time.Clock;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * Wires the plain (framework-free) classes from configuration, so that they stay testable without
 * Quarkus.
 */
@ApplicationScoped
public class PublisherBeans {

  private static final Logger LOG = Logger.getLogger(PublisherBeans.class);

  @Produces
  @Singleton
  Clock clock() {
    return Clock.systemUTC();
  }

  /** The publisher runs fabric8's elector itself ({@link PublisherLifecycle}). */
  @Produces
  @Singleton
  ElectionWiring election(PublisherConfig c, KubernetesClient client) {
    return new ElectionWiring(
        "slice-publisher",
        "kdra.slice-publisher.leader-election",
        c.leaderElection(),
        client,
        true,
        System.getenv("HOSTNAME"));
  }

  @Produces
  @Singleton
  PlannerSettings settings(PublisherConfig c) {
    List<NetworkPoolSpec> pools =
        c.networkPools().entrySet().stream()
            .map(
                e ->
                    new NetworkPoolSpec(
                        e.getKey(),
                        e.getValue().driver(),
                        e.getValue().sourceNode(),
                        e.getValue().nodeSelector()))
            .sorted(Comparator.comparing(NetworkPoolSpec::name))
            .toList();
    return new PlannerSettings(
        c.drivers(),
        c.unhealthyTaint().key(),
        c.unhealthyTaint().effect(),
        c.stale().taintKey(),
        c.stale().taintEffect(),
        c.stale().taintAfter(),
        c.stale().removeAfter(),
        c.stale().disconnectedTaintAfter(),
        c.nodeLabelAttributes().orElse(List.of()),
        pools,
        c.stale().discoveryIntervals());
  }

  @Produces
  @Singleton
  SlicePlanner planner(PlannerSettings settings) {
    return new SlicePlanner(settings);
  }

  @Produces
  @Singleton
  InventoryStore store() {
    return new InventoryStore();
  }

  /** Started and closed by {@link PublisherLifecycle}. */
  @Produces
  @Singleton
  ClusterCache cache(KubernetesClient client, PlannerSettings settings, PublisherConfig c) {
    return new ClusterCache(client, settings.drivers(), c.sliceFieldSelector());
  }

  @Produces
  @Singleton
  DroppedFields droppedFields() {
    return new DroppedFields();
  }

  @Produces
  @Singleton
  SliceWriter writer(
      KubernetesClient client,
      ClusterCache cache,
      PublisherMetrics metrics,
      DroppedFields dropped,
      PublisherConfig c,
      LeaseFence fence) {
    return new SliceWriter(
        client, cache, metrics, dropped, c.maxWritesPerSecond(), fence::mayWrite);
  }

  /**
   * The second opinion before each write ({@link LeaseFence}): a leader frozen past its lease (a
   * long GC pause, SIGSTOP) runs on with its resync due at once and its caches stale, before its
   * elector has noticed that another replica leads.
   */
  @Produces
  @Singleton
  LeaseFence leaseFence(ElectionWiring election, Clock clock) {
    return election.fence(clock);
  }

  void closeFence(@Disposes LeaseFence fence) {
    fence.close();
  }

  /** Started and closed by {@link PublisherLifecycle}. */
  @Produces
  @Singleton
  PoolReconciler reconciler(
      ClusterCache cache,
      InventoryStore store,
      SlicePlanner planner,
      SliceWriter writer,
      DroppedFields dropped,
      PublisherMetrics metrics,
      Tracer tracer,
      Clock clock,
      PublisherConfig c) {
    return new PoolReconciler(
        cache, store, planner, writer, dropped, metrics, tracer, clock, c.resyncPeriod());
  }

  @Produces
  @Singleton
  SnapshotIntake intake(
      PlannerSettings settings,
      InventoryStore store,
      PoolReconciler reconciler,
      PublisherMetrics metrics,
      Clock clock,
      PublisherConfig c) {
    return new SnapshotIntake(
        settings.drivers(),
        new SnapshotConverter(settings.nodeLabelAttributes().size(), c.maxDevicesPerNode()),
        store,
        i -> reconciler.inventoryChanged(i.driver(), i.nodeName()),
        metrics,
        clock);
  }

  @Produces
  @Singleton
  TokenReviewer reviewer(PublisherConfig c, KubernetesClient client) {
    if (!c.auth().enabled()) {
      LOG.warn(
          "kdra.slice-publisher.auth.enabled is false: any caller may report any node's devices");
      return TokenReviewer.ALLOW_ALL;
    }
    Set<String> accounts = c.auth().serviceAccounts().orElse(Set.of());
    if (accounts.isEmpty()) {
      LOG.warn(
          "kdra.slice-publisher.auth.service-accounts is not set: every driver's report is refused; "
              + "set it to the device-driver's ServiceAccount as namespace:name");
    }
    return new KubernetesTokenReviewer(client, new DriverIdentity(accounts, c.auth().audience()));
  }

  @Produces
  @Singleton
  DriverAuthenticator authenticator(
      TokenReviewer reviewer, PublisherConfig c, Clock clock, StreamExpiries expiries) {
    return new DriverAuthenticator(
        reviewer, c.auth().peerReviewBurst(), c.auth().peerReviewInterval(), clock, expiries);
  }

  @Produces
  @Singleton
  StreamExpiries streamExpiries() {
    return new StreamExpiries();
  }

  void stopStreamExpiries(@Disposes StreamExpiries expiries) {
    expiries.timer.shutdownNow();
  }

  /** Ends driver streams whose token expired; its tasks are cheap (they only close a stream). */
  static final class StreamExpiries implements DriverAuthenticator.Timer {
    private final ScheduledThreadPoolExecutor timer =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread t = new Thread(r, "inventory-stream-expiry");
              t.setDaemon(true);
              return t;
            });

    StreamExpiries() {
      // a stream that ends first cancels its task: drop it at once, not at its due time
      timer.setRemoveOnCancelPolicy(true);
    }

    @Override
    public Runnable schedule(Duration delay, Runnable action) {
      var task = timer.schedule(action, delay.toNanos(), TimeUnit.NANOSECONDS);
      return () -> task.cancel(false);
    }
  }
}
