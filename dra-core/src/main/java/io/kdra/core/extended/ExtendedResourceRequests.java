package io.kdra.core.extended;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.BinaryOperator;

/**
 * What a pod asks for in extended resources, as kube-scheduler computes it ({@code
 * resourcehelper.PodRequests}, then {@code framework.NewResource}'s scalar values): the regular
 * containers summed, restartable init containers (sidecars) added to them and to every later init
 * container, the peak of the init containers taken when higher, overhead on top; each quantity
 * rounded up to an integer as Go's {@code Quantity.Value()}.
 *
 * <p>A container's requests are its {@code resources.requests} with any resource named only in
 * {@code resources.limits} taken from there: the API server's defaulting, applied here too so that
 * a manifest read from a file (dra-alloc) means what it means once created.
 */
public final class ExtendedResourceRequests {

  private ExtendedResourceRequests() {}

  /**
   * True for a name kube-scheduler treats as a possibly DRA-backed extended resource ({@code
   * schedutil.IsDRAExtendedResourceName}): an extended resource name (a qualified name with a
   * domain outside {@code kubernetes.io}, not {@code requests.*}) or the implicit {@code
   * deviceclass.resource.kubernetes.io/} prefix.
   */
  public static boolean isExtendedResourceName(String name) {
    if (name.startsWith(ExtendedResourceClasses.IMPLICIT_PREFIX)) {
      return true;
    }
    int slash = name.indexOf('/');
    if (slash <= 0 || name.startsWith("requests.")) {
      return false;
    }
    String domain = name.substring(0, slash);
    return !(domain.equals("kubernetes.io") || domain.endsWith(".kubernetes.io"));
  }

  /** A container's requests with the API server's defaulting from limits applied. */
  public static Map<String, Quantity> containerRequests(Container c) {
    Map<String, Quantity> out = new TreeMap<>();
    ResourceRequirements r = c.getResources();
    if (r == null) {
      return out;
    }
    if (r.getLimits() != null) {
      out.putAll(r.getLimits());
    }
    if (r.getRequests() != null) {
      out.putAll(r.getRequests());
    }
    return out;
  }

  /** The pod's extended resource requests (name to count, zero left out), sorted by name. */
  public static Map<String, Long> of(Pod pod) {
    Map<String, Long> reqs = new TreeMap<>();
    if (pod.getSpec() == null) {
      return reqs;
    }
    for (Container c : nonNull(pod.getSpec().getContainers())) {
      merge(reqs, scalars(containerRequests(c)), Long::sum);
    }
    Map<String, Long> restartable = new TreeMap<>();
    Map<String, Long> initPeak = new TreeMap<>();
    for (Container c : nonNull(pod.getSpec().getInitContainers())) {
      Map<String, Long> containerReqs = scalars(containerRequests(c));
      if ("Always".equals(c.getRestartPolicy())) {
        merge(reqs, containerReqs, Long::sum);
        merge(restartable, containerReqs, Long::sum);
        containerReqs = new TreeMap<>(restartable);
      } else {
        merge(containerReqs, restartable, Long::sum);
      }
      merge(initPeak, containerReqs, Math::max);
    }
    merge(reqs, initPeak, Math::max);
    if (pod.getSpec().getOverhead() != null) {
      merge(reqs, scalars(pod.getSpec().getOverhead()), Long::sum);
    }
    reqs.values().removeIf(v -> v == 0);
    return reqs;
  }

  /**
   * The quantity as an exact 64-bit integer (Go's {@code Quantity.AsInt64}), empty when it has a
   * fraction or does not fit.
   */
  public static Optional<Long> exactCount(Quantity q) {
    try {
      BigDecimal v = io.kdra.core.model.Quantity.fromApi(q).value();
      return Optional.of(v.longValueExact());
    } catch (ArithmeticException | IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  private static Map<String, Long> scalars(Map<String, Quantity> resources) {
    Map<String, Long> out = new TreeMap<>();
    resources.forEach(
        (name, q) -> {
          if (isExtendedResourceName(name)) {
            out.put(name, ceil(q));
          }
        });
    return out;
  }

  private static long ceil(Quantity q) {
    try {
      return io.kdra.core.model.Quantity.fromApi(q)
          .value()
          .setScale(0, RoundingMode.CEILING)
          .longValueExact();
    } catch (ArithmeticException | IllegalArgumentException e) {
      return Long.MAX_VALUE;
    }
  }

  private static void merge(
      Map<String, Long> into, Map<String, Long> from, BinaryOperator<Long> op) {
    from.forEach((k, v) -> into.merge(k, v, op));
  }

  private static <T> List<T> nonNull(List<T> l) {
    return l == null ? new ArrayList<>() : l;
  }
}
