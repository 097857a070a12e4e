package io.kdra.core.testing;

import static io.kdra.core.testing.ClaimKeys.claimKeys;
import static io.kdra.core.testing.ClaimKeys.key;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/** The pod rules: claims allocated together for a pod that can run with them on one node. */
final class PodRules {

  private final CheckedWorld world;
  private final List<ResourceClaim> before;

  PodRules(CheckedWorld world, List<ResourceClaim> before) {
    this.world = world;
    this.before = before;
  }

  /**
   * The pod rules. A claim allocated in the input keeps its allocation. A claim allocated in this
   * run was allocated together with all other claims of some pod that uses it (when any does), and
   * that pod can run: on one node that meets the pod's node name, node selector and required
   * affinity and that the node selector of every one of its claims allows, those allocated in the
   * input or for another pod (a shared claim) included, as kube-scheduler filters nodes.
   */
  void check(List<ResourceClaim> claims, List<Pod> pods, List<String> out) {
    Map<String, AllocationResult> allocation = new HashMap<>();
    for (ResourceClaim c : before) {
      allocation.put(key(c), c.getStatus().getAllocation());
    }
    Set<String> now = new LinkedHashSet<>();
    for (ResourceClaim c : claims) {
      AllocationResult a = c.getStatus() == null ? null : c.getStatus().getAllocation();
      AllocationResult was = allocation.get(key(c));
      if (was != null && !was.equals(a)) {
        out.add(key(c) + ": allocated before the run, but its allocation changed");
      } else if (a != null && was == null) {
        allocation.put(key(c), a);
        now.add(key(c));
      }
    }
    Map<String, List<String>> whyNot = new LinkedHashMap<>();
    for (String k : now) {
      List<String> reasons = new ArrayList<>();
      for (Pod pod : pods) {
        List<String> podClaims = claimKeys(pod);
        if (podClaims.contains(k)) {
          String why = misfit(pod, podClaims, allocation);
          if (why == null) {
            reasons = null;
            break;
          }
          reasons.add(why);
        }
      }
      if (reasons != null && !reasons.isEmpty()) {
        whyNot.put(k, reasons);
      }
    }
    new LinkedHashSet<>(whyNot.values().stream().flatMap(List::stream).toList()).forEach(out::add);
  }

  /** Null when all the pod's claims are allocated and the pod can run with them, else why not. */
  private String misfit(Pod pod, List<String> podClaims, Map<String, AllocationResult> allocation) {
    String name = "pod " + pod.getMetadata().getName() + ": ";
    TreeSet<String> named = new TreeSet<>();
    List<NodeSelector> selectors = new ArrayList<>();
    for (String k : podClaims) {
      AllocationResult a = allocation.get(k);
      if (a == null) {
        return name + "claim " + k + " is not allocated, but others of the pod were";
      }
      String n = NodeRules.nodeName(a.getNodeSelector());
      if (n != null) {
        named.add(n);
      }
      if (a.getNodeSelector() != null) {
        selectors.add(a.getNodeSelector());
      }
    }
    if (named.size() > 1) {
      return name + "claims on different nodes " + named;
    }
    if (named.size() == 1 && !world.nodes.containsKey(named.first())) {
      return name + "node " + named.first() + " does not exist";
    }
    String misfit = null;
    for (Node node : world.sortedNodes().values()) {
      String why = NodeRules.podMisfit(pod, node);
      if (why == null && selectors.stream().allMatch(sel -> NodeRules.selects(sel, node))) {
        return null;
      }
      if (named.size() == 1 && named.first().equals(node.getMetadata().getName())) {
        misfit = why;
      }
    }
    return misfit != null
        ? name + "node " + named.first() + " " + misfit
        : name + "no node meets the pod's node constraints and its claims' node selectors";
  }
}
