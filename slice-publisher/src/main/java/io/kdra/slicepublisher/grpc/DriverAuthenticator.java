package io.kdra.slicepublisher.grpc;

import io.grpc.Status;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Authenticates a driver stream before anything else is known of its caller, at a bounded cost to
 * the API server: answers are cached by the token's SHA-256 (a valid token's until {@link
 * #POSITIVE_TTL} or its expiry, whichever is first, a refused one's for {@link #NEGATIVE_TTL}),
 * concurrent streams with one token share one review, and a review is made only while the peer's
 * {@link PeerRateLimiter} allows. The caller's node is valid until its token expires ({@link
 * TokenExpiry}; a token whose expiry cannot be read: for {@link #MAX_STREAM_AGE}), when {@link
 * #atExpiry} ends its stream: the driver reconnects with its renewed token. Thread-safe; blocks for
 * the review it makes or waits for.
 */
public final class DriverAuthenticator {

  /** How long a valid token's review is trusted: a deleted pod's token stops working by then. */
  static final Duration POSITIVE_TTL = Duration.ofSeconds(60);

  /** Shorter: a token refused during an API-server hiccup is reviewed again soon. */
  static final Duration NEGATIVE_TTL = Duration.ofSeconds(10);

  /** A stream whose token names no expiry: the chart's token lifetime. */
  static final Duration MAX_STREAM_AGE = Duration.ofHours(1);

  /** Past this many cached answers, expired ones are dropped. */
  static final int PURGE_ABOVE = 1024;

  /** A verified caller: its node (null: any node, authentication is off) and until when. */
  public record Caller(String node, Instant validUntil) {}

  /** A stream refused before its first snapshot; the status says why, for the driver's log. */
  public static final class Refused extends Exception {
    private final Status status;

    Refused(Status status) {
      super(status.getDescription());
      this.status = status;
    }

    public Status status() {
      return status;
    }
  }

  /** Runs an action after a delay; the returned handle cancels it. */
  public interface Timer {
    Runnable schedule(Duration delay, Runnable action);
  }

  private final TokenReviewer reviewer;
  private final PeerRateLimiter limiter;
  private final Clock clock;
  private final Timer timer;
  private final Map<String, Answer> answers = new ConcurrentHashMap<>();

  public DriverAuthenticator(
      TokenReviewer reviewer, int burstPerPeer, Duration refillPerPeer, Clock clock, Timer timer) {
    this.reviewer = reviewer;
    this.limiter = new PeerRateLimiter(burstPerPeer, refillPerPeer, clock);
    this.clock = clock;
    this.timer = timer;
  }

  /**
   * @param token the bearer token, or null
   * @param peer the caller's address, for the rate limit
   */
  public Caller authenticate(String token, String peer) throws Refused {
    if (!reviewer.requiresToken()) {
      return new Caller(nodeOrRefused(token == null ? "" : token), null);
    }
    if (token == null || token.isEmpty()) {
      throw new Refused(
          Status.UNAUTHENTICATED.withDescription(
              "no \"authorization: Bearer <ServiceAccount token>\" metadata"));
    }
    String key = sha256(token);
    Answer cached = answers.get(key);
    if (cached != null && cached.fresh(clock.instant())) {
      return cached.caller();
    }
    Answer mine = new Answer();
    Answer winner = answers.compute(key, (k, old) -> old != null && old.fresh(now()) ? old : mine);
    if (winner != mine) {
      return winner.caller();
    }
    Instant reviewedAt = clock.instant();
    if (!limiter.tryAcquire(peer)) {
      // not an answer about the token: forgotten, so that it costs the next stream nothing
      answers.remove(key, mine);
      mine.complete(
          null,
          Status.RESOURCE_EXHAUSTED.withDescription(
              "too many token reviews for " + peer + "; retry later"),
          reviewedAt);
      return mine.caller();
    }
    purge();
    try {
      String node = reviewer.nodeOf(token);
      Instant expiry = TokenExpiry.of(token).orElse(reviewedAt.plus(MAX_STREAM_AGE));
      mine.complete(new Caller(node, expiry), null, min(reviewedAt.plus(POSITIVE_TTL), expiry));
    } catch (TokenReviewer.Rejected e) {
      mine.complete(null, unauthenticated(e.getMessage()), reviewedAt.plus(NEGATIVE_TTL));
    } catch (RuntimeException | Error e) {
      // not an answer about the token: the next stream asks again; the waiting ones are refused
      answers.remove(key, mine);
      mine.complete(null, unauthenticated("token review failed: " + e), reviewedAt);
      throw e;
    }
    return mine.caller();
  }

  /**
   * Runs {@code end} when the caller's token expires (at once if it has).
   *
   * @return cancels it; call when the stream ends first
   */
  public Runnable atExpiry(Caller caller, Runnable end) {
    if (caller.validUntil() == null) {
      return () -> {};
    }
    Duration left = Duration.between(clock.instant(), caller.validUntil());
    return timer.schedule(left.isNegative() ? Duration.ZERO : left, end);
  }

  private String nodeOrRefused(String token) throws Refused {
    try {
      return reviewer.nodeOf(token);
    } catch (TokenReviewer.Rejected e) {
      throw new Refused(unauthenticated(e.getMessage()));
    }
  }

  private static Status unauthenticated(String reason) {
    return Status.UNAUTHENTICATED.withDescription(reason);
  }

  private void purge() {
    if (answers.size() > PURGE_ABOVE) {
      Instant now = now();
      answers.values().removeIf(a -> !a.fresh(now));
    }
  }

  private Instant now() {
    return clock.instant();
  }

  private static Instant min(Instant a, Instant b) {
    return a.isBefore(b) ? a : b;
  }

  private static String sha256(String token) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }

  /** One review's answer, pending until the review returns; fresh until {@code until}. */
  private static final class Answer {
    private final CompletableFuture<Answer> done = new CompletableFuture<>();
    private volatile Instant until;
    private Caller caller;
    private Status refusal;

    void complete(Caller caller, Status refusal, Instant until) {
      this.caller = caller;
      this.refusal = refusal;
      this.until = until;
      done.complete(this);
    }

    boolean fresh(Instant now) {
      Instant u = until;
      return u == null || now.isBefore(u);
    }

    /** Waits for the review if it is still under way. */
    Caller caller() throws Refused {
      done.join();
      if (caller == null) {
        throw new Refused(refusal);
      }
      return caller;
    }
  }
}
