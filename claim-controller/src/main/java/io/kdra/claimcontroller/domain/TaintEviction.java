package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.PodResourceClaimStatus;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceToleration;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.kdra.core.model.DeviceId;
import io.kdra.core.taint.DeviceTaintRule;
import io.kdra.core.taint.DeviceTaintRules;
import io.kdra.core.taint.Tolerations;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * When a pod must go because a device it holds carries a {@code NoExecute} taint that its claim's
 * allocation does not tolerate: upstream's device-taint eviction controller ({@code
 * pkg/controller/devicetainteviction}, {@code claimEvictionTime} and {@code podEvictionTime}).
 *
 * <p>A taint comes from the device's ResourceSlice (the pool's newest generation) or from a
 * DeviceTaintRule. Per taint, the eviction time is its {@code timeAdded} plus the smallest {@code
 * tolerationSeconds} of the allocation's {@code NoExecute} tolerations that match it (negative
 * counts as 0); a matching toleration without seconds tolerates it forever. A claim's time is the
 * earliest of its devices', a pod's the earliest of the claims reserved for it. Pure.
 */
public final class TaintEviction {

  private TaintEviction() {}

  /** One taint that demands eviction: from rule {@code rule}, or (rule null) the device's slice. */
  public record Cause(String rule, DeviceId device, DeviceTaint taint) {

    /** As upstream's reason: {@code DeviceTaintRule NAME} or the slice's device and taint. */
    public String describe() {
      return rule != null
          ? "DeviceTaintRule " + rule
          : "ResourceSlice taint " + taint.getKey() + ":" + taint.getEffect() + " of " + device;
    }
  }

  /** Evict at {@code when} (at once if past), for these causes (rules first, by name). */
  public record Eviction(Instant when, List<Cause> causes) {

    public boolean causedBy(String ruleName) {
      return causes.stream().anyMatch(c -> ruleName.equals(c.rule()));
    }
  }

  private static final Comparator<Cause> ORDER =
      Comparator.comparing((Cause c) -> c.rule() == null)
          .thenComparing(c -> c.rule() == null ? "" : c.rule())
          .thenComparing(Cause::device)
          .thenComparing(c -> c.taint().getKey());

  /**
   * The published taints of each device, from the slices of each pool's newest generation (older
   * generations are on their way out, as upstream's eviction controller reads them).
   */
  public static Map<DeviceId, List<DeviceTaint>> sliceTaints(Collection<ResourceSlice> slices) {
    Map<String, Long> newest = new HashMap<>();
    for (ResourceSlice s : slices) {
      if (s.getSpec() != null && s.getSpec().getPool() != null) {
        newest.merge(poolKey(s), generation(s), Math::max);
      }
    }
    Map<DeviceId, List<DeviceTaint>> taints = new HashMap<>();
    for (ResourceSlice s : slices) {
      if (s.getSpec() == null
          || s.getSpec().getPool() == null
          || s.getSpec().getDevices() == null
          || generation(s) != newest.get(poolKey(s))) {
        continue;
      }
      for (Device d : s.getSpec().getDevices()) {
        if (d.getTaints() != null && !d.getTaints().isEmpty()) {
          taints.put(
              new DeviceId(s.getSpec().getDriver(), s.getSpec().getPool().getName(), d.getName()),
              d.getTaints());
        }
      }
    }
    return taints;
  }

  private static String poolKey(ResourceSlice s) {
    return s.getSpec().getDriver() + "/" + s.getSpec().getPool().getName();
  }

  private static long generation(ResourceSlice s) {
    Long g = s.getSpec().getPool().getGeneration();
    return g == null ? 0 : g;
  }

  /** The claim's eviction, or empty when it has no allocation or no untolerated NoExecute taint. */
  public static Optional<Eviction> ofClaim(
      ResourceClaim claim,
      Function<DeviceId, List<DeviceTaint>> sliceTaints,
      Collection<DeviceTaintRule> rules) {
    if (claim.getStatus() == null
        || claim.getStatus().getAllocation() == null
        || claim.getStatus().getAllocation().getDevices() == null
        || claim.getStatus().getAllocation().getDevices().getResults() == null) {
      return Optional.empty();
    }
    Instant when = null;
    Set<Cause> causes = new LinkedHashSet<>();
    for (DeviceRequestAllocationResult r :
        claim.getStatus().getAllocation().getDevices().getResults()) {
      DeviceId id = new DeviceId(r.getDriver(), r.getPool(), r.getDevice());
      List<DeviceToleration> tolerations =
          r.getTolerations() == null ? List.of() : r.getTolerations();
      for (Cause cause : evictingTaints(id, sliceTaints, rules)) {
        Optional<Instant> at = evictionTime(cause.taint(), tolerations);
        if (at.isEmpty()) {
          continue;
        }
        causes.add(cause);
        if (when == null || at.get().isBefore(when)) {
          when = at.get();
        }
      }
    }
    if (when == null) {
      return Optional.empty();
    }
    List<Cause> sorted = new ArrayList<>(causes);
    sorted.sort(ORDER);
    return Optional.of(new Eviction(when, List.copyOf(sorted)));
  }

