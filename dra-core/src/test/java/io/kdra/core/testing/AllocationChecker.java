package io.kdra.core.testing;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import java.util.ArrayList;
import java.util.List;

/**
 * Checks that allocation results are valid for a world, independently of how the allocator
 * searched: every device exists in the newest generation of a complete pool and is reachable from
 * the claim's node, is free (not held by a claim allocated before, not taken twice in this run
 * unless it allows multiple allocations), matches its class's and request's CEL selectors, is not
 * tainted against the request's tolerations; each request got its count (for {@code All}: every
 * matching device), one subrequest of a {@code firstAvailable} list; constraints hold; no shared
 * counter and no consumable capacity is exceeded; the claims of one pod share one node (the pod
 * rules: {@link PodRules}). adminAccess: a result has it exactly when its request asks for it, and
 * such a device may be in use and does not count as allocated. A device's binding conditions are
 * copied into its result, and a device that binds to a node (or is reachable from some nodes only)
 * restricts the allocation's node selector. A pod's node meets the pod's node name, node selector
 * and required node affinity.
 *
 * <p>One class per rule family: {@link ClaimRules} (result by result), {@link DeviceMatcher}
 * (selectors, taints), {@link DeviceUsage} (held, shared, counters), {@link RequestCountRules},
 * {@link ConstraintRules}, {@link PodRules}, {@link NodeRules}; each adds a violation that names
 * the claim, the device and the rule, in a fixed order.
 *
 * <p>Pure: reads only its inputs. Reimplements the rules on purpose rather than calling the
 * allocator, so that the allocator's own bugs cannot hide here. CEL is evaluated with dra-core's
 * environment, which its own tests pin to upstream's.
 */
public final class AllocationChecker {

  private final CheckedWorld world;
  private final List<ResourceClaim> before;
  private final ClaimRules claimRules;
  private final PodRules podRules;

  public AllocationChecker(
      List<DeviceClass> classes,
      List<ResourceSlice> slices,
      List<Node> nodes,
      List<ResourceClaim> allocatedBefore) {
    this.world = new CheckedWorld(classes, slices, nodes);
    this.before = List.copyOf(allocatedBefore);
    this.claimRules = new ClaimRules(world, new DeviceMatcher(world));
    this.podRules = new PodRules(world, before);
  }

  /** A checker for a generated world (its claims with an allocation are the earlier ones). */
  public static AllocationChecker of(GeneratedScenario s) {
    return new AllocationChecker(s.classes(), s.slices(), s.nodes(), s.allocatedClaims());
  }

  /**
   * All violations in these claims' allocations (claims without one are ignored), each naming the
   * claim and the rule; empty when every allocation is valid. {@code pods} may be empty.
   */
  public List<String> check(List<ResourceClaim> claims, List<Pod> pods) {
    List<String> out = new ArrayList<>();
    DeviceUsage usage = new DeviceUsage();
    usage.allocatedBefore(before, world);
    for (ResourceClaim c : claims) {
      if (c.getStatus() == null || c.getStatus().getAllocation() == null) {
        continue;
      }
      String node = NodeRules.nodeName(c.getStatus().getAllocation().getNodeSelector());
      claimRules.check(c, node, usage, out);
    }
    usage.checkLimits(world, out);
    podRules.check(claims, pods, out);
    return out;
  }
}
