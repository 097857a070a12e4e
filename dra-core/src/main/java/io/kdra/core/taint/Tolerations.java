package io.kdra.core.taint;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceToleration;

/**
 * Upstream's {@code resourceclaim.ToleratesTaint}: an empty key with {@code Exists} tolerates every
 * key, an empty effect every effect, the operator defaults to {@code Equal}.
 */
public final class Tolerations {

  private Tolerations() {}

  public static boolean tolerates(DeviceToleration tol, DeviceTaint taint) {
    if (tol.getEffect() != null
        && !tol.getEffect().isEmpty()
        && !tol.getEffect().equals(taint.getEffect())) {
      return false;
    }
    if (tol.getKey() != null && !tol.getKey().isEmpty() && !tol.getKey().equals(taint.getKey())) {
      return false;
    }
    String op =
        tol.getOperator() == null || tol.getOperator().isEmpty() ? "Equal" : tol.getOperator();
    switch (op) {
      case "Exists":
        return true;
      case "Equal":
        return nullToEmpty(tol.getValue()).equals(nullToEmpty(taint.getValue()));
      default:
        return false;
    }
  }

  private static String nullToEmpty(String s) {
    return s == null ? "" : s;
  }
}
