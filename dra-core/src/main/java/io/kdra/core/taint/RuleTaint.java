package io.kdra.core.taint;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;

/**
 * A device's taint that a DeviceTaintRule added: the rule's taint, remembering the rule's name so
 * that messages can name it. Lives only in the allocator's patched view of the slices; never
 * written (Jackson would not see {@link #ruleName}, which has no bean getter).
 */
public final class RuleTaint extends DeviceTaint {

  private final String ruleName;

  RuleTaint(DeviceTaint taint, String ruleName) {
    super(taint.getEffect(), taint.getKey(), taint.getTimeAdded(), taint.getValue());
    this.ruleName = ruleName;
  }

  public String ruleName() {
    return ruleName;
  }

  /**
   * Where a taint comes from, for messages: {@code DeviceTaintRule NAME}, or null for a slice's.
   */
  public static String origin(DeviceTaint taint) {
    return taint instanceof RuleTaint r ? "DeviceTaintRule " + r.ruleName : null;
  }
}
