package io.kdra.devicedriver.sharing;

import io.kdra.core.model.Quantity;
import java.nio.file.Path;
import java.util.Objects;

/**
 * How this node shares its whole GPUs between claims (node configuration, not per claim).
 *
 * @param strategy what the GPUs are advertised as and how prepare configures them
 * @param shares how many shares one GPU is cut into (capacity {@code shares})
 * @param memoryStep the granularity of {@code memory} requests on a shared GPU
 * @param mpsRoot host directory under which each GPU's MPS pipe and log directories are made
 * @param mpsAcrossNamespaces whether the node's MPS serves claims of several namespaces at once
 *     (they then share its {@code /dev/shm}); by default one namespace at a time ({@link
 *     MpsTenancy})
 */
public record SharingSettings(
    Strategy strategy, int shares, Quantity memoryStep, Path mpsRoot, boolean mpsAcrossNamespaces) {

  /** Node-wide sharing strategies. */
  public enum Strategy {
    /** One claim per GPU. */
    EXCLUSIVE,
    /** Many claims per GPU; the GPU time-slices between their processes. */
    TIME_SLICING,
    /** Many claims per GPU through one MPS control daemon per GPU. */
    MPS
  }

  /** MPS for one namespace at a time. */
  public SharingSettings(Strategy strategy, int shares, Quantity memoryStep, Path mpsRoot) {
    this(strategy, shares, memoryStep, mpsRoot, false);
  }

  /** No sharing. */
  public static final SharingSettings EXCLUSIVE =
      new SharingSettings(Strategy.EXCLUSIVE, 1, Quantity.parse("1Gi"), Path.of("/run/kdra/mps"));

  public SharingSettings {
    Objects.requireNonNull(strategy, "strategy");
    if (shares < 1) {
      throw new IllegalArgumentException(
          "kdra.device-driver.sharing.shares must be at least 1, is " + shares);
    }
    if (memoryStep.sign() <= 0) {
      throw new IllegalArgumentException("kdra.device-driver.sharing.memory-step must be positive");
    }
  }

  /** Whether GPUs are advertised with {@code allowMultipleAllocations}. */
  public boolean shared() {
    return strategy != Strategy.EXCLUSIVE;
  }
}
