package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraint;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The PreFilter state of the filters that look at the pods already placed on nodes: {@link
 * NodePorts}, {@link InterPodAffinity}, {@link PodTopologySpread} and the volume plugins ({@link
 * VolumeFilters}, added by {@link #withVolumes}), built once per attempt. When the pod has no host
 * port, no required pod (anti-)affinity and no {@code DoNotSchedule} spread, and no placed pod has
 * required anti-affinity (the common case), nothing is read or built.
 *
 * @param ports NodePorts
 * @param affinity InterPodAffinity
 * @param spread PodTopologySpread
 * @param volumes VolumeRestrictions, NodeVolumeLimits, VolumeBinding and VolumeZone
 */
public record PlacedPodFilters(
    NodePorts ports, InterPodAffinity affinity, PodTopologySpread spread, VolumeFilters volumes) {

  /** Nothing to check. */
  public static final PlacedPodFilters NONE =
      new PlacedPodFilters(
          NodePorts.NONE, InterPodAffinity.NONE, PodTopologySpread.NONE, VolumeFilters.NONE);

  /** These filters with the volume plugins' {@code v}. */
  public PlacedPodFilters withVolumes(VolumeFilters v) {
    return new PlacedPodFilters(ports, affinity, spread, v);
  }

  /**
   * The PreFilters.
   *
   * @param sortedNodes every node (spread and affinity count pods on all nodes, not only feasible
   *     ones)
   * @param placed the pods bound or being bound to a node, not terminal, not the pod; read only
   *     when a filter needs them
   * @param placedWithAntiAffinity those of {@code placed} with required pod anti-affinity
   * @param namespaceLabels namespace name to labels; read only for pod (anti-)affinity
   */
  public static PlacedPodFilters prefilter(
      Pod pod,
      List<Node> sortedNodes,
      Supplier<Collection<Pod>> placed,
      Collection<Pod> placedWithAntiAffinity,
      Supplier<Map<String, Map<String, String>>> namespaceLabels) {
    boolean ports = !NodePorts.hostPorts(pod).isEmpty();
    boolean affinity = hasRequiredPodAffinity(pod) || !placedWithAntiAffinity.isEmpty();
    boolean spread = hasHardSpread(pod);
    if (!ports && !affinity && !spread) {
      return NONE;
    }
    Collection<Pod> all = placed.get();
    Map<String, Node> byName = new HashMap<>();
    if (affinity) {
      sortedNodes.forEach(n -> byName.put(n.getMetadata().getName(), n));
    }
    return new PlacedPodFilters(
        ports ? NodePorts.prefilter(pod, all) : NodePorts.NONE,
        affinity
            ? InterPodAffinity.prefilter(
                pod, byName, all, placedWithAntiAffinity, namespaceLabels.get())
            : InterPodAffinity.NONE,
        spread ? PodTopologySpread.prefilter(pod, sortedNodes, all) : PodTopologySpread.NONE,
        VolumeFilters.NONE);
  }

  private static boolean hasRequiredPodAffinity(Pod pod) {
    var a = pod.getSpec() == null ? null : pod.getSpec().getAffinity();
    return InterPodAffinity.hasRequiredAntiAffinity(pod)
        || (a != null
            && a.getPodAffinity() != null
            && a.getPodAffinity().getRequiredDuringSchedulingIgnoredDuringExecution() != null
            && !a.getPodAffinity().getRequiredDuringSchedulingIgnoredDuringExecution().isEmpty());
  }

  private static boolean hasHardSpread(Pod pod) {
    List<TopologySpreadConstraint> cs =
        pod.getSpec() == null ? null : pod.getSpec().getTopologySpreadConstraints();
    return cs != null
        && cs.stream().anyMatch(c -> "DoNotSchedule".equals(c.getWhenUnsatisfiable()));
  }
}
