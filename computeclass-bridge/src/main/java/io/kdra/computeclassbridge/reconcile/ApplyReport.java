package io.kdra.computeclassbridge.reconcile;

import java.util.ArrayList;
import java.util.List;

/**
 * What applying one ComputeClass's objects did.
 *
 * @param changes one line per write ("created ResourceClaimTemplate team-a/x"), for Events
 * @param conflicts objects the bridge would have written but that exist without its label: it
 *     leaves them alone, and the ComputeClass is degraded
 */
record ApplyReport(List<String> changes, List<String> conflicts) {

  ApplyReport {
    changes = List.copyOf(changes);
    conflicts = List.copyOf(conflicts);
  }

  static ApplyReport of(List<String> changes, List<String> conflicts) {
    return new ApplyReport(changes, conflicts);
  }

  ApplyReport plus(ApplyReport other) {
    List<String> c = new ArrayList<>(changes);
    c.addAll(other.changes);
    List<String> k = new ArrayList<>(conflicts);
    k.addAll(other.conflicts);
    return new ApplyReport(c, k);
  }
}
