package io.kdra.claimcontroller.scheduling;

import java.util.Map;
import java.util.TreeMap;

/**
 * What one gang pass would decide now, written nowhere and holding nothing once it is answered
 * ({@link PodScheduling#whatIfGang}): the members it keeps and their nodes, or why it keeps none.
 *
 * @param placed pod name to its node, sorted by name; empty when {@code refused} is set
 * @param refused why no member is kept (a gang too small, too few fit, a member not ready); null
 *     when members are kept
 */
public record GangWhatIf(Map<String, String> placed, Outcome refused) {

  public GangWhatIf {
    placed = java.util.Collections.unmodifiableMap(new TreeMap<>(placed));
  }

  static GangWhatIf refused(Outcome why) {
    return new GangWhatIf(Map.of(), why);
  }

  /** Whether the pass keeps its members (at least {@code minCount} of the group placed). */
  public boolean kept() {
    return refused == null;
  }
}
