package io.kdra.leadership;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class LeadershipTest {

  private final List<String> calls = new ArrayList<>();
  private final Leadership leadership =
      Leadership.elected(
          "computeclass-bridge",
          "bridge-a",
          () -> calls.add("release"),
          () -> calls.add("step down"));

  @Test
  void aStandbyLeadsOnlyOnceElected() {
    assertThat(leadership.leading()).isFalse();
    leadership.callbacks().onNewLeader("bridge-b");
    assertThat(leadership.leading()).isFalse();
    assertThat(leadership.leader()).isEqualTo("bridge-b");

    leadership.callbacks().onNewLeader("bridge-a");
    leadership.callbacks().onStartLeading();
    assertThat(leadership.leading()).isTrue();
    assertThat(leadership.leader()).isEqualTo("bridge-a");
    assertThat(calls).isEmpty();
  }

  @Test
  void onShutdownTheLeaseIsHandedOverAndTheProcessNotEndedTwice() {
    leadership.callbacks().onStartLeading();
    leadership.shuttingDown();
    leadership.callbacks().onStopLeading();
    assertThat(calls).containsExactly("release");
    assertThat(leadership.leading()).isFalse();
  }

  @Test
  void aLeaseLostWhileRunningStepsDownWithoutReleasingAnything() {
    leadership.callbacks().onStartLeading();
    leadership.callbacks().onStopLeading();
    assertThat(calls).containsExactly("step down");
    assertThat(leadership.leading()).isFalse();
  }

  @Test
  void theWritingStartsOnlyOnceElected() {
    leadership.callbacks(() -> calls.add("write")).onNewLeader("bridge-b");
    assertThat(calls).isEmpty();
    leadership.callbacks(() -> calls.add("write")).onStartLeading();
    assertThat(calls).containsExactly("write");
    assertThat(leadership.leading()).isTrue();
  }

  @Test
  void theTasksForLeadingRunAtEachWinOnceLeadingIsTrue() {
    leadership.whenLeading(() -> calls.add("leading " + leadership.leading()));
    leadership.whenLeading(
        () -> {
          throw new IllegalStateException("a failing task");
        });
    leadership.whenLeading(() -> calls.add("second"));
    leadership.callbacks().onNewLeader("bridge-b");
    assertThat(calls).isEmpty();

    leadership.callbacks().onStartLeading();
    leadership.callbacks().onStopLeading();
    leadership.callbacks().onStartLeading();
    assertThat(calls)
        .containsExactly("leading true", "second", "step down", "leading true", "second");
  }

  @Test
  void aSingleReplicaAlwaysLeads() {
    Leadership single = Leadership.single("computeclass-bridge", "only");
    assertThat(single.elected()).isFalse();
    assertThat(single.leading()).isTrue();
    assertThat(single.leader()).isEqualTo("only");
  }

  @Test
  void theIdentityIsConfiguredElseThePodNameElseUnique() {
    assertThat(Leadership.identity(Optional.of("x"), "pod-1", "claim-controller")).isEqualTo("x");
    assertThat(Leadership.identity(Optional.of(" "), "pod-1", "claim-controller"))
        .isEqualTo("pod-1");
    assertThat(Leadership.identity(Optional.empty(), null, "claim-controller"))
        .startsWith("claim-controller-")
        .isNotEqualTo(Leadership.identity(Optional.empty(), "", "claim-controller"));
  }
}
