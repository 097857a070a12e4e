package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.Toleration;
import java.util.List;
import java.util.Optional;

/** Node taints and pod tolerations with upstream's matching rules. Pure. */
public final class Taints {

  private Taints() {}

  /**
   * The first taint with effect {@code NoSchedule} or {@code NoExecute} that no toleration
   * tolerates; {@code PreferNoSchedule} never blocks.
   */
  public static Optional<Taint> firstUntolerated(List<Taint> taints, List<Toleration> tolerations) {
    if (taints == null || taints.isEmpty()) {
      return Optional.empty(); // the usual case, per node and attempt: no stream built
    }
    List<Toleration> tols = tolerations == null ? List.of() : tolerations;
    return taints.stream()
        .filter(t -> "NoSchedule".equals(t.getEffect()) || "NoExecute".equals(t.getEffect()))
        .filter(t -> tols.stream().noneMatch(tol -> tolerates(tol, t)))
        .findFirst();
  }

  /**
   * Upstream's {@code ToleratesTaint}: effects match when the toleration's is empty or equal; an
   * empty key with {@code Exists} matches every key; {@code Exists} ignores the value; {@code
   * Equal} (the default) compares it.
   */
  public static boolean tolerates(Toleration tol, Taint taint) {
    if (tol.getEffect() != null
        && !tol.getEffect().isEmpty()
        && !tol.getEffect().equals(taint.getEffect())) {
      return false;
    }
    String op =
        tol.getOperator() == null || tol.getOperator().isEmpty() ? "Equal" : tol.getOperator();
    String key = tol.getKey() == null ? "" : tol.getKey();
    if (key.isEmpty()) {
      return "Exists".equals(op);
    }
    if (!key.equals(taint.getKey())) {
      return false;
    }
    if ("Exists".equals(op)) {
      return true;
    }
    String want = tol.getValue() == null ? "" : tol.getValue();
    String have = taint.getValue() == null ? "" : taint.getValue();
    return "Equal".equals(op) && want.equals(have);
  }
}
