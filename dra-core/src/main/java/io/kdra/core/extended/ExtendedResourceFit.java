package io.kdra.core.extended;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Quantity;
import java.math.RoundingMode;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Which of a pod's extended resources a node serves, and how, as kube-scheduler's NodeResourcesFit
 * ({@code shouldDelegateResourceToDRA} and the scalar check) and DynamicResources ({@code
 * filterExtendedResources}) decide together: a resource the node does not advertise in {@code
 * status.allocatable} (absent or zero) but a DeviceClass serves goes to DRA; any other must fit the
 * node's allocatable beside what the pods already bound there request, as a device plugin's
 * resource always has.
 */
public final class ExtendedResourceFit {

  private ExtendedResourceFit() {}

  /** The answer for one node. */
  public sealed interface NodeFit {

    /**
     * The node fits; {@code viaDra} (sorted, possibly empty) is what the special claim must ask for
     * there, the rest is the device plugin's.
     */
    record Fits(SortedMap<String, Long> viaDra) implements NodeFit {}

    /** The node does not fit, with NodeResourcesFit's reason ({@code Insufficient <name>}). */
    record Unfit(String reason) implements NodeFit {}
  }

  /**
   * Decides for one node.
   *
   * @param podRequests the pod's extended resource requests ({@link ExtendedResourceRequests#of})
   * @param used what the non-terminal pods bound to the node request of each name (absent: none)
   */
  public static NodeFit fit(
      Map<String, Long> podRequests,
      ExtendedResourceClasses classes,
      Node node,
      Map<String, Long> used) {
    Map<String, Quantity> allocatable =
        node.getStatus() == null || node.getStatus().getAllocatable() == null
            ? Map.of()
            : node.getStatus().getAllocatable();
    SortedMap<String, Long> viaDra = new TreeMap<>();
    for (Map.Entry<String, Long> e : new TreeMap<>(podRequests).entrySet()) {
      String name = e.getKey();
      long wanted = e.getValue();
      if (wanted == 0) {
        continue;
      }
      long advertised = allocatable.containsKey(name) ? value(allocatable.get(name)) : 0;
      if (advertised == 0 && classes.serves(name)) {
        viaDra.put(name, wanted);
      } else if (wanted > advertised - used.getOrDefault(name, 0L)) {
        return new NodeFit.Unfit("Insufficient " + name);
      }
    }
    return new NodeFit.Fits(viaDra);
  }

  private static long value(Quantity q) {
    try {
      return io.kdra.core.model.Quantity.fromApi(q)
          .value()
          .setScale(0, RoundingMode.CEILING)
          .longValueExact();
    } catch (ArithmeticException | IllegalArgumentException e) {
      return Long.MAX_VALUE;
    }
  }
}
