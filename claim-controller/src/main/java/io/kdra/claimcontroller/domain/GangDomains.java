package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Node;
import io.kdra.claimcontroller.domain.GangTransaction.Domain;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The topology domains a gang may be placed in, as upstream's {@code topologyaware} plugin
 * generates them: one per value of the node label {@code key}, nodes without it in none; once
 * members are placed, only their domain. Values in sorted order (upstream scores the placements;
 * here the first that takes the gang wins). Pure.
 */
public final class GangDomains {

  private GangDomains() {}

  /**
   * @param key the PodGroup's topology key, or null for no constraint
   * @param placedOn the nodes of the members already placed (bound or being bound)
   */
  public static List<Domain> of(List<Node> nodes, String key, Set<String> placedOn) {
    if (key == null) {
      return List.of(Domain.ANYWHERE);
    }
    TreeSet<String> values = new TreeSet<>();
    TreeSet<String> fixed = new TreeSet<>();
    for (Node n : nodes) {
      Map<String, String> labels = n.getMetadata().getLabels();
      String value = labels == null ? null : labels.get(key);
      boolean placedHere = placedOn.contains(n.getMetadata().getName());
      if (value == null) {
        if (placedHere) {
          return List.of(); // upstream: "no topology domain found for pod"
        }
        continue;
      }
      values.add(value);
      if (placedHere) {
        fixed.add(value);
      }
    }
    if (!placedOn.isEmpty()) {
      // upstream refuses a group whose placed members span domains; so does this
      return fixed.size() == 1 ? List.of(new Domain(key, fixed.first())) : List.of();
    }
    return values.stream().map(v -> new Domain(key, v)).toList();
  }
}