  private static List<Cause> evictingTaints(
      DeviceId id,
      Function<DeviceId, List<DeviceTaint>> sliceTaints,
      Collection<DeviceTaintRule> rules) {
    List<Cause> out = new ArrayList<>();
    List<DeviceTaint> published = sliceTaints.apply(id);
    if (published != null) {
      for (DeviceTaint t : published) {
        if ("NoExecute".equals(t.getEffect())) {
          out.add(new Cause(null, id, t));
        }
      }
    }
    for (DeviceTaintRule rule : rules) {
      if ("NoExecute".equals(rule.getSpec() == null ? null : rule.getSpec().getTaint().getEffect())
          && DeviceTaintRules.matches(rule, id.driver(), id.pool(), id.device())) {
        out.add(new Cause(rule.name(), id, rule.getSpec().getTaint()));
      }
    }
    return out;
  }

  /**
   * When the taint evicts: never (empty) if a NoExecute toleration without seconds matches it; else
   * {@code timeAdded} plus the smallest matching {@code tolerationSeconds} (0 without one). A taint
   * without {@code timeAdded} (the API server sets it) counts as added long ago.
   */
  static Optional<Instant> evictionTime(DeviceTaint taint, List<DeviceToleration> tolerations) {
    Instant added =
        taint.getTimeAdded() == null ? Instant.EPOCH : Instant.parse(taint.getTimeAdded());
    Long seconds = null;
    for (DeviceToleration tol : tolerations) {
      if (!"NoExecute".equals(tol.getEffect()) || !Tolerations.tolerates(tol, taint)) {
        continue;
      }
      if (tol.getTolerationSeconds() == null) {
        return Optional.empty();
      }
      long s = Math.max(tol.getTolerationSeconds(), 0);
      seconds = seconds == null ? s : Math.min(seconds, s);
    }
    return Optional.of(seconds == null ? added : added.plusSeconds(seconds));
  }

  /**
   * The pod's eviction: empty unless it is bound and a claim reserved for it is to be evicted; the
   * earliest time, the causes of all its claims.
   */
  public static Optional<Eviction> ofPod(
      Pod pod,
      Function<String, Optional<ResourceClaim>> claimByName,
      Function<ResourceClaim, Optional<Eviction>> claimEviction) {
    if (!Pods.isBound(pod)) {
      return Optional.empty();
    }
    Instant when = null;
    Set<Cause> causes = new LinkedHashSet<>();
    for (String name : claimNames(pod)) {
      Optional<ResourceClaim> claim = claimByName.apply(name);
      if (claim.isEmpty() || !reservedFor(claim.get(), pod)) {
        continue;
      }
      Optional<Eviction> e = claimEviction.apply(claim.get());
      if (e.isEmpty()) {
        continue;
      }
      causes.addAll(e.get().causes());
      if (when == null || e.get().when().isBefore(when)) {
        when = e.get().when();
      }
    }
    if (when == null) {
      return Optional.empty();
    }
    List<Cause> sorted = new ArrayList<>(causes);
    sorted.sort(ORDER);
    return Optional.of(new Eviction(when, List.copyOf(sorted)));
  }

  /**
   * The names of the claims the pod uses, as upstream's {@code resourceclaim.PodClaims}: each
   * entry's claim (a template's from the pod's status) and the extended-resource claim.
   */
  static List<String> claimNames(Pod pod) {
    List<String> names = new ArrayList<>();
    Map<String, String> generated = new HashMap<>();
    if (pod.getStatus() != null && pod.getStatus().getResourceClaimStatuses() != null) {
      for (PodResourceClaimStatus s : pod.getStatus().getResourceClaimStatuses()) {
        if (s.getResourceClaimName() != null) {
          generated.put(s.getName(), s.getResourceClaimName());
        }
      }
    }
    for (PodResourceClaim entry : Pods.claimEntries(pod)) {
      String name =
          entry.getResourceClaimName() != null
              ? entry.getResourceClaimName()
              : generated.get(entry.getName());
      if (name != null) {
        names.add(name);
      }
    }
    if (pod.getStatus() != null
        && pod.getStatus().getExtendedResourceClaimStatus() != null
        && pod.getStatus().getExtendedResourceClaimStatus().getResourceClaimName() != null) {
      names.add(pod.getStatus().getExtendedResourceClaimStatus().getResourceClaimName());
    }
    return names;
  }

  private static boolean reservedFor(ResourceClaim claim, Pod pod) {
    return claim.getStatus().getReservedFor() != null
        && claim.getStatus().getReservedFor().stream()
            .anyMatch(r -> pod.getMetadata().getUid().equals(r.getUid()));
  }
}
