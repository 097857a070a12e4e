package io.kdra.slicepublisher.grpc;

import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/** What an operator must hear about the validity of the certificate the publisher serves. */
public final class CertificateValidity {

  private CertificateValidity() {}

  /**
   * Why drivers (and the API server, for the webhook) will refuse {@code served} at {@code now}:
   * expired or not valid yet; empty while it is valid.
   */
  public static Optional<String> problem(X509Certificate served, Instant now) {
    Instant from = served.getNotBefore().toInstant();
    Instant until = served.getNotAfter().toInstant();
    String subject = served.getSubjectX500Principal().getName();
    if (now.isAfter(until)) {
      return Optional.of(
          "the certificate '"
              + subject
              + "' EXPIRED at "
              + until
              + ": drivers refuse it on every new connection; renew it (or delete its Secret and"
              + " upgrade the release when the chart made it)");
    }
    if (now.isBefore(from)) {
      return Optional.of(
          "the certificate '"
              + subject
              + "' is NOT VALID until "
              + from
              + ": drivers refuse it on every new connection (check the clocks)");
    }
    return Optional.empty();
  }

  /** Seconds from {@code now} until {@code served} expires; negative once it has. */
  public static double secondsLeft(X509Certificate served, Instant now) {
    return Duration.between(now, served.getNotAfter().toInstant()).toMillis() / 1000.0;
  }
}
