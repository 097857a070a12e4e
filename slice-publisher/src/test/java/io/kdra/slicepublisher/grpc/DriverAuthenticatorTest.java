package io.kdra.slicepublisher.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Status;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class DriverAuthenticatorTest {

  private static final Instant T0 = Instant.parse("2026-12-06T04:00:00Z");
  private final FakeTime time = new FakeTime(T0);

  /** "token-for-NODE..." is a driver on NODE (up to the first dot); counts its calls. */
  static final class CountingReviewer implements TokenReviewer {
    final AtomicInteger calls = new AtomicInteger();

    @Override
    public String nodeOf(String token) throws Rejected {
      calls.incrementAndGet();
      if (!token.startsWith("token-for-")) {
        throw new Rejected("token not authenticated");
      }
      return token.substring("token-for-".length()).split("\\.")[0];
    }
  }

  private final CountingReviewer reviewer = new CountingReviewer();

  private DriverAuthenticator authenticator(int burst) {
    return new DriverAuthenticator(reviewer, burst, Duration.ofSeconds(1), time, time);
  }

  /** A JWT (unsigned: only its payload is read) for node-a that expires at {@code exp}. */
  private static String jwt(Instant exp) {
    Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
    return "token-for-node-a."
        + b64.encodeToString(
            ("{\"exp\":" + exp.getEpochSecond() + "}").getBytes(StandardCharsets.UTF_8))
        + ".sig";
  }

  private static Status.Code refusal(DriverAuthenticator a, String token, String peer) {
    try {
      a.authenticate(token, peer);
      return Status.Code.OK;
    } catch (DriverAuthenticator.Refused e) {
      return e.status().getCode();
    }
  }

  @Test
  void aThousandConcurrentStreamsWithOneBadTokenCostOneReviewPerWindow() throws Exception {
    DriverAuthenticator a = authenticator(5);
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<Status.Code>> results = new ArrayList<>();
      for (int i = 0; i < 1000; i++) {
        String peer = "10.0.0." + (i % 3);
        results.add(pool.submit(() -> refusal(a, "forged", peer)));
      }
      for (Future<Status.Code> r : results) {
        assertThat(r.get()).isEqualTo(Status.Code.UNAUTHENTICATED);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(reviewer.calls).hasValue(1);

    time.advance(DriverAuthenticator.NEGATIVE_TTL);
    for (int i = 0; i < 1000; i++) {
      assertThat(refusal(a, "forged", "10.0.0.1")).isEqualTo(Status.Code.UNAUTHENTICATED);
    }
    assertThat(reviewer.calls).hasValue(2);
  }

  @Test
  void aValidTokenIsReviewedOncePerMinuteAndNeverPastItsExpiry() throws Exception {
    DriverAuthenticator a = authenticator(5);
    String lasting = "token-for-node-a";
    assertThat(a.authenticate(lasting, "p").node()).isEqualTo("node-a");
    time.advance(Duration.ofSeconds(59));
    a.authenticate(lasting, "p");
    assertThat(reviewer.calls).hasValue(1);
    time.advance(Duration.ofSeconds(1));
    a.authenticate(lasting, "p");
    assertThat(reviewer.calls).hasValue(2);

    String shortLived = jwt(time.instant().plusSeconds(20));
    a.authenticate(shortLived, "p");
    time.advance(Duration.ofSeconds(20));
    a.authenticate(shortLived, "p");
    assertThat(reviewer.calls).hasValue(4);
  }

  @Test
  void eachPeerMayCauseOnlyBurstReviewsThenOnePerRefillWhateverItsTokens() {
    DriverAuthenticator a = authenticator(3);
    List<Status.Code> codes = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      codes.add(refusal(a, "forged-" + i, "10.0.0.9"));
    }
    assertThat(codes.subList(0, 3)).containsOnly(Status.Code.UNAUTHENTICATED);
    assertThat(codes.subList(3, 1000)).containsOnly(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(reviewer.calls).hasValue(3);
    // another peer is not held up, and an answer already cached costs no review
    assertThat(refusal(a, "token-for-node-b", "10.0.0.10")).isEqualTo(Status.Code.OK);
    assertThat(refusal(a, "forged-0", "10.0.0.9")).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(reviewer.calls).hasValue(4);

    time.advance(Duration.ofSeconds(1));
    assertThat(refusal(a, "forged-1000", "10.0.0.9")).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(refusal(a, "forged-1001", "10.0.0.9")).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
  }

  @Test
  void aStreamEndsWhenItsTokenExpiresUnlessItEndedFirst() throws Exception {
    DriverAuthenticator a = authenticator(5);
    DriverAuthenticator.Caller caller = a.authenticate(jwt(T0.plusSeconds(3600)), "p");
    assertThat(caller.validUntil()).isEqualTo(T0.plusSeconds(3600));
    AtomicInteger ended = new AtomicInteger();
    a.atExpiry(caller, ended::incrementAndGet);
    time.advance(Duration.ofSeconds(3599));
    assertThat(ended).hasValue(0);
    time.advance(Duration.ofSeconds(1));
    assertThat(ended).hasValue(1);

    Runnable cancel = a.atExpiry(caller, ended::incrementAndGet);
    assertThat(time.pending()).as("already expired: due now").isEqualTo(1);
    cancel.run();
    time.advance(Duration.ofHours(2));
    assertThat(ended).hasValue(1);
  }

  @Test
  void aTokenWithoutReadableExpiryLivesAtMostAnHour() throws Exception {
    DriverAuthenticator.Caller caller = authenticator(5).authenticate("token-for-node-a", "p");
    assertThat(caller.validUntil()).isEqualTo(T0.plus(DriverAuthenticator.MAX_STREAM_AGE));
  }

  @Test
  void withoutATokenNoReviewIsMade() {
    assertThatThrownBy(() -> authenticator(5).authenticate(null, "p"))
        .isInstanceOf(DriverAuthenticator.Refused.class)
        .hasMessageContaining("authorization: Bearer");
    assertThat(reviewer.calls).hasValue(0);
  }

  @Test
  void withAuthenticationOffEveryoneIsAnyNodeForever() throws Exception {
    DriverAuthenticator a =
        new DriverAuthenticator(TokenReviewer.ALLOW_ALL, 1, Duration.ofSeconds(1), time, time);
    for (int i = 0; i < 3; i++) {
      assertThat(a.authenticate(null, "p")).isEqualTo(new DriverAuthenticator.Caller(null, null));
    }
  }
}
