package io.kdra.slicepublisher.k8s;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.kdra.slicepublisher.domain.SliceSemantics;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Remembers slices that the API server stored differently from how they were sent, typically
 * because a feature gate is off and the server dropped fields (consumesCounters and sharedCounters
 * on a cluster without partitionable devices). Without this the publisher would rewrite such a
 * slice on every resync, forever. Upstream's controller handles the same case by adopting the
 * stored form as desired. Thread-safe.
 */
public final class DroppedFields {

  private record Seen(Object sent, Object stored) {}

  private final Map<String, Seen> byName = new ConcurrentHashMap<>();

  /**
   * Compares what was sent with what the server returned.
   *
   * @return true when the server changed the content (the caller reports it once per change)
   */
  public boolean record(ResourceSlice sent, ResourceSlice stored) {
    String name = stored.getMetadata().getName();
    if (SliceSemantics.sameContent(stored, sent)) {
      byName.remove(name);
      return false;
    }
    Seen seen = new Seen(SliceSemantics.contentKey(sent), SliceSemantics.contentKey(stored));
    return !seen.equals(byName.put(name, seen));
  }

  /**
   * Whether {@code stored} carries {@code wanted}: equal content, or exactly what the server made
   * of this very content last time.
   */
  public boolean sameContent(ResourceSlice stored, ResourceSlice wanted) {
    if (SliceSemantics.sameContent(stored, wanted)) {
      return true;
    }
    Seen seen = byName.get(stored.getMetadata().getName());
    return seen != null
        && seen.sent().equals(SliceSemantics.contentKey(wanted))
        && seen.stored().equals(SliceSemantics.contentKey(stored));
  }
}
