package io.kdra.claimcontroller.domain;

import static io.kdra.core.testing.AllocFixtures.taintRule;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.fabric8.kubernetes.api.model.Condition;
import io.kdra.core.taint.DeviceTaintRule;
import io.kdra.core.taint.DeviceTaintRuleStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The EvictionInProgress condition, worded as upstream's (its test's expected messages). */
class TaintRuleStatusTest {

  static final Instant NOW = Instant.parse("2026-12-06T07:00:00Z");

  static DeviceTaintRule rule(String effect) {
    return taintRule("r", "d", null, null, "k", null, effect);
  }

  static Stream<Arguments> cases() {
    return Stream.of(
        arguments(
            "NoExecute, one pod pending",
            "NoExecute",
            new TaintRuleStatus.Counts(1, 1, 0, 0, 0),
            "True",
            "PodsPendingEviction",
            "1 pod needs to be evicted in 1 namespace."),
        arguments(
            "NoExecute, pods of several namespaces, some evicted",
            "NoExecute",
            new TaintRuleStatus.Counts(3, 2, 1, 0, 0),
            "True",
            "PodsPendingEviction",
            "3 pods need to be evicted in 2 different namespaces. 1 pod evicted since starting the"
                + " controller."),
        arguments(
            "NoExecute, done",
            "NoExecute",
            new TaintRuleStatus.Counts(0, 0, 2, 0, 0),
            "False",
            "Completed",
            "2 pods evicted since starting the controller."),
        arguments(
            "NoExecute, nothing to do",
            "NoExecute",
            new TaintRuleStatus.Counts(0, 0, 0, 0, 0),
            "False",
            "NotStarted",
            ""),
        arguments(
            "None: what NoExecute would do",
            "None",
            new TaintRuleStatus.Counts(1, 1, 0, 1, 1),
            "False",
            "NoEffect",
            "1 published device selected. 1 allocated device selected. 1 pod would be evicted in"
                + " 1 namespace if the effect was NoExecute. This information will not be updated"
                + " again. Recreate the DeviceTaintRule to trigger an update."),
        arguments(
            "NoSchedule",
            "NoSchedule",
            new TaintRuleStatus.Counts(0, 0, 0, 0, 0),
            "False",
            "OtherEffect",
            "Eviction only happens for the NoExecute effect."));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void condition(
      String name,
      String effect,
      TaintRuleStatus.Counts counts,
      String status,
      String reason,
      String message) {
    Condition c = TaintRuleStatus.condition(rule(effect), counts, NOW);
    assertThat(c.getType()).isEqualTo("EvictionInProgress");
    assertThat(c.getStatus()).isEqualTo(status);
    assertThat(c.getReason()).isEqualTo(reason);
    assertThat(c.getMessage()).isEqualTo(message);
    assertThat(c.getObservedGeneration()).isEqualTo(1L);
    assertThat(c.getLastTransitionTime()).isEqualTo("2026-12-06T07:00:00Z");
  }

  @Test
  void updatesAtMostEveryPeriodPerGeneration() {
    DeviceTaintRule r = rule("NoExecute");
    assertThat(TaintRuleStatus.waitBeforeUpdate(r, NOW)).isZero();

    Condition written =
        TaintRuleStatus.condition(r, new TaintRuleStatus.Counts(1, 1, 0, 0, 0), NOW);
    r.setStatus(new DeviceTaintRuleStatus(List.of(written)));
    assertThat(TaintRuleStatus.waitBeforeUpdate(r, NOW.plusSeconds(4)))
        .isEqualTo(Duration.ofSeconds(6));
    assertThat(TaintRuleStatus.waitBeforeUpdate(r, NOW.plusSeconds(10))).isZero();
    assertThat(TaintRuleStatus.differs(r, written)).isFalse();
    assertThat(
            TaintRuleStatus.differs(
                r, TaintRuleStatus.condition(r, new TaintRuleStatus.Counts(0, 0, 1, 0, 0), NOW)))
        .isTrue();

    r.getMetadata().setGeneration(2L);
    assertThat(TaintRuleStatus.waitBeforeUpdate(r, NOW.plusSeconds(4))).isZero();
  }
}
