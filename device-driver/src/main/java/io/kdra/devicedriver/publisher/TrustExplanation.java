package io.kdra.devicedriver.publisher;

import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.Arrays;
import java.util.stream.Collectors;

/** Words for a certificate the driver refused, and for the CAs it trusts. */
final class TrustExplanation {

  private TrustExplanation() {}

  /**
   * Subject, issuer and validity, with "expired" or "not yet valid" where it is so at {@code now}.
   */
  static String describe(X509Certificate served, Instant now) {
    Instant from = served.getNotBefore().toInstant();
    Instant until = served.getNotAfter().toInstant();
    String state =
        now.isAfter(until)
            ? "EXPIRED since " + until
            : now.isBefore(from) ? "NOT YET VALID until " + from : "valid until " + until;
    return "'"
        + served.getSubjectX500Principal().getName()
        + "' issued by '"
        + served.getIssuerX500Principal().getName()
        + "', "
        + state;
  }

  /** The CAs' subjects, as a list an operator compares with an issuer. */
  static String subjects(X509Certificate[] cas) {
    if (cas.length == 0) {
      return "no CA";
    }
    return Arrays.stream(cas)
        .map(c -> "'" + c.getSubjectX500Principal().getName() + "'")
        .collect(Collectors.joining(", ", "the CA(s) ", ""));
  }
}
