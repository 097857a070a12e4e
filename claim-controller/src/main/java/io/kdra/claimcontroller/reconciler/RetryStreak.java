package io.kdra.claimcontroller.reconciler;

/**
 * When a pod's run of {@code Retry} outcomes (a claim or volume changed under the decision) is
 * worth an INFO line. One retry is a routine race (DEBUG); a pod retried on and on is stuck on
 * something that keeps changing, or on an assumption that never settles, and an operator should see
 * it without turning on DEBUG. Logged at the 10th attempt and every 100th after, so a stuck pod
 * writes one line every few minutes at the retry's 1 s pace, not one a second.
 */
final class RetryStreak {

  static final int FIRST = 10;
  static final int EVERY = 100;

  private RetryStreak() {}

  /** Whether the pod's {@code attempt}-th attempt since it was last bound, a retry, is logged. */
  static boolean worthInfo(int attempt) {
    return attempt == FIRST || (attempt > FIRST && attempt % EVERY == 0);
  }
}
