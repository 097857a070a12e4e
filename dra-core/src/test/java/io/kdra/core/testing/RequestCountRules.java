package io.kdra.core.testing;

import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.core.testing.CheckedWorld.Entry;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/** The count rules of a claim's requests: exact counts, {@code All}, one subrequest each. */
final class RequestCountRules {

  private final CheckedWorld world;
  private final DeviceMatcher matcher;

  RequestCountRules(CheckedWorld world, DeviceMatcher matcher) {
    this.world = world;
    this.matcher = matcher;
  }

  /**
   * Each request got devices for one of its (sub)requests only: its count, or for {@code All} every
   * device that matches from the claim's node (or, none named, from one node its selector allows).
   */
  void check(
      ResourceClaim c,
      String claim,
      String node,
      NodeSelector allocation,
      Map<String, List<Entry>> byRequest,
      List<String> out) {
    for (DeviceRequest q : c.getSpec().getDevices().getRequests()) {
      List<String> used =
          byRequest.keySet().stream()
              .filter(n -> n.equals(q.getName()) || n.startsWith(q.getName() + "/"))
              .toList();
      if (used.isEmpty()) {
        out.add(claim + ": request " + q.getName() + " got no devices");
        continue;
      }
      if (used.size() > 1) {
        out.add(
            claim + ": request " + q.getName() + " got devices for several subrequests " + used);
        continue;
      }
      RequestSpec spec = RequestSpec.of(c, used.get(0));
      if (spec == null) {
        continue;
      }
      List<Entry> got = byRequest.get(used.get(0));
      if ("All".equals(spec.mode())) {
        Set<String> have = new HashSet<>();
        got.forEach(e -> have.add(e.id()));
        // Without a node name the allocation was made on some node its selector allows; every
        // device matching from that node belongs to All (devices of per-device node selection
        // too), so one such node must account for exactly these devices.
        List<String> candidates = new ArrayList<>();
        if (node != null) {
          candidates.add(node);
        } else {
          world
              .sortedNodes()
              .forEach(
                  (name, n) -> {
                    if (allocation == null || NodeRules.selects(allocation, n)) {
                      candidates.add(name);
                    }
                  });
        }
        Set<String> want = null;
        for (String n : candidates) {
          Set<String> w = allMatching(spec, n, null);
          if (want == null || w.equals(have)) {
            want = w;
          }
        }
        if (want == null) {
          Set<String> usedPools = new HashSet<>();
          got.forEach(e -> usedPools.add(e.driver() + "/" + e.pool()));
          want = allMatching(spec, null, usedPools);
        }
        if (!have.equals(want)) {
          out.add(
              claim
                  + ": request "
                  + used.get(0)
                  + " (All) got "
                  + new TreeSet<>(have)
                  + " but "
                  + new TreeSet<>(want)
                  + " match");
        }
      } else if (got.size() != spec.count()) {
        out.add(
            claim
                + ": request "
                + used.get(0)
                + " got "
                + got.size()
                + " devices, wants "
                + spec.count());
      }
    }
  }

  /** The devices {@code All} wants from this node, or (node null) from these pools. */
  private Set<String> allMatching(RequestSpec spec, String node, Set<String> pools) {
    Set<String> want = new HashSet<>();
    for (Entry e : world.devices()) {
      boolean inScope =
          node != null
              ? world.reachable(e, node) == null
              : pools.contains(e.driver() + "/" + e.pool());
      if (inScope
          && matcher.matches(spec, e) == null
          && DeviceMatcher.untolerated(e.device(), spec.tolerations()) == null) {
        want.add(e.id());
      }
    }
    return want;
  }
}
