package io.kdra.devicedriver.sharing;

import io.kdra.core.model.Quantity;
import io.kdra.devicedriver.prepare.PreparedClaim;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * MPS limits of a share of one GPU: the active thread percentage and the pinned device memory, in
 * MiB ({@link Long#MAX_VALUE}: none). A claim's share follows the allocator's accounting (consumed
 * shares / the GPU's shares, consumed memory); it is recorded in the claim's CDI spec so that the
 * GPU's other claims read it back from the checkpoint, also after a driver restart. The GPU's one
 * daemon serves every claim on it, so what it enforces for all of them ({@link #ceiling}) is the
 * largest share among them: no claim is held below its own share, and no client gets more than the
 * largest share on its GPU, whatever it sets in its environment. Pure.
 */
record MpsLimits(int threadPercentage, long pinnedMemoryMib) {
  static final String THREADS_VARIABLE = "KDRA_MPS_SHARE_THREAD_PERCENTAGE";
  static final String MEMORY_VARIABLE = "KDRA_MPS_SHARE_PINNED_MEMORY_MIB";
  private static final Pattern THREADS = Pattern.compile("\"" + THREADS_VARIABLE + "=(\\d+)\"");
  private static final Pattern MEMORY = Pattern.compile("\"" + MEMORY_VARIABLE + "=(\\d+)\"");
  private static final BigDecimal MIB = BigDecimal.valueOf(1024L * 1024L);

  /**
   * A claim's share.
   *
   * @param consumed what the allocator accounted to the claim on the GPU
   * @param shares the GPU's {@code shares} capacity, null if it has none
   * @param gpuMemory the GPU's {@code memory} capacity, null if it has none
   */
  static MpsLimits ofShare(Map<String, Quantity> consumed, Quantity shares, Quantity gpuMemory) {
    MpsLimits whole = wholeGpu(gpuMemory);
    Quantity used = consumed.get(SharedGpus.SHARES);
    int percent = whole.threadPercentage;
    if (used != null && shares != null && shares.sign() > 0) {
      percent =
          used.value()
              .multiply(BigDecimal.valueOf(100))
              .divide(shares.value(), 0, RoundingMode.CEILING)
              .intValue();
      percent = Math.min(100, Math.max(1, percent));
    }
    Quantity memory = consumed.get("memory");
    long mib = memory == null ? whole.pinnedMemoryMib : mib(memory);
    return new MpsLimits(percent, mib);
  }

  /** No limit beyond the GPU itself. */
  static MpsLimits wholeGpu(Quantity gpuMemory) {
    return new MpsLimits(100, gpuMemory == null ? Long.MAX_VALUE : mib(gpuMemory));
  }

  /** The variables that record a share in a claim's CDI spec. */
  static List<String> env(MpsLimits share) {
    return share.pinnedMemoryMib == Long.MAX_VALUE
        ? List.of(THREADS_VARIABLE + "=" + share.threadPercentage)
        : List.of(
            THREADS_VARIABLE + "=" + share.threadPercentage,
            MEMORY_VARIABLE + "=" + share.pinnedMemoryMib);
  }

  /**
   * What the GPU's daemon enforces for every client: the largest of {@code own} and the shares its
   * other MPS claims recorded. A claim prepared before shares were recorded counts as the whole
   * GPU, so that no claim is held below what it was given.
   *
   * @param others the other prepared claims on the GPU
   */
  static MpsLimits ceiling(MpsLimits own, Collection<PreparedClaim> others, Quantity gpuMemory) {
    MpsLimits theirs = ceiling(others, gpuMemory);
    return new MpsLimits(
        Math.max(own.threadPercentage, theirs.threadPercentage),
        Math.max(own.pinnedMemoryMib, theirs.pinnedMemoryMib));
  }

  /**
   * What the GPU's daemon enforces for the MPS claims on it, each by its recorded share (the whole
   * GPU for one prepared before shares were recorded); the smallest limits for none.
   */
  static MpsLimits ceiling(Collection<PreparedClaim> claims, Quantity gpuMemory) {
    MpsLimits whole = wholeGpu(gpuMemory);
    int percent = 1;
    long mib = 0;
    for (PreparedClaim other : claims) {
      if (!MpsTenancy.usesMps(other)) {
        continue;
      }
      percent =
          Math.max(
              percent, recorded(THREADS, other).orElse((long) whole.threadPercentage).intValue());
      mib = Math.max(mib, recorded(MEMORY, other).orElse(whole.pinnedMemoryMib));
    }
    return new MpsLimits(percent, mib);
  }

  private static Optional<Long> recorded(Pattern variable, PreparedClaim claim) {
    Matcher m = variable.matcher(claim.cdiSpec());
    return m.find() ? Optional.of(Long.parseLong(m.group(1))) : Optional.empty();
  }

  private static long mib(Quantity q) {
    return q.value().divide(MIB, 0, RoundingMode.CEILING).longValueExact();
  }
}
