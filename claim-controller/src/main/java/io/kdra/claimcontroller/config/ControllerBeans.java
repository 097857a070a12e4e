package io.kdra.claimcontroller.config;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.claimcontroller.k8s.ApiPodBinder;
import io.kdra.claimcontroller.k8s.ClaimWriter;
import io.kdra.claimcontroller.k8s.EventRecorder;
import io.kdra.claimcontroller.k8s.PodBinder;
import io.kdra.claimcontroller.k8s.PodWriter;
import io.kdra.claimcontroller.scheduling.PodAllocator;
import io.kdra.claimcontroller.scheduling.RecentWrites;
import io.kdra.claimcontroller.scheduling.DraCorePodAllocator;
import io.kdra.core.alloc.AllocatorFeatures;
import io.kdra.core.alloc.AllocatorOptions;
import io.quarkus.arc.DefaultBean;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import java.time.Clock;
import java.time.Duration;
import java.util.UUID;

/** Wires the adapters from the typed configuration; tests replace single beans. */
@ApplicationScoped
public class ControllerBeans {

  /** How long own writes are remembered while the informers catch up. */
  private static final Duration RECENT_WRITES_TTL = Duration.ofMinutes(1);

  @Produces
  @DefaultBean
  @ApplicationScoped
  Clock clock() {
    return Clock.systemUTC();
  }

  @Produces
  @ApplicationScoped
  RecentWrites recentWrites(Clock clock) {
    return new RecentWrites(RECENT_WRITES_TTL, clock);
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
  @DefaultBean
  @ApplicationScoped
  PodBinder podBinder(KubernetesClient client) {
    return new ApiPodBinder(client);
  }

  @Produces
  @ApplicationScoped
  EventRecorder eventRecorder(KubernetesClient client, ClaimControllerConfig config,
      Clock clock) {
    return new EventRecorder(client, config.schedulerName(), clock);
  }

  /**
   * dra-core's allocator with Kubernetes 1.36's default features; share IDs (consumable
   * capacity) are random UUIDs, as upstream's.
   */
  @Produces
  @DefaultBean
  @ApplicationScoped
  PodAllocator podAllocator() {
    return new DraCorePodAllocator(AllocatorOptions.defaults(AllocatorFeatures.defaults(),
        () -> UUID.randomUUID().toString()));
  }
}
