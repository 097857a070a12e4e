package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.kdra.core.model.Quantity;
import java.util.List;
import java.util.Map;

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
    return of(pod, null);
  }

  /**
   * The requests of {@code pod} as the scorers count them (upstream's {@code NonZeroRequested}):
   * each container's missing CPU or memory request counted as {@link #NON_ZERO_DEFAULTS}'s.
   */
  public static PodRequests nonZero(Pod pod) {
    return of(pod, NON_ZERO_DEFAULTS);
  }

  private static PodRequests of(Pod pod, PodRequests missing) {
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
    PodRequests total = podLevel(pod, sum.plus(sidecars).max(initPeak));
    return total.plus(of(pod.getSpec().getOverhead()));
  }

  /**
   * Upstream's {@code applyPodLevelResources} (PodLevelResources, on by default since 1.34): a
   * pod-level request replaces the containers' for its resource, whether above or below.
   */
  private static PodRequests podLevel(Pod pod, PodRequests containers) {
    var resources = pod.getSpec().getResources();
    var requests = resources == null ? null : resources.getRequests();
    if (requests == null || requests.isEmpty()) {
      return containers;
    }
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
