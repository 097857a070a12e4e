package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraint;
import io.kdra.claimcontroller.domain.LabelSelectors.Selector;
import io.kdra.core.alloc.PodScheduler;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * kube-scheduler's PodTopologySpread filter for {@code whenUnsatisfiable: DoNotSchedule}
 * constraints, as upstream's {@code podtopologyspread/filtering.go} decides. A node passes when,
 * for every constraint, the pods matching its selector in the node's domain, plus one if the pod
 * matches it itself, exceed the global minimum by no more than {@code maxSkew}; the minimum is 0
 * while fewer than {@code minDomains} (default 1) domains exist. Only pods of the pod's namespace
 * that are not being deleted count, and only on eligible nodes: those with every constraint's
 * topology key, matching the pod's node selector and required node affinity ({@code
 * nodeAffinityPolicy}, default Honor) and, with {@code nodeTaintsPolicy: Honor} (default Ignore),
 * tolerated. {@code matchLabelKeys} add the pod's values of those keys to the selector. A node
 * without a topology key is rejected. An empty selector counts no pod, as upstream's. Upstream's
 * cluster-default constraints are {@code ScheduleAnyway}, so they never filter. Pure.
 */
public final class PodTopologySpread {

  public static final String REASON = "node(s) didn't match pod topology spread constraints";
  public static final String REASON_MISSING_LABEL = REASON + " (missing required label)";

  /** No DoNotSchedule constraint: every node passes. */
  public static final PodTopologySpread NONE =
      new PodTopologySpread(Map.of(), List.of(), List.of(), new long[0]);

  record Constraint(
      int maxSkew,
      String topologyKey,
      Selector selector,
      int minDomains,
      boolean honorAffinity,
      boolean honorTaints) {

    static Constraint of(TopologySpreadConstraint c, Map<String, String> podLabels) {
      Selector s = LabelSelectors.of(c.getLabelSelector());
      if (c.getMatchLabelKeys() != null && !c.getMatchLabelKeys().isEmpty() && podLabels != null) {
        Map<String, String> values = new LinkedHashMap<>();
        for (String k : c.getMatchLabelKeys()) {
          if (podLabels.containsKey(k)) {
            values.put(k, podLabels.get(k));
          }
        }
        s = s.and(values);
      }
      return new Constraint(
          c.getMaxSkew() == null ? 1 : c.getMaxSkew(),
          c.getTopologyKey(),
          s,
          c.getMinDomains() == null ? 1 : c.getMinDomains(),
          !"Ignore".equals(c.getNodeAffinityPolicy()),
          "Honor".equals(c.getNodeTaintsPolicy()));
    }

    boolean includes(Pod pod, Node node) {
      if (honorAffinity && !PodScheduler.podFits(pod, node)) {
        return false;
      }
      return !honorTaints
          || Taints.firstUntolerated(
                  node.getSpec() == null ? null : node.getSpec().getTaints(),
                  pod.getSpec().getTolerations())
              .isEmpty();
    }
  }

  private final Map<String, String> podLabels;
  private final List<Constraint> constraints;

  /** Per constraint: topology value to matching pods there, over eligible nodes. */
  private final List<Map<String, Integer>> matching;

  /** Per constraint: the least of {@link #matching}'s counts (upstream's critical path). */
  private final long[] minimum;

  private PodTopologySpread(
      Map<String, String> podLabels,
      List<Constraint> constraints,
      List<Map<String, Integer>> matching,
      long[] minimum) {
    this.podLabels = podLabels;
    this.constraints = constraints;
    this.matching = matching;
    this.minimum = minimum;
  }

  /**
   * The PreFilter: pods matching each constraint per topology value, over every node.
   *
   * @param placed the pods bound (or being bound) to a node, not terminal, not the pod itself
   */
  public static PodTopologySpread prefilter(Pod pod, List<Node> nodes, Collection<Pod> placed) {
    List<TopologySpreadConstraint> declared =
        pod.getSpec() == null ? null : pod.getSpec().getTopologySpreadConstraints();
    if (declared == null || declared.isEmpty()) {
      return NONE;
    }
    Map<String, String> labels =
        pod.getMetadata().getLabels() == null ? Map.of() : pod.getMetadata().getLabels();
    List<Constraint> cs = new ArrayList<>();
    for (TopologySpreadConstraint c : declared) {
      if ("DoNotSchedule".equals(c.getWhenUnsatisfiable())) {
        cs.add(Constraint.of(c, labels));
      }
    }
    if (cs.isEmpty()) {
      return NONE;
    }
    String ns = pod.getMetadata().getNamespace();
    Map<String, List<Pod>> byNode = new HashMap<>();
    for (Pod p : placed) {
      if (ns.equals(p.getMetadata().getNamespace())
          && p.getMetadata().getDeletionTimestamp() == null) {
        byNode.computeIfAbsent(p.getSpec().getNodeName(), n -> new ArrayList<>()).add(p);
      }
    }
    List<Map<String, Integer>> matching = new ArrayList<>();
    cs.forEach(c -> matching.add(new HashMap<>()));
    for (Node node : nodes) {
      Map<String, String> nodeLabels = node.getMetadata().getLabels();
      if (nodeLabels == null
          || cs.stream().anyMatch(c -> !nodeLabels.containsKey(c.topologyKey()))) {
        continue;
      }
      List<Pod> onNode = byNode.getOrDefault(node.getMetadata().getName(), List.of());
      for (int i = 0; i < cs.size(); i++) {
        Constraint c = cs.get(i);
        if (!c.includes(pod, node)) {
          continue;
        }
        int count = 0;
        if (!c.selector().isEmpty()) {
          for (Pod p : onNode) {
            if (c.selector().matches(p.getMetadata().getLabels())) {
              count++;
            }
          }
        }
        matching.get(i).merge(nodeLabels.get(c.topologyKey()), count, Integer::sum);
      }
    }
    long[] minimum = new long[cs.size()];
    for (int i = 0; i < cs.size(); i++) {
      minimum[i] =
          matching.get(i).values().stream().mapToLong(x -> x).min().orElse(Integer.MAX_VALUE);
    }
    return new PodTopologySpread(labels, List.copyOf(cs), matching, minimum);
  }

  /** The Filter: the reason the node is rejected, if it is. */
  public Optional<String> reject(Node node) {
    if (constraints.isEmpty()) {
      return Optional.empty();
    }
    Map<String, String> nodeLabels =
        node.getMetadata().getLabels() == null ? Map.of() : node.getMetadata().getLabels();
    for (int i = 0; i < constraints.size(); i++) {
      Constraint c = constraints.get(i);
      String value = nodeLabels.get(c.topologyKey());
      if (value == null) {
        return Optional.of(REASON_MISSING_LABEL);
      }
      long min = matching.get(i).size() < c.minDomains() ? 0 : minimum[i];
      long self = c.selector().matches(podLabels) ? 1 : 0;
      long skew = matching.get(i).getOrDefault(value, 0) + self - min;
      if (skew > c.maxSkew()) {
        return Optional.of(REASON);
      }
    }
    return Optional.empty();
  }
}
