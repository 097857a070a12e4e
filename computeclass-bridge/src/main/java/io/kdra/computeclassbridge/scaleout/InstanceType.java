package io.kdra.computeclassbridge.scaleout;

import java.util.List;
import java.util.Objects;

/**
 * A machine type the autoscaler can launch, and the accelerators it comes with.
 *
 * @param name the value of {@code node.kubernetes.io/instance-type} on such nodes
 * @param accelerator the accelerator type as a ComputeClass names it ({@code gpu.type} or {@code
 *     tpu.type}), e.g. {@code nvidia-l4}
 * @param count accelerators per node
 */
public record InstanceType(String name, String accelerator, int count) {

  public InstanceType {
    Objects.requireNonNull(name);
    Objects.requireNonNull(accelerator);
    if (count < 1) {
      throw new IllegalArgumentException(name + ": the accelerator count must be at least 1");
    }
  }

  /**
   * Parses {@code <instance type>=<accelerator type>:<count>} entries, e.g. {@code
   * a2-highgpu-1g=nvidia-tesla-a100:1}, the form of {@code
   * kdra.computeclass-bridge.scale-out.instance-types}.
   *
   * @throws IllegalArgumentException naming the entry that is not of that form
   */
  public static List<InstanceType> parse(List<String> entries) {
    return entries.stream()
        .map(String::trim)
        .filter(e -> !e.isEmpty())
        .map(InstanceType::parse)
        .toList();
  }

  private static InstanceType parse(String entry) {
    int eq = entry.indexOf('=');
    int colon = entry.lastIndexOf(':');
    if (eq < 1 || colon < eq + 2 || colon == entry.length() - 1) {
      throw new IllegalArgumentException(
          "\"" + entry + "\" is not <instance type>=<accelerator type>:<count>");
    }
    try {
      return new InstanceType(
          entry.substring(0, eq).trim(),
          entry.substring(eq + 1, colon).trim(),
          Integer.parseInt(entry.substring(colon + 1).trim()));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "\"" + entry + "\": the count after ':' is not a whole number", e);
    }
  }
}
