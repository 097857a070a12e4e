package io.kdra.core.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Semver 2.0.0 parsing and precedence as blang/semver (used by upstream) implements it. */
class SemverTest {

  static Stream<Arguments> strict() {
    return Stream.of(
        arguments(named("plain", "1.2.3"), true),
        arguments(named("zeros", "0.0.0"), true),
        arguments(named("pre-release and build", "1.0.0-rc.1+build.5"), true),
        arguments(named("driver version", "550.54.15"), true),
        arguments(named("leading v", "v1.2.3"), false),
        arguments(named("missing patch", "1.2"), false),
        arguments(named("leading zero", "01.2.3"), false),
        arguments(named("leading zero in numeric pre-release", "1.2.3-01"), false),
        arguments(named("empty pre-release identifier", "1.2.3-a..b"), false),
        arguments(named("four components", "1.2.3.4"), false));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("strict")
  void parsesStrictly(String text, boolean valid) {
    assertThat(Semver.isSemver(text, false)).isEqualTo(valid);
    if (valid) {
      assertThat(Semver.parse(text)).hasToString(text);
    } else {
      assertThatThrownBy(() -> Semver.parse(text)).hasMessageContaining("invalid semantic version");
    }
  }

  static Stream<Arguments> normalized() {
    return Stream.of(
        arguments(named("leading v", "v1.2.3"), "1.2.3"),
        arguments(named("missing patch", "1.2"), "1.2.0"),
        arguments(named("major only", "v2"), "2.0.0"),
        arguments(named("leading zeros", "01.02.03"), "1.2.3"),
        arguments(named("keeps pre-release", "v1.2-beta"), "1.2.0-beta"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("normalized")
  void normalizesLikeSemverWithTrue(String text, String expected) {
    assertThat(Semver.parseNormalized(text)).hasToString(expected);
    assertThat(Semver.isSemver(text, true)).isTrue();
  }

  static Stream<Arguments> precedence() {
    // the ordering example of semver.org section 11
    return Stream.of(
        arguments(named("major", "1.0.0"), "2.0.0", -1),
        arguments(named("minor numeric not lexical", "2.10.0"), "2.9.0", 1),
        arguments(named("pre-release below release", "1.0.0-alpha"), "1.0.0", -1),
        arguments(named("shorter pre-release first", "1.0.0-alpha"), "1.0.0-alpha.1", -1),
        arguments(named("numeric below alphanumeric", "1.0.0-alpha.1"), "1.0.0-alpha.beta", -1),
        arguments(named("numeric identifiers numerically", "1.0.0-beta.2"), "1.0.0-beta.11", -1),
        arguments(named("lexical identifiers", "1.0.0-beta.11"), "1.0.0-rc.1", -1),
        arguments(named("build metadata ignored", "1.0.0+a"), "1.0.0+b", 0));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("precedence")
  void ordersByPrecedence(String a, String b, int expected) {
    assertThat(Integer.signum(Semver.parse(a).compareTo(Semver.parse(b)))).isEqualTo(expected);
    assertThat(Integer.signum(Semver.parse(b).compareTo(Semver.parse(a)))).isEqualTo(-expected);
  }
}
