package io.kdra.leadership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

@EnableKubernetesMockClient(crud = true)
class LeaseFenceTest {

  KubernetesClient client;

  static final Instant T = Instant.parse("2026-12-01T12:00:00Z");
  static final Duration DEADLINE = Duration.ofSeconds(10);

  static Stream<Arguments> cases() {
    return Stream.of(
        Arguments.of("held, renewed just now", "me", T, T.plusMillis(1), true),
        Arguments.of("held, renewed 9.9 s ago", "me", T, T.plusMillis(9_900), true),
        Arguments.of(
            "held, but the renewal is as old as the deadline", "me", T, T.plus(DEADLINE), false),
        Arguments.of(
            "held, renewal older than the deadline (process starved)",
            "me",
            T,
            T.plusSeconds(30),
            false),
        Arguments.of("another replica holds it", "other", T, T.plusMillis(1), false),
        Arguments.of("released: no holder", null, T, T.plusMillis(1), false),
        Arguments.of("held, never renewed", "me", null, T, false));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void writesOnlyWhileTheLeaseIsHeldAndFresh(
      String name, String holder, Instant renewed, Instant now, boolean may) {
    assertThat(LeaseFence.mayWrite("me", holder, renewed, DEADLINE, now)).isEqualTo(may);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void anOpenFenceAlwaysLetsWrite(
      String name, String holder, Instant renewed, Instant now, boolean may) {
    assertThat(LeaseFence.open().mayWrite()).isTrue();
  }

  @Test
  void closesWhenAnotherReplicaTakesTheLease() {
    ZonedDateTime now = ZonedDateTime.now(ZoneOffset.UTC);
    client
        .leases()
        .inNamespace("kdra")
        .resource(
            new LeaseBuilder()
                .withNewMetadata()
                .withName("lease")
                .endMetadata()
                .withNewSpec()
                .withHolderIdentity("me")
                .withLeaseDurationSeconds(15)
                .withRenewTime(now)
                .endSpec()
                .build())
        .create();
    try (LeaseFence fence =
        LeaseFence.watching(client, "kdra", "lease", "me", DEADLINE, Clock.systemUTC())) {
      // renewed on every poll, as the elector does: on a loaded machine the fence's informer may
      // start more than the deadline after the Lease was written, and a stale renewal keeps the
      // fence closed, as it should
      await()
          .atMost(Duration.ofMinutes(2))
          .until(
              () -> {
                renew();
                return fence.mayWrite();
              });
      client
          .leases()
          .inNamespace("kdra")
          .withName("lease")
          .edit(
              l -> {
                l.getSpec().setHolderIdentity("other");
                return l;
              });
      await().atMost(Duration.ofMinutes(2)).until(() -> !fence.mayWrite());
    }
  }

  private void renew() {
    client
        .leases()
        .inNamespace("kdra")
        .withName("lease")
        .edit(
            l -> {
              l.getSpec().setRenewTime(ZonedDateTime.now(ZoneOffset.UTC));
              return l;
            });
  }
}
