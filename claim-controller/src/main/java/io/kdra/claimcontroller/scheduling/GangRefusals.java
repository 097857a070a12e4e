package io.kdra.claimcontroller.scheduling;

import io.kdra.claimcontroller.domain.Pods;
import io.kdra.claimcontroller.scheduling.Decided.NotPlaced;
import io.kdra.claimcontroller.scheduling.Decided.Unexplained;
import java.util.Map;
import java.util.TreeMap;

/** Why members of a gang pass did not fit: the first reason, and each member's, for messages. */
final class GangRefusals {
  private final Map<String, String> byUid = new TreeMap<>();
  private String first;

  void add(CycleState m, Decided d) {
    String why;
    if (d instanceof NotPlaced np && np.outcome() instanceof Outcome.Unschedulable u) {
      why = u.message();
    } else if (d instanceof NotPlaced np) {
      why = np.outcome().toString();
    } else {
      // the diagnosis of where no node took the claims is left out: it would run under the lock
      Unexplained u = (Unexplained) d;
      u.spans().end();
      why = "its claims fit on none of the " + u.nodes().feasible().size() + " nodes left";
    }
    byUid.putIfAbsent(m.uid(), why);
    if (first == null) {
      first = "; " + Pods.key(m.pod()) + ": " + why;
    }
  }

  String first() {
    return first == null ? "" : first;
  }

  String of(String uid) {
    String why = byUid.get(uid);
    return why == null ? "" : ": " + why;
  }
}
