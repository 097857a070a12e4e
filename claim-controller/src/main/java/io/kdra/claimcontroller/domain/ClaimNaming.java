package io.kdra.claimcontroller.domain;

/**
 * The {@code metadata.generateName} of a claim created from a template, exactly as upstream's
 * resourceclaim controller computes it: {@code <pod>-<podClaim>-}, and when that is longer than
 * {@link Upstream#MAX_GENERATE_NAME_BASE}, both parts truncated in proportion to their lengths
 * (joined by one hyphen and without a trailing one) so that the claim entry's name survives a long
 * pod name. Upstream truncates by bytes; names are DNS labels, so bytes are characters.
 */
public final class ClaimNaming {

  private ClaimNaming() {}

  /** The generateName for pod {@code podName}'s claim entry {@code podClaimName}. */
  public static String generateName(String podName, String podClaimName) {
    String base = podName + "-" + podClaimName + "-";
    int len = base.length();
    if (len <= Upstream.MAX_GENERATE_NAME_BASE) {
      return base;
    }
    int max = Upstream.MAX_GENERATE_NAME_BASE;
    return podName.substring(0, podName.length() * max / len)
        + "-"
        + podClaimName.substring(0, podClaimName.length() * max / len);
  }
}
