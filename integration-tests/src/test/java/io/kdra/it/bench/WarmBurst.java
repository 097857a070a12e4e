package io.kdra.it.bench;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.support.ServiceProcess;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.IntStream;

/**
 * The {@link BenchPhase#WARM} phase's unmeasured burst: the run's pods under other names ({@link
 * #PREFIX}), created and bound, then deleted; returns once they and their claims are gone and no
 * device is allocated, so that the measured burst finds the cluster as a cold run does. Upstream's
 * kube-controller-manager runs no garbage collector here, so its resourceclaim controller
 * deallocates the claims of deleted pods but leaves them; the benchmark deletes them, as the
 * garbage collector would (ours deletes them itself).
 */
final class WarmBurst {

  /** The warm burst's pods and PodGroups are named as the measured ones, with this first. */
  static final String PREFIX = "warm-";

  private final KubernetesClient client;
  private final PodTraffic traffic;
  private final BenchWorkload workload;
  private final String schedulerName;
  private final int pods;
  private final SchedulingBenchmark.Options options;
  private final Consumer<String> log;

  WarmBurst(
      KubernetesClient client,
      PodTraffic traffic,
      BenchWorkload workload,
      String schedulerName,
      int pods,
      SchedulingBenchmark.Options options,
      Consumer<String> log) {
    this.client = client;
    this.traffic = traffic;
    this.workload = workload;
    this.schedulerName = schedulerName;
    this.pods = pods;
    this.options = options;
    this.log = log;
  }

  void run() {
    List<HasMetadata> groups = List.copyOf(workload.podGroups(pods, PREFIX));
    groups.forEach(g -> client.resource(g).create());
    PodTraffic.Batch batch =
        traffic.create(
            IntStream.range(0, pods)
                .mapToObj(i -> workload.pod(PREFIX, i, schedulerName))
                .toList());
    String stop =
        traffic.awaitBound(
            batch,
            batch.start + TimeUnit.SECONDS.toNanos(options.deadlineSeconds()),
            options.deadlineSeconds(),
            options.stallSeconds());
    if (stop != null) {
      throw new IllegalStateException("the warm burst: " + stop);
    }
    log.accept(
        String.format(
            "warm burst: %d pods bound in %.1f s",
            pods, (traffic.lastBound(batch.names, batch.start) - batch.start) / 1e9));
    long t0 = System.nanoTime();
    traffic.delete(batch.names);
    groups.forEach(g -> client.resource(g).delete());
    awaitSettled();
    log.accept(String.format("warm burst gone in %.1f s", (System.nanoTime() - t0) / 1e9));
  }

  /**
   * Deletes the warm pods' claims left (each once) and waits until {@link #unsettled} says nothing;
   * fails when what is left did not change for {@code --stall}.
   */
  private void awaitSettled() {
    long stall = TimeUnit.SECONDS.toNanos(options.stallSeconds());
    Set<String> deleted = new HashSet<>();
    String last = null;
    long lastProgress = System.nanoTime();
    String why;
    while ((why = unsettled(pods(), claims())) != null) {
      long now = System.nanoTime();
      if (!why.equals(last)) {
        last = why;
        lastProgress = now;
      } else if (now - lastProgress > stall) {
        throw new IllegalStateException(
            "the warm burst not gone: " + why + ", unchanged for " + options.stallSeconds() + " s");
      }
      for (String claim : claimsOfWarmPods(claims())) {
        if (deleted.add(claim)) {
          client
              .resources(ResourceClaim.class)
              .inNamespace(BenchWorkload.NAMESPACE)
              .withName(claim)
              .delete();
        }
      }
      ServiceProcess.sleep(200);
    }
  }

  private List<Pod> pods() {
    return client.pods().inNamespace(BenchWorkload.NAMESPACE).list().getItems();
  }

  private List<ResourceClaim> claims() {
    return client
        .resources(ResourceClaim.class)
        .inNamespace(BenchWorkload.NAMESPACE)
        .list()
        .getItems();
  }

  /**
   * Null once none of {@code pods} is the warm burst's, none of {@code claims} was made for one of
   * its pods and none is allocated (no measured pod exists yet, so every allocation is the warm
   * burst's, shared claims included); else what is left.
   */
  static String unsettled(List<Pod> pods, List<ResourceClaim> claims) {
    long warmPods = pods.stream().filter(p -> p.getMetadata().getName().startsWith(PREFIX)).count();
    long theirClaims = claimsOfWarmPods(claims).size();
    long allocated =
        claims.stream()
            .filter(c -> c.getStatus() != null && c.getStatus().getAllocation() != null)
            .count();
    if (warmPods == 0 && theirClaims == 0 && allocated == 0) {
      return null;
    }
    return warmPods
        + " pods of the warm burst, "
        + theirClaims
        + " of their claims and "
        + allocated
        + " allocated claims left";
  }

  /** The names of the claims made for a pod of the warm burst (their controlling owner). */
  static List<String> claimsOfWarmPods(List<ResourceClaim> claims) {
    return claims.stream()
        .filter(
            c ->
                c.getMetadata().getOwnerReferences().stream()
                    .anyMatch(WarmBurst::isWarmPodController))
        .map(c -> c.getMetadata().getName())
        .toList();
  }

  private static boolean isWarmPodController(OwnerReference ref) {
    return Boolean.TRUE.equals(ref.getController())
        && "Pod".equals(ref.getKind())
        && ref.getName().startsWith(PREFIX);
  }
}
