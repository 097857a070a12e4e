package io.kdra.core.golden;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * What one program decided on one scenario: its exit status (0 all allocated, 1 not all, 2 input
 * rejected), every pending claim by {@code namespace/name} (allocated ones with {@code
 * status.allocation}), and its failure lines.
 */
public record AllocationDecision(int exit, Map<String, ResourceClaim> claims, String err) {

  /** The keys of the allocated claims, sorted. */
  public TreeSet<String> allocated() {
    TreeSet<String> out = new TreeSet<>();
    claims.forEach(
        (k, c) -> {
          if (c.getStatus() != null && c.getStatus().getAllocation() != null) {
            out.add(k);
          }
        });
    return out;
  }

  /**
   * Where two decisions disagree on what was allocated: an input rejected, claims allocated by one
   * side only, another exit status; and, for each claim both allocated, other devices or another
   * allocation (upstream's first fit is deterministic: the same input gives the same devices).
   */
  public static List<String> disagreements(AllocationDecision ours, AllocationDecision upstream) {
    List<String> out = new ArrayList<>();
    if (ours.exit() == 2 || upstream.exit() == 2) {
      out.add(
          "input rejected (exit "
              + ours.exit()
              + " ours, "
              + upstream.exit()
              + " upstream): "
              + ours.err().strip()
              + " | "
              + upstream.err().strip());
      return out;
    }
    if (!ours.allocated().equals(upstream.allocated())) {
      TreeSet<String> onlyOurs = new TreeSet<>(ours.allocated());
      onlyOurs.removeAll(upstream.allocated());
      TreeSet<String> onlyUpstream = new TreeSet<>(upstream.allocated());
      onlyUpstream.removeAll(ours.allocated());
      out.add(
          "allocated only by us: "
              + onlyOurs
              + ", only by upstream: "
              + onlyUpstream
              + "; our failures: "
              + ours.err().strip().replace("\n", " | ")
              + "; upstream's failures: "
              + upstream.err().strip().replace("\n", " | "));
    }
    if (ours.exit() != upstream.exit()) {
      out.add("exit status " + ours.exit() + " ours, " + upstream.exit() + " upstream");
    }
    for (String k : ours.allocated()) {
      if (upstream.allocated().contains(k)) {
        String diff =
            AllocationGolden.otherAllocation(ours.claims().get(k), upstream.claims().get(k));
        if (diff != null) {
          out.add(k + ": allocated differently: " + diff);
        }
      }
    }
    return out;
  }
}
