package io.kdra.leadership;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class LeadershipMetersTest {

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final AtomicReference<Leadership> current = new AtomicReference<>();

  private double leader() {
    return registry
        .get("kdra.leadership.leader")
        .tag("component", "slice-publisher")
        .gauge()
        .value();
  }

  private double acquired() {
    return registry
        .get("kdra.leadership.acquired")
        .tag("component", "slice-publisher")
        .functionCounter()
        .count();
  }

  @Test
  void bothMetersExistBeforeTheElectionIsSetUpAndFollowEachTermOfLeadership() {
    LeadershipMeters.register(registry, "slice-publisher", current::get);
    assertThat(leader()).isZero();
    assertThat(acquired()).isZero();

    Leadership elected = Leadership.elected("slice-publisher", "pub-a", () -> {}, () -> {});
    current.set(elected);
    assertThat(leader()).isZero();

    elected.callbacks().onStartLeading();
    assertThat(leader()).isEqualTo(1);
    assertThat(acquired()).isEqualTo(1);

    elected.shuttingDown();
    elected.callbacks().onStopLeading();
    assertThat(leader()).isZero();
    assertThat(acquired()).as("a count, not a state").isEqualTo(1);

    elected.callbacks().onStartLeading();
    assertThat(acquired()).isEqualTo(2);
  }

  @Test
  void aSingleReplicaLeadsWithoutCountingAnElection() {
    current.set(Leadership.single("slice-publisher", "only"));
    LeadershipMeters.register(registry, "slice-publisher", current::get);
    assertThat(leader()).isEqualTo(1);
    assertThat(acquired()).isZero();
  }
}
