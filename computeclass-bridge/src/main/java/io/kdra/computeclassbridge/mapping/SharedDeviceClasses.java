package io.kdra.computeclassbridge.mapping;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassBuilder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A generated DeviceClass is shared by every ComputeClass that uses its accelerator type. Its spec
 * depends on the catalog only; its users are recorded twice, as one {@code
 * used-by.computeclass.kdra.io/<name>} label each (for people and selectors) and as one owner
 * reference each (so Kubernetes' garbage collector deletes it with the last user even while the
 * bridge is down). Pure functions over objects.
 */
public final class SharedDeviceClasses {

  private SharedDeviceClasses() {}

  /**
   * The class as it should be with {@code desired}'s user added to the users already recorded on
   * {@code actual}.
   *
   * @param liveUsers label values ({@link Labels#value}) of the ComputeClasses that exist; users
   *     recorded on {@code actual} that are not live are dropped, so a ComputeClass deleted while
   *     the bridge was down does not keep the class alive forever
   */
  public static DeviceClass withUser(
      DeviceClass desired, DeviceClass actual, Set<String> liveUsers) {
    Map<String, String> labels = new LinkedHashMap<>(desired.getMetadata().getLabels());
    usersOf(actual).stream()
        .filter(liveUsers::contains)
        .forEach(u -> labels.put(Labels.USED_BY_PREFIX + u, ""));
    List<OwnerReference> owners = new ArrayList<>();
    OwnerReference mine = desired.getMetadata().getOwnerReferences().get(0);
    for (OwnerReference o : actual.getMetadata().getOwnerReferences()) {
      if (!o.getName().equals(mine.getName())
          && liveUsers.contains(Labels.value(o.getName()))
          && isComputeClass(o)) {
        owners.add(o);
      }
    }
    owners.add(mine);
    owners.sort((a, b) -> a.getName().compareTo(b.getName()));
    return new DeviceClassBuilder(desired)
        .editMetadata()
        .withLabels(labels)
        .withOwnerReferences(owners)
        .withResourceVersion(actual.getMetadata().getResourceVersion())
        .endMetadata()
        .build();
  }

  /**
   * The class with one user taken away.
   *
   * @return empty when no user is left: the class should be deleted
   */
  public static Optional<DeviceClass> withoutUser(DeviceClass actual, String computeClass) {
    String key = Labels.usedBy(computeClass);
    Map<String, String> labels = new LinkedHashMap<>(actual.getMetadata().getLabels());
    labels.remove(key);
    if (labels.keySet().stream().noneMatch(k -> k.startsWith(Labels.USED_BY_PREFIX))) {
      return Optional.empty();
    }
    return Optional.of(
        new DeviceClassBuilder(actual)
            .editMetadata()
            .withLabels(labels)
            .withOwnerReferences(
                actual.getMetadata().getOwnerReferences().stream()
                    .filter(o -> !(isComputeClass(o) && o.getName().equals(computeClass)))
                    .toList())
            .endMetadata()
            .build());
  }

  /** Label values of the ComputeClasses recorded as users. */
  public static List<String> usersOf(DeviceClass deviceClass) {
    Map<String, String> labels = deviceClass.getMetadata().getLabels();
    return labels == null
        ? List.of()
        : labels.keySet().stream()
            .filter(k -> k.startsWith(Labels.USED_BY_PREFIX))
            .map(k -> k.substring(Labels.USED_BY_PREFIX.length()))
            .sorted()
            .toList();
  }

  private static boolean isComputeClass(OwnerReference o) {
    return "ComputeClass".equals(o.getKind());
  }
}
