package io.kdra.computeclassbridge.k8s;

import java.util.ArrayList;
import java.util.List;

/**
 * What applying one ComputeClass's objects did.
 *
 * @param changes one line per write ("created ResourceClaimTemplate team-a/x"), for Events
 * @param conflicts objects the bridge would have written but that exist without its label: it
 *     leaves them alone, and the ComputeClass is degraded
 */
public record ApplyReport(List<String> changes, List<String> conflicts) {

  public ApplyReport {
    changes = List.copyOf(changes);
    conflicts = List.copyOf(conflicts);
  }

  public static ApplyReport of(List<String> changes, List<String> conflicts) {
    return new ApplyReport(changes, conflicts);
  }

  public ApplyReport plus(ApplyReport other) {
    List<String> c = new ArrayList<>(changes);
    c.addAll(other.changes);
    List<String> k = new ArrayList<>(conflicts);
    k.addAll(other.conflicts);
    return new ApplyReport(c, k);
  }
}
