package io.kdra.computeclassbridge.leadership;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class LeadershipTest {

  private final List<String> calls = new ArrayList<>();
  private final Leadership leadership = Leadership.elected("bridge-a",
      () -> calls.add("release"), () -> calls.add("exit"));

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
  void aLeaseLostWhileRunningEndsTheProcessWithoutReleasingAnything() {
    leadership.callbacks().onStartLeading();
    leadership.callbacks().onStopLeading();
    assertThat(calls).containsExactly("exit");
    assertThat(leadership.leading()).isFalse();
  }

  @Test
  void aSingleReplicaAlwaysLeads() {
    Leadership single = Leadership.single("only");
    assertThat(single.elected()).isFalse();
    assertThat(single.leading()).isTrue();
    assertThat(single.leader()).isEqualTo("only");
  }

  @Test
  void theIdentityIsConfiguredElseThePodNameElseUnique() {
    assertThat(LeadershipBeans.identity(Optional.of("x"), "pod-1")).isEqualTo("x");
    assertThat(LeadershipBeans.identity(Optional.of(" "), "pod-1")).isEqualTo("pod-1");
    assertThat(LeadershipBeans.identity(Optional.empty(), null))
        .startsWith("computeclass-bridge-")
        .isNotEqualTo(LeadershipBeans.identity(Optional.empty(), ""));
  }
}
