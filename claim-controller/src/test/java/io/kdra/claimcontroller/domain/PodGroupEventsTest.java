package io.kdra.claimcontroller.domain;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Which PodGroup updates bring its waiting members back (upstream's gangscheduling hints). */
class PodGroupEventsTest {

  static PodGroupPolicy gang(int minCount) {
    return new PodGroupPolicy("pg", minCount, null);
  }

  static PodGroupPolicy withClaim(String claim) {
    List<PodGroupClaims.Entry> entries = List.of(new PodGroupClaims.Entry("gpu", null, "tpl"));
    return new PodGroupPolicy(
        "pg",
        2,
        null,
        new PodGroupClaims("pg", "uid", entries, claim == null ? Map.of() : Map.of("gpu", claim)));
  }

  static Stream<Arguments> updates() {
    return Stream.of(
        Arguments.of("minCount decreased", gang(4), gang(2), TemplateMode.OWN, true),
        Arguments.of("minCount increased", gang(2), gang(4), TemplateMode.OWN, false),
        Arguments.of("minCount unchanged", gang(2), gang(2), TemplateMode.OWN, false),
        Arguments.of("gang policy removed", gang(2), gang(0), TemplateMode.OWN, false),
        Arguments.of("gang policy added", gang(0), gang(2), TemplateMode.OWN, false),
        Arguments.of(
            "group claim recorded by kube-controller-manager (adopt mode)",
            withClaim(null),
            withClaim("pg-gpu-x"),
            TemplateMode.ADOPT,
            true),
        Arguments.of(
            "group claim recorded by this controller (own mode): its own write",
            withClaim(null),
            withClaim("pg-gpu-x"),
            TemplateMode.OWN,
            false),
        Arguments.of(
            "status unchanged (adopt mode)",
            withClaim("pg-gpu-x"),
            withClaim("pg-gpu-x"),
            TemplateMode.ADOPT,
            false));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("updates")
  void anUpdateWakesTheMembersOnlyWhenItCanLetThemIn(
      String name, PodGroupPolicy old, PodGroupPolicy now, TemplateMode mode, boolean wakes) {
    assertThat(PodGroupEvents.wakesOnUpdate(old, now, mode)).isEqualTo(wakes);
  }
}
