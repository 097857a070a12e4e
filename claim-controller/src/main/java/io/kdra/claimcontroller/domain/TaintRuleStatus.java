package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.kdra.core.taint.DeviceTaintRule;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * A DeviceTaintRule's {@code EvictionInProgress} condition, worded as upstream's eviction
 * controller words it ({@code maybeUpdateRuleStatus}): for {@code NoExecute}, how many pods still
 * need to go (True, {@code PodsPendingEviction}) or that none do ({@code Completed} once some were
 * evicted, else {@code NotStarted}); for {@code None}, what {@code NoExecute} would do; for other
 * effects, that they evict nothing. Written at most every {@link #PERIOD} per generation. Pure.
 */
public final class TaintRuleStatus {

  public static final String TYPE = "EvictionInProgress";

  /** Upstream's {@code ruleStatusPeriod}: the least time between two updates of one generation. */
  public static final Duration PERIOD = Duration.ofSeconds(10);

  /**
   * What the condition reports: pods still to evict for the rule (for {@code None}: that would be
   * evicted with {@code NoExecute}) and their namespaces, pods this controller evicted for it since
   * its start, and (for {@code None}) the published and the allocated devices it selects.
   */
  public record Counts(
      long pendingPods,
      long pendingNamespaces,
      long evictedPods,
      long publishedDevices,
      long allocatedDevices) {}

  private TaintRuleStatus() {}

  /** The rule's current condition, if it has one. */
  public static Optional<Condition> current(DeviceTaintRule rule) {
    if (rule.getStatus() == null || rule.getStatus().getConditions() == null) {
      return Optional.empty();
    }
    return rule.getStatus().getConditions().stream()
        .filter(c -> TYPE.equals(c.getType()))
        .findFirst();
  }

  /**
   * How long to wait before the next update may be written: zero when it may be written now (no
   * condition yet, a new generation, or {@link #PERIOD} passed since the last).
   */
  public static Duration waitBeforeUpdate(DeviceTaintRule rule, Instant now) {
    Optional<Condition> c = current(rule);
    if (c.isEmpty()
        || !Objects.equals(c.get().getObservedGeneration(), rule.getMetadata().getGeneration())
        || c.get().getLastTransitionTime() == null) {
      return Duration.ZERO;
    }
    Duration since = Duration.between(Instant.parse(c.get().getLastTransitionTime()), now);
    return since.compareTo(PERIOD) >= 0 ? Duration.ZERO : PERIOD.minus(since);
  }

  /** Whether {@code next} says something else than the rule's condition (time aside). */
  public static boolean differs(DeviceTaintRule rule, Condition next) {
    Optional<Condition> c = current(rule);
    return c.isEmpty()
        || !Objects.equals(c.get().getStatus(), next.getStatus())
        || !Objects.equals(c.get().getReason(), next.getReason())
        || !Objects.equals(c.get().getMessage(), next.getMessage())
        || !Objects.equals(c.get().getObservedGeneration(), next.getObservedGeneration());
  }

  /** The condition for these counts; {@code lastTransitionTime} is {@code now}. */
  public static Condition condition(DeviceTaintRule rule, Counts counts, Instant now) {
    String effect = rule.getSpec().getTaint().getEffect();
    String status = "False";
    String reason;
    StringBuilder message = new StringBuilder();
    switch (effect == null ? "" : effect) {
      case "NoExecute" -> {
        if (counts.pendingPods() > 0) {
          status = "True";
          reason = "PodsPendingEviction";
          message
              .append(
                  counts.pendingPods() == 1
                      ? "1 pod needs to be evicted in "
                      : counts.pendingPods() + " pods need to be evicted in ")
              .append(
                  counts.pendingNamespaces() == 1
                      ? "1 namespace."
                      : counts.pendingNamespaces() + " different namespaces.");
        } else {
          reason = counts.evictedPods() > 0 ? "Completed" : "NotStarted";
        }
      }
      case "None" -> {
        reason = "NoEffect";
        message
            .append(plural(counts.publishedDevices(), "published device", "published devices"))
            .append(" selected. ")
            .append(plural(counts.allocatedDevices(), "allocated device", "allocated devices"))
            .append(" selected. ")
            .append(counts.pendingPods() == 1 ? "1 pod" : counts.pendingPods() + " pods")
            .append(" would be evicted in ")
            .append(
                counts.pendingNamespaces() == 1
                    ? "1 namespace "
                    : counts.pendingNamespaces() + " different namespaces ")
            .append(
                "if the effect was NoExecute. This information will not be updated again."
                    + " Recreate the DeviceTaintRule to trigger an update.");
      }
      default -> {
        reason = "OtherEffect";
        message.append("Eviction only happens for the NoExecute effect.");
      }
    }
    if (counts.evictedPods() > 0) {
      if (!message.isEmpty()) {
        message.append(' ');
      }
      message
          .append(counts.evictedPods() == 1 ? "1 pod " : counts.evictedPods() + " pods ")
          .append("evicted since starting the controller.");
    }
    return new ConditionBuilder()
        .withType(TYPE)
        .withStatus(status)
        .withReason(reason)
        .withMessage(message.toString())
        .withObservedGeneration(rule.getMetadata().getGeneration())
        .withLastTransitionTime(now.truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString())
        .build();
  }

  private static String plural(long n, String one, String many) {
    return n == 1 ? "1 " + one : n + " " + many;
  }
}
