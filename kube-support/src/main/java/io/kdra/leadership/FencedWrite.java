package io.kdra.leadership;

/**
 * What a reconcile does next when its write was fenced ({@link LeaseFence}, {@link
 * Leadership#leading()}, informers not listed yet). A replica that leads but whose fence is closed
 * for a moment (its renewal not seen by the fence yet, an informer still listing) looks again soon.
 * A replica that does not lead leaves the object alone: retrying it would cost every standby one
 * reconcile per object and second, for as long as it stands by, and write nothing. It is brought
 * back when this replica starts leading ({@link Leadership#whenLeading}, {@link
 * LeadershipRequeue}).
 */
public enum FencedWrite {
  /** This replica leads: the fence opens soon, look again after a short delay. */
  RETRY_SOON,
  /** Another replica leads, or none yet: nothing until this one leads. */
  AWAIT_LEADERSHIP;

  /** The rule, from whether this replica leads now. */
  public static FencedWrite next(boolean leading) {
    return leading ? RETRY_SOON : AWAIT_LEADERSHIP;
  }
}
