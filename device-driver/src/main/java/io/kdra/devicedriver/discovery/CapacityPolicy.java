package io.kdra.devicedriver.discovery;

import io.kdra.core.model.Quantity;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * How much of one capacity of a shared device a single allocation consumes (resource.k8s.io/v1
 * {@code CapacityRequestPolicy}): a default for requests that do not name the capacity, and either
 * a list of valid amounts or a range with an optional step. The allocator rounds requests up.
 *
 * @param defaultValue consumed when a request does not name this capacity
 * @param validValues allowed amounts, ascending; empty when a range or nothing is given
 * @param min smallest amount of a range
 * @param max largest amount of a range; empty means up to the capacity
 * @param step a range's granularity; empty means any amount from min
 */
public record CapacityPolicy(
    Quantity defaultValue,
    List<Quantity> validValues,
    Optional<Quantity> min,
    Optional<Quantity> max,
    Optional<Quantity> step) {

  public CapacityPolicy {
    Objects.requireNonNull(defaultValue, "defaultValue");
    validValues = List.copyOf(validValues);
    if (!validValues.isEmpty() && min.isPresent()) {
      throw new IllegalArgumentException("validValues and a range are mutually exclusive");
    }
  }

  /** A range from {@code min} in steps of {@code step}, up to the capacity. */
  public static CapacityPolicy range(Quantity defaultValue, Quantity min, Quantity step) {
    return new CapacityPolicy(
        defaultValue, List.of(), Optional.of(min), Optional.empty(), Optional.of(step));
  }
}
