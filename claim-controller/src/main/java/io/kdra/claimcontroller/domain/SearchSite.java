package io.kdra.claimcontroller.domain;

/**
 * Where one scheduling attempt's device search runs. Pure.
 *
 * <p>Under the scheduling lock, a search that runs out of time costs every other pod its limit. A
 * pod whose search ran out once is likely to again (its claim is expensive to search), so its later
 * searches run off the lock, on a snapshot taken under it; a placement found there is redone under
 * the lock on that node before anything is written. A pod whose search never ran out searches under
 * the lock as before: redoing its placement would cost the others more than its search does.
 */
public enum SearchSite {
  /** The search runs in the scheduling cycle, under the lock. */
  UNDER_LOCK,
  /** The search runs off the lock on a snapshot; its placement is redone under the lock. */
  OFF_LOCK;

  /**
   * Where the search of an attempt runs.
   *
   * @param searchedOutBefore whether an earlier attempt of the pod ran out of search time
   * @param searches whether the pod has claims to allocate (without, there is no device search)
   * @param extendedByClass whether its extended resources are served by a DeviceClass (searched
   *     with its special claim, which is kept under the lock)
   */
  public static SearchSite of(
      boolean searchedOutBefore, boolean searches, boolean extendedByClass) {
    return searchedOutBefore && searches && !extendedByClass ? OFF_LOCK : UNDER_LOCK;
  }
}
