package io.kdra.slicepublisher.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class TokenExpiryTest {

  private static String jwt(String payload) {
    Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
    return b64.encodeToString("{\"alg\":\"RS256\"}".getBytes(StandardCharsets.UTF_8))
        + "."
        + b64.encodeToString(payload.getBytes(StandardCharsets.UTF_8))
        + ".c2ln";
  }

  static Stream<Arguments> tokens() {
    return Stream.of(
        arguments(
            "a projected token",
            jwt("{\"aud\":[\"x\"],\"exp\":1796529600}"),
            Optional.of(Instant.ofEpochSecond(1796529600))),
        arguments("no exp claim", jwt("{\"sub\":\"x\"}"), Optional.empty()),
        arguments("exp not a number", jwt("{\"exp\":\"soon\"}"), Optional.empty()),
        arguments("not a JWT", "opaque-token", Optional.empty()),
        arguments("payload not base64", "a.%%%.c", Optional.empty()),
        arguments("payload not JSON", "a." + "bm90IGpzb24" + ".c", Optional.empty()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("tokens")
  void readsTheExpClaim(String name, String token, Optional<Instant> expected) {
    assertThat(TokenExpiry.of(token)).isEqualTo(expected);
  }
}
