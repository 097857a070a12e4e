package io.kdra.core.extended;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import java.time.Instant;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Which DeviceClass serves each extended resource name: a class serves its {@code
 * spec.extendedResourceName} and, always, its implicit name {@code
 * deviceclass.resource.kubernetes.io/<class>}. When several classes claim one name the newest (by
 * {@code creationTimestamp}) wins, and among equally new ones the lexicographically first name.
 *
 * <p>Upstream keeps this in an event-driven cache ({@code extendedresourcecache}) whose answer for
 * duplicates can depend on the order of informer events (an older duplicate added after a newer one
 * is ignored, and deleting the winner does not bring the loser back); this class computes from the
 * current set of classes what that cache converges to when events come in creation order, so that
 * every attempt with the same classes decides the same.
 */
public final class ExtendedResourceClasses {

  /** The prefix of a class's implicit extended resource name. */
  public static final String IMPLICIT_PREFIX = "deviceclass.resource.kubernetes.io/";

  private static final Comparator<DeviceClass> WINNER_FIRST =
      Comparator.comparing(ExtendedResourceClasses::created, Comparator.reverseOrder())
          .thenComparing(c -> c.getMetadata().getName());

  private final Map<String, DeviceClass> byResource;

  private ExtendedResourceClasses(Map<String, DeviceClass> byResource) {
    this.byResource = byResource;
  }

  /** The mapping for {@code classes}. */
  public static ExtendedResourceClasses of(Collection<DeviceClass> classes) {
    Map<String, DeviceClass> byResource = new HashMap<>();
    for (DeviceClass c : classes) {
      if (c.getMetadata() == null || c.getMetadata().getName() == null) {
        continue;
      }
      offer(byResource, IMPLICIT_PREFIX + c.getMetadata().getName(), c);
      String explicit = c.getSpec() == null ? null : c.getSpec().getExtendedResourceName();
      if (explicit != null && !explicit.isEmpty()) {
        offer(byResource, explicit, c);
      }
    }
    return new ExtendedResourceClasses(byResource);
  }

  private static void offer(Map<String, DeviceClass> byResource, String name, DeviceClass c) {
    byResource.merge(name, c, (a, b) -> WINNER_FIRST.compare(a, b) <= 0 ? a : b);
  }

  /** The class that serves {@code resourceName}, if any. */
  public Optional<DeviceClass> classFor(String resourceName) {
    return Optional.ofNullable(byResource.get(resourceName));
  }

  /** True when {@code resourceName} is served by some class. */
  public boolean serves(String resourceName) {
    return byResource.containsKey(resourceName);
  }

  /** Classes without a parseable timestamp sort as oldest. */
  private static Instant created(DeviceClass c) {
    String ts = c.getMetadata().getCreationTimestamp();
    if (ts == null || ts.isEmpty()) {
      return Instant.MIN;
    }
    try {
      return Instant.parse(ts);
    } catch (RuntimeException e) {
      return Instant.MIN;
    }
  }
}
