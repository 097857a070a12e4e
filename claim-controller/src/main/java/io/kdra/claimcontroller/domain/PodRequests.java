package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.kdra.core.model.Quantity;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The CPU and memory a pod requests, as the scheduler counts them: containers summed, restartable
 * init containers (sidecars) added to that sum, plain init containers counted by their peak (each
 * one plus the sidecars started before it), pod-level requests ({@code spec.resources}) in place of
 * that for the resources they name, and the pod overhead on top. Pure.
 *
 * @param cpu requested CPU in cores
 * @param memory requested memory in bytes
 */
public record PodRequests(Quantity cpu, Quantity memory) {

  public static final PodRequests ZERO = new PodRequests(Quantity.ZERO, Quantity.ZERO);

  /**
   * What the scorers count for a container that requests no CPU or no memory (upstream's {@code
   * DefaultMilliCPURequest} and {@code DefaultMemoryRequest}), so that pods without requests do not
   * all pile onto one node.
   */
  public static final PodRequests NON_ZERO_DEFAULTS =
      new PodRequests(Quantity.parse("100m"), Quantity.parse("200Mi"));

  /** The requests of {@code pod}. */
  public static PodRequests of(Pod pod) {
    return of(pod, null, true);
  }

  /**
   * What a pod bound to a node adds to the node's non-zero requests, which the scorers read
   * (upstream's {@code PodInfo.CalculateResource} and {@code getNonMissingContainerRequests} in
   * {@code framework/types.go}): each container's missing CPU or memory request counted as {@link
   * #NON_ZERO_DEFAULTS}'s; with pod-level requests set, only for a resource that nothing in the pod
   * names (no container, the pod level, nor the overhead).
   */
  public static PodRequests nonZero(Pod pod) {
    if (pod.getSpec() == null || !podLevelRequestsSet(pod)) {
      return of(pod, NON_ZERO_DEFAULTS, true);
    }
    PodRequests missing =
        new PodRequests(
            named(pod, "cpu") ? Quantity.ZERO : NON_ZERO_DEFAULTS.cpu,
            named(pod, "memory") ? Quantity.ZERO : NON_ZERO_DEFAULTS.memory);
    return of(pod, missing, true);
  }

  /**
   * The pod's requests as NodeResourcesFit's LeastAllocated score counts the pod being placed: its
   * containers with each missing CPU or memory request counted as {@link #NON_ZERO_DEFAULTS}'s, and
   * the overhead, but not its pod-level requests. That is upstream 1.37's behaviour, not a choice:
   * {@code noderesources/fit.go}'s {@code NewFit} sets {@code enablePodLevelResources} on the
   * plugin but not on the {@code resourceAllocationScorer} it embeds, whose {@code
   * calculatePodResourceRequest} ({@code resource_allocation.go}) reads its own, false, flag.
   */
  public static PodRequests nonZeroOfContainers(Pod pod) {
    return of(pod, NON_ZERO_DEFAULTS, false);
  }

  private static PodRequests of(Pod pod, PodRequests missing, boolean withPodLevel) {
    if (pod.getSpec() == null) {
      return ZERO;
    }
    PodRequests sum = ZERO;
    for (Container c : list(pod.getSpec().getContainers())) {
      sum = sum.plus(of(c, missing));
    }
    PodRequests sidecars = ZERO;
    PodRequests initPeak = ZERO;
    for (Container c : list(pod.getSpec().getInitContainers())) {
      if ("Always".equals(c.getRestartPolicy())) {
        sidecars = sidecars.plus(of(c, missing));
        initPeak = initPeak.max(sidecars);
      } else {
        initPeak = initPeak.max(of(c, missing).plus(sidecars));
      }
    }
    PodRequests containers = sum.plus(sidecars).max(initPeak);
    PodRequests total = withPodLevel ? podLevel(pod, containers) : containers;
    return total.plus(of(pod.getSpec().getOverhead()));
  }

  /**
   * Upstream's {@code IsPodLevelRequestsSet}: a pod-level request for a resource that may be set
   * there (CPU, memory, huge pages).
   */
  private static boolean podLevelRequestsSet(Pod pod) {
    var resources = pod.getSpec().getResources();
    var requests = resources == null ? null : resources.getRequests();
    return requests != null
        && requests.keySet().stream()
            .anyMatch(r -> r.equals("cpu") || r.equals("memory") || r.startsWith("hugepages-"));
  }

  /** Whether a container, an init container, the pod level or the overhead names {@code r}. */
  private static boolean named(Pod pod, String r) {
    var spec = pod.getSpec();
    return Stream.concat(
                list(spec.getContainers()).stream(), list(spec.getInitContainers()).stream())
            .anyMatch(
                c ->
                    c.getResources() != null
                        && c.getResources().getRequests() != null
                        && c.getResources().getRequests().containsKey(r))
        || (spec.getResources() != null
            && spec.getResources().getRequests() != null
            && spec.getResources().getRequests().containsKey(r))
        || (spec.getOverhead() != null && spec.getOverhead().containsKey(r));
  }

  /**
   * Upstream's {@code applyPodLevelResources} (PodLevelResources, on by default since 1.34): a
   * pod-level request replaces the containers' for its resource, whether above or below.
   */
  private static PodRequests podLevel(Pod pod, PodRequests containers) {
    if (!podLevelRequestsSet(pod)) {
      return containers;
    }
    var requests = pod.getSpec().getResources().getRequests();
    return new PodRequests(
        requests.containsKey("cpu") ? quantity(requests.get("cpu")) : containers.cpu,
        requests.containsKey("memory") ? quantity(requests.get("memory")) : containers.memory);
  }

  /** Sum, per resource. */
  public PodRequests plus(PodRequests o) {
    return new PodRequests(cpu.add(o.cpu), memory.add(o.memory));
  }

  /** Maximum, per resource. */
  public PodRequests max(PodRequests o) {
    return new PodRequests(
        cpu.compareTo(o.cpu) >= 0 ? cpu : o.cpu,
        memory.compareTo(o.memory) >= 0 ? memory : o.memory);
  }

  private static PodRequests of(Container c, PodRequests missing) {
    var requests = c.getResources() == null ? null : c.getResources().getRequests();
    PodRequests declared = of(requests);
    if (missing == null) {
      return declared;
    }
    return new PodRequests(
        requests != null && requests.containsKey("cpu") ? declared.cpu : missing.cpu,
        requests != null && requests.containsKey("memory") ? declared.memory : missing.memory);
  }

  /** CPU in millicores, rounded up (upstream's {@code MilliValue}). */
  public long milliCpu() {
    return cpu.value()
        .movePointRight(3)
        .setScale(0, java.math.RoundingMode.CEILING)
        .longValueExact();
  }

  /** Memory in bytes, rounded up (upstream's {@code Value}). */
  public long memoryBytes() {
    return memory.value().setScale(0, java.math.RoundingMode.CEILING).longValueExact();
  }

  /** CPU and memory out of a resource map (requests, overhead, allocatable); absent is zero. */
  public static PodRequests of(Map<String, io.fabric8.kubernetes.api.model.Quantity> m) {
    if (m == null) {
      return ZERO;
    }
    return new PodRequests(quantity(m.get("cpu")), quantity(m.get("memory")));
  }

  /** An exact quantity from fabric8's textual one; absent is zero. */
  public static Quantity quantity(io.fabric8.kubernetes.api.model.Quantity q) {
    Quantity exact = Quantity.fromApi(q);
    return exact == null ? Quantity.ZERO : exact;
  }

  private static <T> List<T> list(List<T> l) {
    return l == null ? List.of() : l;
  }
}
