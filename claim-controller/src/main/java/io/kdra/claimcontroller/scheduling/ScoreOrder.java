package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Node;
import io.kdra.claimcontroller.domain.NodeScoring;
import io.kdra.core.alloc.RankedSearch;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The feasible nodes in the order the allocator walks them: highest total of the score plugins
 * first, equal totals by name ({@link NodeScoring.Scores#ranked}), so that its first fit is the
 * best-scoring node where the claims fit, and only the DynamicResources score, which needs the
 * devices, is left to the allocator ({@link RankedSearch}). Pure.
 */
final class ScoreOrder {

  private ScoreOrder() {}

  /** The scored nodes as the allocator's ranked candidates. */
  static RankedSearch.Ranked of(NodeScoring.Scores scores) {
    List<Node> byName = scores.feasible();
    long[] total = scores.total();
    List<Integer> order = new ArrayList<>(byName.size());
    for (int i = 0; i < byName.size(); i++) {
      order.add(i);
    }
    order.sort(Comparator.comparingLong((Integer i) -> -total[i]).thenComparing(i -> i));
    List<Node> nodes = new ArrayList<>(order.size());
    long[] base = new long[order.size()];
    for (int k = 0; k < order.size(); k++) {
      nodes.add(byName.get(order.get(k)));
      base[k] = total[order.get(k)];
    }
    return new RankedSearch.Ranked(byName, nodes, base);
  }

  /**
   * The part of {@code ranked} at positions {@code from} to {@code to} (exclusive), for a search
   * over some of the nodes: the same name-ordered list, so the allocator keeps its node index.
   */
  static RankedSearch.Ranked slice(RankedSearch.Ranked ranked, int from, int to) {
    long[] base = new long[to - from];
    System.arraycopy(ranked.base(), from, base, 0, to - from);
    return new RankedSearch.Ranked(ranked.byName(), ranked.order().subList(from, to), base);
  }
}
