package io.kdra.core.config;

import io.kdra.core.model.Quantity;
import java.util.Optional;

/**
 * How a GPU is shared by the containers of one claim: the decoded {@code sharing} of our opaque
 * config kind (see {@link OpaqueConfigDecoder}). Without any config a device is exclusive.
 */
public sealed interface SharingConfig {

  /** The strategy name as users write it. */
  String strategy();

  /** One container (process set) at a time, no sharing settings. */
  record Exclusive() implements SharingConfig {
    @Override
    public String strategy() {
      return "Exclusive";
    }
  }

  /** CUDA time-slicing with one of the driver's interval classes. */
  record TimeSlicing(Interval interval) implements SharingConfig {
    @Override
    public String strategy() {
      return "TimeSlicing";
    }
  }

  /**
   * CUDA MPS.
   *
   * @param activeThreadPercentage 1..100, the share of SMs each client may use
   * @param pinnedMemoryLimit device memory each client may pin, if limited
   */
  record Mps(int activeThreadPercentage, Optional<Quantity> pinnedMemoryLimit)
      implements SharingConfig {
    @Override
    public String strategy() {
      return "MPS";
    }
  }

  /** Time-slice lengths, named as the NVIDIA driver names them (users know these). */
  enum Interval {
    Default,
    Short,
    Medium,
    Long
  }

  SharingConfig EXCLUSIVE = new Exclusive();
}
