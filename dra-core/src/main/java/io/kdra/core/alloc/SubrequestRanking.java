package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequest;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Scores a pod's allocation on a node by how well it honours {@code firstAvailable} preferences, as
 * the scheduler's prioritized-list scoring (Kubernetes 1.35+) does: every request with alternatives
 * contributes {@code alternatives - index of the chosen subrequest}, so a node where more requests
 * get earlier choices scores higher. Pods without alternatives score 0 everywhere, which makes the
 * first fitting node the answer.
 */
final class SubrequestRanking {

  /** For each claim index: "request/subrequest" to its rank contribution. */
  private final List<Map<String, Integer>> contributions;

  private final long best;

  private SubrequestRanking(List<Map<String, Integer>> contributions, long best) {
    this.contributions = contributions;
    this.best = best;
  }

  static SubrequestRanking of(List<ResourceClaim> claims) {
    long best = 0;
    List<Map<String, Integer>> all = new ArrayList<>();
    for (ResourceClaim claim : claims) {
      Map<String, Integer> perClaim = new HashMap<>();
      List<DeviceRequest> requests =
          claim.getSpec() == null
                  || claim.getSpec().getDevices() == null
                  || claim.getSpec().getDevices().getRequests() == null
              ? List.of()
              : claim.getSpec().getDevices().getRequests();
      for (DeviceRequest request : requests) {
        List<DeviceSubRequest> subs = request.getFirstAvailable();
        if (subs == null || subs.size() < 2) {
          continue;
        }
        for (int i = 0; i < subs.size(); i++) {
          perClaim.put(request.getName() + "/" + subs.get(i).getName(), subs.size() - i);
        }
        best += subs.size();
      }
      all.add(perClaim);
    }
    return new SubrequestRanking(all, best);
  }

  /** The highest possible score: every request with alternatives got its first choice. */
  long best() {
    return best;
  }

  /** The score of one allocation of all the pod's claims (results in claim order). */
  long score(List<AllocationResult> results) {
    long score = 0;
    for (int i = 0; i < results.size(); i++) {
      Map<String, Integer> perClaim = contributions.get(i);
      if (perClaim.isEmpty() || results.get(i) == null) {
        continue;
      }
      Set<String> counted = new HashSet<>();
      for (DeviceRequestAllocationResult r : results.get(i).getDevices().getResults()) {
        Integer contribution = perClaim.get(r.getRequest());
        if (contribution != null && counted.add(r.getRequest())) {
          score += contribution;
        }
      }
    }
    return score;
  }
}
