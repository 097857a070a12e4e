package io.kdra.claimcontroller.config;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.claimcontroller.domain.SchedulerFeatures;
import io.kdra.claimcontroller.k8s.ApiPodBinder;
import io.kdra.claimcontroller.k8s.ClaimWriter;
import io.kdra.claimcontroller.k8s.PodBinder;
import io.kdra.claimcontroller.k8s.PodWriter;
import io.kdra.claimcontroller.k8s.PreemptionWriter;
import io.kdra.claimcontroller.k8s.TaintEvictionWriter;
import io.kdra.claimcontroller.scheduling.DraCorePodAllocator;
import io.kdra.claimcontroller.scheduling.PodAllocator;
import io.kdra.claimcontroller.scheduling.RecentWrites;
import io.kdra.core.alloc.AllocatorFeatures;
import io.kdra.core.alloc.AllocatorOptions;
import io.kdra.events.EventRecorder;
import io.quarkus.arc.DefaultBean;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.time.Clock;
import java.util.UUID;
import org.jboss.logging.Logger;

/** Wires the adapters from the typed configuration; tests replace single beans. */
@ApplicationScoped
public class ControllerBeans {

  private static final Logger LOG = Logger.getLogger(ControllerBeans.class);

  @Produces
  @DefaultBean
  @ApplicationScoped
  Clock clock() {
    return Clock.systemUTC();
  }

  @Produces
  @ApplicationScoped
  RecentWrites recentWrites() {
    return new RecentWrites();
  }

  @Produces
  @ApplicationScoped
  ClaimWriter claimWriter(KubernetesClient client, ClaimControllerConfig config) {
    return new ClaimWriter(client, config.schedulerName(), config.retry().conflictRetries());
  }

  @Produces
  @ApplicationScoped
  PodWriter podWriter(KubernetesClient client, ClaimControllerConfig config, Clock clock) {
    return new PodWriter(client, config.retry().conflictRetries(), clock);
  }

  @Produces
  @ApplicationScoped
  PreemptionWriter preemptionWriter(
      KubernetesClient client, ClaimControllerConfig config, Clock clock) {
    return new PreemptionWriter(client, clock, config.retry().conflictRetries());
  }

  @Produces
  @ApplicationScoped
  TaintEvictionWriter taintEvictionWriter(KubernetesClient client, Clock clock) {
    return new TaintEvictionWriter(client, clock);
  }

  @Produces
  @DefaultBean
  @ApplicationScoped
  PodBinder podBinder(KubernetesClient client) {
    return new ApiPodBinder(client);
  }

  /** Singleton: the shared recorder has no no-args constructor for a client proxy. */
  @Produces
  @Singleton
  EventRecorder eventRecorder(KubernetesClient client, ClaimControllerConfig config, Clock clock) {
    return new EventRecorder(client, config.schedulerName(), clock);
  }

  /**
   * The allocator's features: Kubernetes 1.37's defaults with the configured feature gates applied.
   *
   * @throws IllegalArgumentException naming the property and the gate when one is unknown or its
   *     value is no bool
   */
  @Produces
  @Singleton
  AllocatorFeatures allocatorFeatures(ClaimControllerConfig config) {
    try {
      return AllocatorFeatures.defaults().withGates(config.allocator().featureGates().orElse(""));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "kdra.claim-controller.allocator.feature-gates: " + e.getMessage(), e);
    }
  }

  /**
   * The scheduler's features beyond the allocator's: Kubernetes 1.37's defaults with the configured
   * feature gates applied.
   *
   * @throws IllegalArgumentException naming the property and the gate when one is unknown or its
   *     value is no bool
   */
  @Produces
  @Singleton
  SchedulerFeatures schedulerFeatures(ClaimControllerConfig config) {
    try {
      return SchedulerFeatures.defaults().withGates(config.featureGates().orElse(""));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "kdra.claim-controller.feature-gates: " + e.getMessage(), e);
    }
  }

  /** Creates the features at start-up, so that a bad gate stops it, and says which are on. */
  void logFeatures(
      @Observes StartupEvent started, AllocatorFeatures features, SchedulerFeatures scheduler) {
    LOG.infof(
        "allocator feature gates enabled: %s",
        features.enabledNames().isEmpty() ? "none" : String.join(",", features.enabledNames()));
    LOG.infof(
        "scheduler feature gates enabled: %s",
        scheduler.enabledNames().isEmpty() ? "none" : String.join(",", scheduler.enabledNames()));
  }

  /**
   * dra-core's allocator with {@code features}; share IDs (consumable capacity) are random UUIDs,
   * as upstream's.
   */
  @Produces
  @DefaultBean
  @ApplicationScoped
  PodAllocator podAllocator(AllocatorFeatures features) {
    return new DraCorePodAllocator(
        AllocatorOptions.defaults(features, () -> UUID.randomUUID().toString()));
  }
}
