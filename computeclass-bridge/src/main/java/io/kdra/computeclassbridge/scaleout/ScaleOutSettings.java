package io.kdra.computeclassbridge.scaleout;

import java.util.List;
import java.util.Objects;

/**
 * What the NodePools of every ComputeClass have in common, from configuration.
 *
 * @param instanceTypes the machine types to choose from, by accelerator and count
 * @param nodeClassGroup API group of the cloud provider's NodeClass, e.g. {@code karpenter.kwok.sh}
 * @param nodeClassKind its kind, e.g. {@code KWOKNodeClass} or {@code EC2NodeClass}
 * @param nodeClassName the NodeClass every generated NodePool refers to
 */
public record ScaleOutSettings(
    List<InstanceType> instanceTypes,
    String nodeClassGroup,
    String nodeClassKind,
    String nodeClassName) {

  public ScaleOutSettings {
    instanceTypes = List.copyOf(instanceTypes);
    Objects.requireNonNull(nodeClassGroup);
    Objects.requireNonNull(nodeClassKind);
    Objects.requireNonNull(nodeClassName);
  }

  /** The names of the instance types with exactly {@code count} of {@code accelerator}, sorted. */
  public List<String> instanceTypesOf(String accelerator, int count) {
    return instanceTypes.stream()
        .filter(t -> t.accelerator().equals(accelerator) && t.count() == count)
        .map(InstanceType::name)
        .sorted()
        .distinct()
        .toList();
  }
}
