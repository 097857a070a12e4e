package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.kdra.claimcontroller.domain.NodeFilter.Allocatable;
import io.kdra.claimcontroller.domain.NodeFilter.NodeUsage;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * kube-scheduler's Score phase with its default plugins and weights ({@code
 * apis/config/v1/default_plugins.go} of 1.37): TaintToleration 3, NodeAffinity 2, NodeResourcesFit
 * (LeastAllocated over CPU and memory) 1, VolumeBinding (its storage capacity score) 1,
 * PodTopologySpread 2, InterPodAffinity 2, NodeResourcesBalancedAllocation 1, ImageLocality 1. Each
 * plugin scores every feasible node and normalises its scores to 0..{@value #MAX_NODE_SCORE} as
 * upstream's {@code NormalizeScore} does (VolumeBinding's are in that range already); a node's
 * total is the weighted sum, as the framework's {@code RunScorePlugins}. A plugin with nothing to
 * score for the pod (upstream's PreScore {@code Skip}) adds 0 to every node and reads nothing.
 * DynamicResources' own score (weight 2, the rank of the {@code firstAvailable} subrequests chosen)
 * needs the devices and is the allocator's, added as it walks the nodes in this score's order: see
 * dra-core's {@code RankedSearch}. Pure.
 */
public final class NodeScoring {

  /** Upstream's {@code framework.MaxNodeScore}. */
  public static final long MAX_NODE_SCORE = 100;

  private NodeScoring() {}

  /**
   * What one attempt's scoring reads (upstream's PreScore inputs).
   *
   * @param pod the pod being placed
   * @param feasible the nodes that passed the filters, sorted by name
   * @param allNodes every node, sorted by name (spread and pod affinity count pods on all of them)
   * @param usage node name to what the pods bound there request (absent: none)
   * @param allocatable each node's allocatable resources
   * @param placed the pods bound or being bound, not terminal, not the pod; read only when a plugin
   *     needs them
   * @param placedWithAffinity those of {@code placed} with any pod (anti-)affinity term
   * @param namespaceLabels namespace name to labels; read only for pod affinity terms
   * @param volumes the volume plugins' state of the attempt (what VolumeBinding decided per node)
   */
  public record Input(
      Pod pod,
      List<Node> feasible,
      List<Node> allNodes,
      Map<String, NodeUsage> usage,
      Function<Node, Allocatable> allocatable,
      Supplier<Collection<Pod>> placed,
      Collection<Pod> placedWithAffinity,
      Supplier<Map<String, Map<String, String>>> namespaceLabels,
      VolumeFilters volumes) {

    /** Without volumes to bind or provision. */
    public Input(
        Pod pod,
        List<Node> feasible,
        List<Node> allNodes,
        Map<String, NodeUsage> usage,
        Function<Node, Allocatable> allocatable,
        Supplier<Collection<Pod>> placed,
        Collection<Pod> placedWithAffinity,
        Supplier<Map<String, Map<String, String>>> namespaceLabels) {
      this(
          pod,
          feasible,
          allNodes,
          usage,
          allocatable,
          placed,
          placedWithAffinity,
          namespaceLabels,
          VolumeFilters.NONE);
    }
  }

  /**
   * The scores.
   *
   * @param feasible the nodes scored, sorted by name
   * @param total each node's weighted sum, in {@code feasible}'s order
   * @param byPlugin plugin name to its normalised scores, in {@code feasible}'s order, for the
   *     plugins that scored (for logs and tests)
   */
  public record Scores(List<Node> feasible, long[] total, Map<String, long[]> byPlugin) {

    /** The node's total; 0 for a node not scored. */
    public long of(String node) {
      for (int i = 0; i < feasible.size(); i++) {
        if (feasible.get(i).getMetadata().getName().equals(node)) {
          return total[i];
        }
      }
      return 0;
    }

    /**
     * The nodes, highest total first; equal totals in name order. Upstream picks at random among
     * the nodes with the highest total (reservoir sampling in {@code selectHost}); we pick the
     * first by name, so that a decision can be replayed and tested.
     */
    public List<Node> ranked() {
      List<Integer> order = new ArrayList<>();
      for (int i = 0; i < feasible.size(); i++) {
        order.add(i);
      }
      order.sort(Comparator.comparingLong((Integer i) -> -total[i]).thenComparing(i -> i));
      return order.stream().map(feasible::get).toList();
    }

    /** The node with the highest total, the first by name among equals. */
    public Node best() {
      int best = 0;
      for (int i = 1; i < feasible.size(); i++) {
        if (total[i] > total[best]) {
          best = i;
        }
      }
      return feasible.get(best);
    }
  }

  /** Scores {@code in.feasible()} for {@code in.pod()}. */
  public static Scores score(Input in) {
    Map<String, long[]> byPlugin = new LinkedHashMap<>();
    List<Node> nodes = in.feasible();
    if (nodes.size() > 1) {
      // upstream scores nothing when one node is feasible: it is the answer
      put(byPlugin, "TaintToleration", TaintTolerationScore.score(in.pod(), nodes));
      put(byPlugin, "NodeAffinity", NodeAffinityScore.score(in.pod(), nodes));
      put(
          byPlugin,
          "NodeResourcesFit",
          ResourceScores.leastAllocated(in.pod(), nodes, in.usage(), in.allocatable()));
      put(byPlugin, "VolumeBinding", VolumeBindingScore.score(in.volumes(), nodes));
      put(byPlugin, "PodTopologySpread", PodTopologySpreadScore.score(in));
      put(byPlugin, "InterPodAffinity", InterPodAffinityScore.score(in));
      put(
          byPlugin,
          "NodeResourcesBalancedAllocation",
          ResourceScores.balancedAllocation(in.pod(), nodes, in.usage(), in.allocatable()));
      put(byPlugin, "ImageLocality", ImageLocalityScore.score(in.pod(), nodes, in.allNodes()));
    }
    long[] total = new long[nodes.size()];
    byPlugin.forEach(
        (name, scores) -> {
          long w = weight(name);
          for (int i = 0; i < total.length; i++) {
            total[i] += w * scores[i];
          }
        });
    return new Scores(nodes, total, byPlugin);
  }

  /** The plugin's weight in the default profile. */
  public static long weight(String plugin) {
    return switch (plugin) {
      case "TaintToleration" -> 3;
      case "NodeAffinity", "PodTopologySpread", "InterPodAffinity", "DynamicResources" -> 2;
      default -> 1;
    };
  }

  private static void put(Map<String, long[]> byPlugin, String name, long[] scores) {
    if (scores != null) {
      byPlugin.put(name, scores);
    }
  }

  /**
   * Upstream's {@code helper.DefaultNormalizeScore}: scales {@code scores} (non-negative) from
   * 0..max to 0..{@value #MAX_NODE_SCORE}, reversed when asked; all zero stays zero, or becomes the
   * maximum reversed.
   */
  static long[] defaultNormalize(long[] scores, boolean reverse) {
    long max = 0;
    for (long s : scores) {
      max = Math.max(max, s);
    }
    long[] out = new long[scores.length];
    for (int i = 0; i < scores.length; i++) {
      long s = max == 0 ? 0 : MAX_NODE_SCORE * scores[i] / max;
      out[i] = reverse ? MAX_NODE_SCORE - s : s;
    }
    return out;
  }

  static Map<String, String> labels(Node node) {
    Map<String, String> l = node.getMetadata().getLabels();
    return l == null ? Map.of() : l;
  }
}
