package io.kdra.computeclassbridge.mapping;

import io.kdra.computeclassbridge.catalog.Accelerator;
import java.util.Optional;

/**
 * One priority that became a {@code firstAvailable} subrequest.
 *
 * @param priority index in {@code spec.priorities}
 * @param accelerator the catalog entry the priority names
 * @param count devices per claim
 * @param topology the TPU topology the devices must have, if the priority names one
 * @param subrequestName DNS label, a function of type, count and topology only, so reordering
 *     priorities reorders subrequests without renaming them
 * @param deviceClassName the DeviceClass generated for the accelerator
 */
public record Alternative(
    int priority,
    Accelerator accelerator,
    int count,
    Optional<String> topology,
    String subrequestName,
    String deviceClassName) {

  /** For messages: {@code nvidia-l4 x2} or {@code tpu-v5-lite-podslice x4 2x2}. */
  public String describe() {
    return accelerator.type() + " x" + count + topology.map(t -> " " + t).orElse("");
  }
}
