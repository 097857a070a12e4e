package io.kdra.slicepublisher.domain;

import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.kdra.core.validation.ResourceSliceValidator;
import io.kdra.core.validation.ValidationError;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BiPredicate;

/**
 * Pure diff of one pool: desired content versus the stored slices -> the writes to issue.
 *
 * <p>Generation rule. Let G be the highest generation stored (0 when nothing is). The stored slices
 * at G are <em>consistent</em> with the desired pool when each of them is a desired slice (same
 * name) with the same content, slice count included. Then G is kept and only missing or older
 * slices are written (this finishes a publication that failed halfway without another bump).
 * Otherwise the pool's content changed: the generation becomes G+1 and every desired slice is
 * written, so that consumers, who only look at the highest generation and compare its slice count,
 * never mix old and new devices. Nothing changed means no writes at all.
 *
 * <p>Every slice to be created or updated is first checked with dra-core's {@link
 * ResourceSliceValidator}; one the API server would refuse is left out of the writes and reported
 * in {@link Plan#refused()} (the other slices are still written: the pool is then incomplete at its
 * new generation, which consumers handle, rather than stale everywhere). Unchanged slices are not
 * checked, so a steady state costs nothing.
 *
 * <p>Order: deletes first (better to withdraw devices that are gone even if the new ones cannot be
 * published), then updates, then creates, each in slice order. Thread-safe, stateless.
 */
public final class PoolSyncPlanner {

  private PoolSyncPlanner() {}

  /**
   * The plan for one pool.
   *
   * @param desired the desired pool, empty when the pool should not exist
   * @param actual every stored slice of this driver and pool (from a cache; may be stale, the
   *     writes then fail on their preconditions and the pool is planned again)
   */
  public static Plan plan(Optional<DesiredPool> desired, List<ResourceSlice> actual) {
    return plan(desired, actual, SliceSemantics::sameContent);
  }

  /**
   * The plan for one pool, with a custom content comparison.
   *
   * @param sameContent (stored, wanted) -> whether the stored slice already carries what is wanted,
   *     generation aside; {@link SliceSemantics#sameContent} unless the API server is known to
   *     store some content differently from how it was sent
   */
  public static Plan plan(
      Optional<DesiredPool> desired,
      List<ResourceSlice> actual,
      BiPredicate<ResourceSlice, ResourceSlice> sameContent) {
    long top = actual.stream().mapToLong(PoolSyncPlanner::generation).max().orElse(0L);
    if (desired.isEmpty()) {
      return new Plan(
          top, actual.stream().sorted(byName()).map(PoolSyncPlanner::delete).toList(), List.of());
    }
    Map<String, ResourceSlice> stored = new LinkedHashMap<>();
    actual.stream().sorted(byName()).forEach(s -> stored.put(s.getMetadata().getName(), s));

    List<ResourceSlice> wanted = desired.get().toSlices(top);
    Map<String, ResourceSlice> wantedByName = new LinkedHashMap<>();
    wanted.forEach(s -> wantedByName.put(s.getMetadata().getName(), s));
    boolean consistent =
        stored.values().stream()
            .filter(s -> generation(s) == top)
            .allMatch(
                s -> {
                  ResourceSlice w = wantedByName.get(s.getMetadata().getName());
                  return w != null && sameContent.test(s, w);
                });
    long generation = consistent ? top : top + 1;
    if (!consistent) {
      wanted = desired.get().toSlices(generation);
      wantedByName.clear();
      wanted.forEach(s -> wantedByName.put(s.getMetadata().getName(), s));
    }

    List<SliceWrite> deletes = new ArrayList<>();
    List<SliceWrite> updates = new ArrayList<>();
    List<SliceWrite> creates = new ArrayList<>();
    List<RefusedSlice> refused = new ArrayList<>();
    for (ResourceSlice s : stored.values()) {
      if (!wantedByName.containsKey(s.getMetadata().getName())) {
        deletes.add(delete(s));
      }
    }
    for (ResourceSlice w : wanted) {
      ResourceSlice s = stored.get(w.getMetadata().getName());
      // consistent: slices at the top generation were just found equal; older ones are not
      if (s != null && consistent && generation(s) == top) {
        continue;
      }
      List<ValidationError> errors = ResourceSliceValidator.validate(w);
      if (!errors.isEmpty()) {
        refused.add(new RefusedSlice(w.getMetadata().getName(), errors));
      } else if (s == null) {
        creates.add(new SliceWrite.Create(w));
      } else {
        updates.add(new SliceWrite.Update(update(s, w)));
      }
    }
    List<SliceWrite> writes = new ArrayList<>(deletes);
    writes.addAll(updates);
    writes.addAll(creates);
    return new Plan(generation, writes, refused);
  }

  private static SliceWrite delete(ResourceSlice s) {
    return new SliceWrite.Delete(
        s.getMetadata().getName(), s.getMetadata().getUid(), s.getMetadata().getResourceVersion());
  }

  /** The desired slice on top of the stored one's metadata, keeping taints' timeAdded. */
  private static ResourceSlice update(ResourceSlice stored, ResourceSlice wanted) {
    ResourceSlice out = new ResourceSliceBuilder(wanted).build();
    out.getMetadata().setResourceVersion(stored.getMetadata().getResourceVersion());
    out.getMetadata().setUid(stored.getMetadata().getUid());
    out.getMetadata().setLabels(stored.getMetadata().getLabels());
    out.getMetadata().setAnnotations(stored.getMetadata().getAnnotations());
    keepTimeAdded(stored.getSpec().getDevices(), out.getSpec().getDevices());
    return out;
  }

  /** Same device, same taint (key, value, effect): keep when it was first added. */
  private static void keepTimeAdded(List<Device> from, List<Device> to) {
    if (from == null || to == null) {
      return;
    }
    Map<String, Device> old = new LinkedHashMap<>();
    from.forEach(d -> old.put(d.getName(), d));
    for (Device d : to) {
      Device o = old.get(d.getName());
      if (o == null || o.getTaints() == null || d.getTaints() == null) {
        continue;
      }
      for (DeviceTaint t : d.getTaints()) {
        if (t.getTimeAdded() != null) {
          continue;
        }
        o.getTaints().stream()
            .filter(
                ot ->
                    Objects.equals(ot.getKey(), t.getKey())
                        && Objects.equals(ot.getValue(), t.getValue())
                        && Objects.equals(ot.getEffect(), t.getEffect()))
            .findFirst()
            .ifPresent(ot -> t.setTimeAdded(ot.getTimeAdded()));
      }
    }
  }

  static long generation(ResourceSlice s) {
    return SliceSemantics.generation(s);
  }

  private static Comparator<ResourceSlice> byName() {
    return Comparator.comparing(s -> s.getMetadata().getName());
  }

  /**
   * The writes for one pool.
   *
   * @param generation the pool generation after the writes
   * @param writes deletes, updates, creates; empty when the stored pool is as desired
   * @param refused the desired slices left out of the writes because they are invalid
   */
  public record Plan(long generation, List<SliceWrite> writes, List<RefusedSlice> refused) {
    public Plan {
      writes = List.copyOf(writes);
      refused = List.copyOf(refused);
    }
  }
}
