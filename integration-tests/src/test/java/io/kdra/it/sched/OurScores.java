package io.kdra.it.sched;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.kdra.claimcontroller.domain.InterPodAffinityScore;
import io.kdra.claimcontroller.domain.NodeFilter;
import io.kdra.claimcontroller.domain.NodeScoring;
import io.kdra.claimcontroller.domain.Pods;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The claim-controller's score totals for a scenario's feasible nodes ({@link NodeScoring}, as its
 * scheduling attempt calls it: usage and placed pods from the bound, non-terminal pods).
 */
final class OurScores {

  private OurScores() {}

  /** Node name to its weighted total, for {@code feasible} (sorted by name). */
  static Map<String, Long> totals(SchedulingScenario s, List<Node> feasible) {
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
                s::namespaceLabels));
    Map<String, Long> out = new LinkedHashMap<>();
    for (int i = 0; i < feasible.size(); i++) {
      out.put(feasible.get(i).getMetadata().getName(), scores.total()[i]);
    }
    return out;
  }
}
