package io.kdra.claimcontroller.domain;

/**
 * resourceVersions compared as integers, as upstream's assume cache does: they are opaque to
 * clients by the API conventions, but kube-apiserver's are etcd revisions. Pure.
 */
public final class ResourceVersions {

  private ResourceVersions() {}

  /** What a resourceVersion that is no integer reads as: never newer than anything. */
  public static final long NOT_A_VERSION = -1;

  /** {@code resourceVersion} as upstream's assume cache reads it: a decimal int64. */
  public static long of(String resourceVersion) {
    if (resourceVersion == null) {
      return NOT_A_VERSION;
    }
    try {
      long v = Long.parseLong(resourceVersion);
      return v < 0 ? NOT_A_VERSION : v;
    } catch (NumberFormatException e) {
      return NOT_A_VERSION;
    }
  }
}
