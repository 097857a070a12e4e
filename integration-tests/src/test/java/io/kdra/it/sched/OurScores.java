package io.kdra.it.sched;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.storage.CSIStorageCapacity;
import io.kdra.claimcontroller.domain.InterPodAffinityScore;
import io.kdra.claimcontroller.domain.LabelSelectors;
import io.kdra.claimcontroller.domain.NodeFilter;
import io.kdra.claimcontroller.domain.NodeScoring;
import io.kdra.claimcontroller.domain.PodVolumes;
import io.kdra.claimcontroller.domain.Pods;
import io.kdra.claimcontroller.domain.VolumeFilters;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The claim-controller's score totals for a scenario's feasible nodes ({@link NodeScoring}, as its
 * scheduling attempt calls it: usage and placed pods from the bound, non-terminal pods).
 */
final class OurScores {

  private OurScores() {}

  /**
   * Node name to its weighted total, for {@code feasible} (sorted by name); without VolumeBinding's
   * share when {@code withVolumeBinding} is false.
   */
  static Map<String, Long> totals(
      SchedulingScenario s, List<Node> feasible, boolean withVolumeBinding) {
    Pod pod = s.pod();
    Map<String, NodeFilter.NodeUsage> usage = new HashMap<>();
    List<Pod> placed = new ArrayList<>();
    for (Pod p : s.pods()) {
      if (Pods.isBound(p)
          && !Pods.isTerminal(p)
          && !p.getMetadata().getUid().equals(pod.getMetadata().getUid())) {
        usage.merge(
            p.getSpec().getNodeName(), NodeFilter.NodeUsage.of(p), NodeFilter.NodeUsage::plus);
        placed.add(p);
      }
    }
    NodeScoring.Scores scores =
        NodeScoring.score(
            new NodeScoring.Input(
                pod,
                feasible,
                NodeFilter.sortedByName(s.nodes()),
                usage,
                NodeFilter::allocatable,
                () -> placed,
                placed.stream().filter(InterPodAffinityScore::hasPodAffinity).toList(),
                s::namespaceLabels,
                volumes(s, placed)));
    long[] volumeShare = scores.byPlugin().get("VolumeBinding");
    Map<String, Long> out = new LinkedHashMap<>();
    for (int i = 0; i < feasible.size(); i++) {
      long total = scores.total()[i];
      if (!withVolumeBinding && volumeShare != null) {
        total -= NodeScoring.weight("VolumeBinding") * volumeShare[i];
      }
      out.put(feasible.get(i).getMetadata().getName(), total);
    }
    return out;
  }

  private static VolumeFilters volumes(SchedulingScenario s, List<Pod> placed) {
    return VolumeFilters.concerns(s.pod())
        ? VolumeFilters.prefilter(s.pod(), s.volumes().objects(), () -> placed).filters()
        : VolumeFilters.NONE;
  }

  /**
   * Whether upstream's VolumeBinding score is open to chance here: on some feasible node a claim is
   * provisioned (no claim is bound to an existing volume there) and more than one
   * CSIStorageCapacity of its class has room for it, with different capacities. Upstream scores the
   * first its informer lists, in no set order; ours, the first in the scenario's order.
   */
  static boolean capacityChoiceOpen(SchedulingScenario s, List<Node> feasible) {
    List<Pod> placed = new ArrayList<>();
    VolumeFilters filters = volumes(s, placed);
    for (Node n : feasible) {
      PodVolumes v = filters.volumesOn(n);
      if (!v.staticBindings().isEmpty()) {
        continue;
      }
      for (PodVolumes.DynamicProvision p : v.dynamicProvisions()) {
        if (p.nodeCapacity() == null) {
          continue;
        }
        BigDecimal request = bytes(p.pvc().getSpec().getResources().getRequests().get("storage"));
        Set<BigDecimal> capacities = new HashSet<>();
        for (CSIStorageCapacity c : s.volumes().capacities()) {
          var limit = c.getMaximumVolumeSize() != null ? c.getMaximumVolumeSize() : c.getCapacity();
          if (p.nodeCapacity().getStorageClassName().equals(c.getStorageClassName())
              && limit != null
              && bytes(limit).compareTo(request) >= 0
              && c.getNodeTopology() != null
              && LabelSelectors.of(c.getNodeTopology())
                  .matches(
                      n.getMetadata().getLabels() == null
                          ? Map.of()
                          : n.getMetadata().getLabels())) {
            capacities.add(c.getCapacity() == null ? BigDecimal.ZERO : bytes(c.getCapacity()));
          }
        }
        if (capacities.size() > 1) {
          return true;
        }
      }
    }
    return false;
  }

  private static BigDecimal bytes(io.fabric8.kubernetes.api.model.Quantity q) {
    return io.kdra.core.model.Quantity.fromApi(q).value().setScale(0, RoundingMode.CEILING);
  }
}
