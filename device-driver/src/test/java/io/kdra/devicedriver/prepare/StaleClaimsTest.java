package io.kdra.devicedriver.prepare;

import static io.kdra.devicedriver.testing.ClaimFixture.claim;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.devicedriver.prepare.StaleClaims.Observation;
import io.kdra.devicedriver.prepare.StaleClaims.State;
import io.kdra.devicedriver.testing.ClaimFixture;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class StaleClaimsTest {
  private static final Instant NOW = Instant.parse("2026-12-06T10:00:00Z");
  private static final Duration GRACE = Duration.ofMinutes(5);

  private static ResourceClaim reserved(ClaimFixture f) {
    return f.reservedFor("web").build();
  }

  private static ClaimFixture job() {
    return claim("job").uid("u1").result("gpu", "gpu-0");
  }

  /** How the claim was looked up: by the checkpointed name, or by UID for a rebuilt entry. */
  enum Lookup {
    BY_NAME,
    BY_UID
  }

  static Stream<Arguments> observations() {
    return Stream.of(
        Arguments.of("in use", Lookup.BY_NAME, Optional.of(reserved(job())), State.IN_USE, ""),
        Arguments.of("deleted", Lookup.BY_NAME, Optional.empty(), State.GONE, "no longer exists"),
        Arguments.of(
            "name reused",
            Lookup.BY_NAME,
            Optional.of(reserved(claim("job").uid("u2").result("gpu", "gpu-0"))),
            State.GONE,
            "uid u2"),
        Arguments.of(
            "deallocated",
            Lookup.BY_NAME,
            Optional.of(claim("job").uid("u1").unallocated().build()),
            State.GONE,
            "no longer allocated"),
        Arguments.of(
            "allocated on another node",
            Lookup.BY_NAME,
            Optional.of(
                reserved(claim("job").uid("u1").result("gpu", "gpu.kdra.io", "node-z", "gpu-0"))),
            State.GONE,
            "without devices of this node"),
        Arguments.of(
            "reserved for no pod",
            Lookup.BY_NAME,
            Optional.of(job().build()),
            State.GONE,
            "reserved for no pod"),
        // an entry rebuilt from its CDI spec: only its UID is known
        Arguments.of(
            "rebuilt, in use", Lookup.BY_UID, Optional.of(reserved(job())), State.IN_USE, ""),
        Arguments.of(
            "rebuilt, no claim has its uid",
            Lookup.BY_UID,
            Optional.empty(),
            State.GONE,
            "no resourceclaim has its uid"),
        Arguments.of(
            "rebuilt, deallocated",
            Lookup.BY_UID,
            Optional.of(claim("job").uid("u1").unallocated().reservedFor("web").build()),
            State.GONE,
            "no longer allocated"),
        Arguments.of(
            "rebuilt, allocated on another node",
            Lookup.BY_UID,
            Optional.of(
                reserved(claim("job").uid("u1").result("gpu", "gpu.kdra.io", "node-z", "gpu-0"))),
            State.GONE,
            "without devices of this node"),
        Arguments.of(
            "rebuilt, reserved for no pod",
            Lookup.BY_UID,
            Optional.of(job().build()),
            State.GONE,
            "reserved for no pod"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("observations")
  void observe(
      String name, Lookup lookup, Optional<ResourceClaim> api, State expected, String reason) {
    Observation o =
        lookup == Lookup.BY_NAME
            ? StaleClaims.observe("u1", api, ClaimFixture.DRIVER, ClaimFixture.NODE)
            : StaleClaims.observeByUid("u1", api, ClaimFixture.DRIVER, ClaimFixture.NODE);
    assertThat(o.state()).isEqualTo(expected);
    assertThat(o.reason()).contains(reason);
  }

  private static final Observation GONE = new Observation(State.GONE, "deleted");
  private static final Observation IN_USE = new Observation(State.IN_USE, "");
  private static final Observation UNKNOWN = new Observation(State.UNKNOWN, "HTTP 503");

  static Stream<Arguments> decisions() {
    return Stream.of(
        // observed, first seen gone (ago, or null), unprepared now?, still waiting?
        Arguments.of("first seen gone: waits", GONE, null, false, true),
        Arguments.of(
            "gone within the grace period: waits", GONE, Duration.ofMinutes(4), false, true),
        Arguments.of("gone for the grace period: unprepared", GONE, GRACE, true, false),
        Arguments.of("in use again: forgotten", IN_USE, Duration.ofMinutes(10), false, false),
        Arguments.of("in use: never touched", IN_USE, null, false, false),
        Arguments.of("API error: keeps the clock", UNKNOWN, Duration.ofMinutes(10), false, true),
        Arguments.of("API error: starts no clock", UNKNOWN, null, false, false));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("decisions")
  void decide(
      String name, Observation observed, Duration goneFor, boolean unprepared, boolean waiting) {
    Map<String, Instant> since = goneFor == null ? Map.of() : Map.of("u1", NOW.minus(goneFor));

    StaleClaims.Decision d = StaleClaims.decide(Map.of("u1", observed), since, NOW, GRACE);

    assertThat(d.unprepare().containsKey("u1")).as("unprepared").isEqualTo(unprepared);
    assertThat(d.goneSince().containsKey("u1")).as("waiting").isEqualTo(waiting);
    if (waiting) {
      assertThat(d.goneSince().get("u1")).isEqualTo(goneFor == null ? NOW : NOW.minus(goneFor));
    }
    if (unprepared) {
      assertThat(d.unprepare().get("u1")).contains("deleted").contains("300s");
    }
  }

  @Test
  void aClaimNoLongerCheckpointedIsForgotten() {
    StaleClaims.Decision d =
        StaleClaims.decide(Map.of(), Map.of("u1", NOW.minusSeconds(60)), NOW, GRACE);
    assertThat(d.goneSince()).isEmpty();
    assertThat(d.unprepare()).isEmpty();
  }
}
