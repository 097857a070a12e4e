package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceToleration;
import io.kdra.core.taint.RuleTaint;
import io.kdra.core.taint.Tolerations;
import java.util.List;

/**
 * Device taints against request tolerations. Only the effects {@code NoSchedule} and {@code
 * NoExecute} prevent allocation; {@code None} (1.35+) and unknown effects are informational.
 * Toleration matching is {@code resourceclaim.ToleratesTaint}: empty key with {@code Exists}
 * tolerates every key, empty effect every effect, operator defaults to {@code Equal}.
 */
final class Taints {

  private Taints() {}

  /** The first taint that blocks the device for these tolerations, or null. */
  static DeviceTaint blocking(List<DeviceTaint> taints, List<DeviceToleration> tolerations) {
    for (DeviceTaint t : taints) {
      String effect = t.getEffect();
      if (!"NoSchedule".equals(effect) && !"NoExecute".equals(effect)) {
        continue;
      }
      boolean tolerated = false;
      for (DeviceToleration tol : tolerations) {
        if (tolerates(tol, t)) {
          tolerated = true;
          break;
        }
      }
      if (!tolerated) {
        return t;
      }
    }
    return null;
  }

  static boolean tolerates(DeviceToleration tol, DeviceTaint taint) {
    return Tolerations.tolerates(tol, taint);
  }

  /**
   * {@code key=value:Effect} ({@code key:Effect} without a value), as kubectl prints taints; a
   * rule's taint is followed by {@code (DeviceTaintRule NAME)}, so the admin sees which rule to
   * change.
   */
  static String describe(DeviceTaint t) {
    String value = t.getValue() == null || t.getValue().isEmpty() ? "" : "=" + t.getValue();
    String origin = RuleTaint.origin(t);
    return t.getKey() + value + ":" + t.getEffect() + (origin == null ? "" : " (" + origin + ")");
  }
}
