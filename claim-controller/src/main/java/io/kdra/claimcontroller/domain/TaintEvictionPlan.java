package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.kdra.core.model.DeviceId;
import io.kdra.core.taint.DeviceTaintRule;
import io.kdra.core.taint.DeviceTaintRuleSpec;
import io.kdra.core.taint.DeviceTaintRules;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiFunction;

/**
 * One pass of device-taint eviction over what the informers hold: the pods to evict now, when the
 * next one is due, and each rule's counts for its status. Pure.
 *
 * @param due pods whose eviction time has come, with why
 * @param next the earliest eviction still ahead, if any
 * @param counts per rule name, what its {@code EvictionInProgress} condition reports
 */
public record TaintEvictionPlan(
    List<PodEviction> due, Optional<Instant> next, Map<String, TaintRuleStatus.Counts> counts) {

  /** A pod to evict, as {@code namespace/name} with its UID (for the delete's precondition). */
  public record PodEviction(
      String namespace, String name, String uid, TaintEviction.Eviction why) {}

  /**
   * @param claim the claim {@code namespace, name}, as known
   * @param evictedByRule pods this controller evicted per rule name since it started
   */
  public static TaintEvictionPlan of(
      Collection<Pod> pods,
      BiFunction<String, String, Optional<ResourceClaim>> claim,
      Collection<ResourceClaim> claims,
      Collection<ResourceSlice> slices,
      Collection<DeviceTaintRule> rules,
      Map<String, Long> evictedByRule,
      Instant now) {
    Map<DeviceId, List<DeviceTaint>> sliceTaints = TaintEviction.sliceTaints(slices);
    if (!anyEvicting(sliceTaints, rules)) {
      // the usual case: nothing to evict or simulate, so no pod is looked at
      Map<String, TaintRuleStatus.Counts> counts = new HashMap<>();
      for (DeviceTaintRule rule : rules) {
        counts.put(
            rule.name(),
            new TaintRuleStatus.Counts(0, 0, evictedByRule.getOrDefault(rule.name(), 0L), 0, 0));
      }
      return new TaintEvictionPlan(List.of(), Optional.empty(), Map.copyOf(counts));
    }
    Map<Pod, TaintEviction.Eviction> evictions = evictions(pods, claim, sliceTaints, rules);
    List<PodEviction> due = new ArrayList<>();
    Instant next = null;
    for (var e : evictions.entrySet()) {
      Pod pod = e.getKey();
      if (!e.getValue().when().isAfter(now)) {
        due.add(
            new PodEviction(
                pod.getMetadata().getNamespace(),
                pod.getMetadata().getName(),
                pod.getMetadata().getUid(),
                e.getValue()));
      } else if (next == null || e.getValue().when().isBefore(next)) {
        next = e.getValue().when();
      }
    }
    due.sort(
        java.util.Comparator.comparing(PodEviction::namespace).thenComparing(PodEviction::name));
    Map<String, TaintRuleStatus.Counts> counts = new HashMap<>();
    for (DeviceTaintRule rule : rules) {
      if (rule.getSpec() == null || rule.getSpec().getTaint() == null) {
        continue;
      }
      String name = rule.name();
      long evicted = evictedByRule.getOrDefault(name, 0L);
      switch (String.valueOf(rule.getSpec().getTaint().getEffect())) {
        case "NoExecute" -> counts.put(name, pending(name, evictions, evicted, 0, 0));
        case "None" -> {
          // what NoExecute would do: the rule's taint with that effect, beside the others
          List<DeviceTaintRule> simulated = new ArrayList<>(rules);
          simulated.remove(rule);
          simulated.add(asNoExecute(rule));
          counts.put(
              name,
              pending(
                  name,
                  evictions(pods, claim, sliceTaints, simulated),
                  evicted,
                  publishedDevices(rule, slices),
                  allocatedDevices(rule, claims)));
        }
        default -> counts.put(name, new TaintRuleStatus.Counts(0, 0, evicted, 0, 0));
      }
    }
    return new TaintEvictionPlan(List.copyOf(due), Optional.ofNullable(next), Map.copyOf(counts));
  }

  private static boolean anyEvicting(
      Map<DeviceId, List<DeviceTaint>> sliceTaints, Collection<DeviceTaintRule> rules) {
    for (DeviceTaintRule r : rules) {
      String effect = r.getSpec() == null ? null : r.getSpec().getTaint().getEffect();
      if ("NoExecute".equals(effect) || "None".equals(effect)) {
        return true;
      }
    }
    return sliceTaints.values().stream()
        .flatMap(List::stream)
        .anyMatch(t -> "NoExecute".equals(t.getEffect()));
  }

  private static Map<Pod, TaintEviction.Eviction> evictions(
      Collection<Pod> pods,
      BiFunction<String, String, Optional<ResourceClaim>> claim,
      Map<DeviceId, List<DeviceTaint>> sliceTaints,
      Collection<DeviceTaintRule> rules) {
    // identity maps: the informers' objects, and a model object's hashCode walks all of it
    Map<ResourceClaim, Optional<TaintEviction.Eviction>> perClaim = new IdentityHashMap<>();
    Map<Pod, TaintEviction.Eviction> out = new IdentityHashMap<>();
    for (Pod pod : pods) {
      if (pod.getMetadata().getDeletionTimestamp() != null || Pods.isTerminal(pod)) {
        continue;
      }
      TaintEviction.ofPod(
              pod,
              n -> claim.apply(pod.getMetadata().getNamespace(), n),
              c ->
                  perClaim.computeIfAbsent(
                      c, k -> TaintEviction.ofClaim(k, sliceTaints::get, rules)))
          .ifPresent(e -> out.put(pod, e));
    }
    return out;
  }

  private static TaintRuleStatus.Counts pending(
      String rule,
      Map<Pod, TaintEviction.Eviction> evictions,
      long evicted,
      long published,
      long allocated) {
    long pods = 0;
    Set<String> namespaces = new HashSet<>();
    for (var e : evictions.entrySet()) {
      if (e.getValue().causedBy(rule)) {
        pods++;
        namespaces.add(e.getKey().getMetadata().getNamespace());
      }
    }
    return new TaintRuleStatus.Counts(pods, namespaces.size(), evicted, published, allocated);
  }

  private static DeviceTaintRule asNoExecute(DeviceTaintRule rule) {
    DeviceTaint taint = rule.getSpec().getTaint().toBuilder().withEffect("NoExecute").build();
    return new DeviceTaintRule(
        rule.getMetadata(), new DeviceTaintRuleSpec(rule.getSpec().getDeviceSelector(), taint));
  }

  private static long publishedDevices(DeviceTaintRule rule, Collection<ResourceSlice> slices) {
    Map<String, Long> newest = new HashMap<>();
    for (ResourceSlice s : slices) {
      if (s.getSpec() != null && s.getSpec().getPool() != null) {
        newest.merge(pool(s), generation(s), Math::max);
      }
    }
    long n = 0;
    for (ResourceSlice s : slices) {
      if (s.getSpec() == null
          || s.getSpec().getPool() == null
          || s.getSpec().getDevices() == null
          || generation(s) != newest.get(pool(s))) {
        continue;
      }
      for (var d : s.getSpec().getDevices()) {
        if (DeviceTaintRules.matches(
            rule, s.getSpec().getDriver(), s.getSpec().getPool().getName(), d.getName())) {
          n++;
        }
      }
    }
    return n;
  }

  private static String pool(ResourceSlice s) {
    return s.getSpec().getDriver() + "/" + s.getSpec().getPool().getName();
  }

  private static long generation(ResourceSlice s) {
    Long g = s.getSpec().getPool().getGeneration();
    return g == null ? 0 : g;
  }

  private static long allocatedDevices(DeviceTaintRule rule, Collection<ResourceClaim> claims) {
    long n = 0;
    for (ResourceClaim c : claims) {
      if (c.getStatus() == null
          || c.getStatus().getAllocation() == null
          || c.getStatus().getAllocation().getDevices() == null
          || c.getStatus().getAllocation().getDevices().getResults() == null) {
        continue;
      }
      for (DeviceRequestAllocationResult r :
          c.getStatus().getAllocation().getDevices().getResults()) {
        if (DeviceTaintRules.matches(rule, r.getDriver(), r.getPool(), r.getDevice())) {
          n++;
        }
      }
    }
    return n;
  }
}
