package io.kdra.computeclassbridge.catalog;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One accelerator type of the catalog.
 *
 * @param type GKE's accelerator type string, e.g. {@code nvidia-l4}
 * @param kind whether it is named by {@code gpu.type} or {@code tpu.type}
 * @param description for people; shown in generated objects' annotations
 * @param names values the profiles' selector templates compare with
 * @param selectors raw CEL per profile name, replacing that profile's template for this type
 */
public record Accelerator(
    String type,
    AcceleratorKind kind,
    String description,
    List<String> names,
    Map<String, String> selectors) {

  public Accelerator {
    Objects.requireNonNull(type);
    Objects.requireNonNull(kind);
    description = description == null ? "" : description;
    names = List.copyOf(names);
    selectors = Map.copyOf(selectors);
  }
}
