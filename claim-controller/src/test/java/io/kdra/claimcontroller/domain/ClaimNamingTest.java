package io.kdra.claimcontroller.domain;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ClaimNamingTest {

  static Stream<Arguments> cases() {
    String pod60 = "p".repeat(60);
    return Stream.of(
        Arguments.of(
            Named.of("short names keep the trailing hyphen", "my-pod"), "gpu", "my-pod-gpu-"),
        Arguments.of(
            Named.of("exactly 57 characters are kept", "p".repeat(51)),
            "gpu1",
            "p".repeat(51) + "-gpu1-"),
        // 58 > 57: both parts cut to len*57/58 (integer division), no trailing hyphen
        Arguments.of(
            Named.of("58 characters: both parts truncated", "p".repeat(52)),
            "gpu1",
            "p".repeat(51) + "-" + "gpu"),
        // base = 60 + 1 + 10 + 1 = 72; pod 60*57/72 = 47, claim 10*57/72 = 7
        Arguments.of(
            Named.of("long pod name keeps part of the entry name", pod60),
            "accelerat0",
            "p".repeat(47) + "-acceler"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void generateNameFollowsUpstream(String pod, String entry, String expected) {
    String name = ClaimNaming.generateName(pod, entry);
    assertThat(name).isEqualTo(expected);
    assertThat(name.length()).isLessThanOrEqualTo(Upstream.MAX_GENERATE_NAME_BASE);
  }
}
