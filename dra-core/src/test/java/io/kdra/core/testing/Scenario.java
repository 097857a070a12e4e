package io.kdra.core.testing;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.kdra.core.alloc.AllocatedState;
import io.kdra.core.alloc.AllocationSnapshot;
import io.kdra.core.alloc.Allocator;
import io.kdra.core.alloc.AllocatorFeatures;
import io.kdra.core.alloc.AllocatorOptions;
import io.kdra.core.alloc.ClaimOutcome;
import io.kdra.core.alloc.InMemoryDeviceClassLister;
import io.kdra.core.taint.DeviceTaintRule;
import io.kdra.core.taint.DeviceTaintRules;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * A test world: slices, classes, already-allocated claims and features, from which an {@link
 * Allocator} with the real CEL environment and deterministic share IDs ({@code share-1}, {@code
 * share-2}, ...) is built.
 */
public final class Scenario {

  private final List<ResourceSlice> slices = new ArrayList<>();
  private final List<DeviceClass> classes = new ArrayList<>();
  private final List<ResourceClaim> existing = new ArrayList<>();
  private AllocatorFeatures features = AllocatorFeatures.defaults();
  private long budget = AllocatorOptions.DEFAULT_STEP_BUDGET;
  private final List<DeviceTaintRule> taintRules = new ArrayList<>();

  public static Scenario of(ResourceSlice... slices) {
    Scenario s = new Scenario();
    s.slices.addAll(List.of(slices));
    return s;
  }

  public Scenario withSlices(ResourceSlice... more) {
    slices.addAll(List.of(more));
    return this;
  }

  public Scenario withClasses(DeviceClass... c) {
    classes.addAll(List.of(c));
    return this;
  }

  public Scenario withExisting(ResourceClaim... c) {
    existing.addAll(List.of(c));
    return this;
  }

  public Scenario withFeatures(AllocatorFeatures f) {
    features = f;
    return this;
  }

  /** DeviceTaintRules, applied to the slices as the claim-controller applies them. */
  public Scenario withTaintRules(DeviceTaintRule... rules) {
    taintRules.addAll(List.of(rules));
    return this;
  }

  public Scenario withBudget(long steps) {
    budget = steps;
    return this;
  }

  public Allocator allocator() {
    AtomicInteger ids = new AtomicInteger();
    AllocationSnapshot snap =
        AllocationSnapshot.of(
            DeviceTaintRules.apply(slices, taintRules),
            new InMemoryDeviceClassLister(classes),
            AllocatedState.fromClaims(existing));
    return new Allocator(
        snap,
        AllocatorOptions.defaults(features, () -> "share-" + ids.incrementAndGet())
            .withStepBudget(budget));
  }

  public List<ClaimOutcome> allocate(Node node, ResourceClaim... claims) {
    return allocator().allocate(node, List.of(claims));
  }

  @Override
  public String toString() {
    return slices.size() + " slices";
  }

  /**
   * The outcome in one line per claim: {@code req=driver/pool/device, ...} for allocated claims,
   * {@code !summary} for the others. Tests compare against this.
   */
  public static List<String> brief(List<ClaimOutcome> outcomes) {
    List<String> out = new ArrayList<>();
    for (ClaimOutcome o : outcomes) {
      if (o instanceof ClaimOutcome.Allocated a) {
        out.add(
            a.result().getDevices().getResults().stream()
                .map(Scenario::brief)
                .collect(Collectors.joining(", ")));
      } else {
        out.add("!" + ((ClaimOutcome.NotAllocated) o).explanation().summary());
      }
    }
    return out;
  }

  static String brief(DeviceRequestAllocationResult r) {
    return r.getRequest() + "=" + r.getDriver() + "/" + r.getPool() + "/" + r.getDevice();
  }
}
