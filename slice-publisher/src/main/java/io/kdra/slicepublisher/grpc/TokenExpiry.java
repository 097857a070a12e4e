package io.kdra.slicepublisher.grpc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.time.Instant;
import java.util.Base64;
import java.util.Optional;

/**
 * The expiry of a bearer token, read from its JWT payload's {@code exp} claim without verifying the
 * signature: the TokenReview has already vouched for the token, and the time only decides when its
 * stream ends (a ServiceAccount token the kubelet projects is a JWT with {@code exp}). Pure.
 */
final class TokenExpiry {

  private static final ObjectMapper JSON = new ObjectMapper();

  private TokenExpiry() {}

  /** The {@code exp} claim; empty when the token is not a JWT or names no expiry. */
  static Optional<Instant> of(String token) {
    String[] parts = token.split("\\.", -1);
    if (parts.length != 3) {
      return Optional.empty();
    }
    try {
      JsonNode exp = JSON.readTree(Base64.getUrlDecoder().decode(parts[1])).path("exp");
      return exp.isIntegralNumber() && exp.canConvertToLong()
          ? Optional.of(Instant.ofEpochSecond(exp.asLong()))
          : Optional.empty();
    } catch (IOException | IllegalArgumentException | java.time.DateTimeException e) {
      return Optional.empty();
    }
  }
}
