package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Node;
import io.kdra.core.model.Quantity;
import java.math.RoundingMode;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * kube-scheduler 1.37's VolumeBinding Score with {@code StorageCapacityScoring} (beta, on by
 * default in 1.37) and the default {@code VolumeBindingArgs.shape} (utilisation 0 scores 10,
 * utilisation 100 scores 0, times 10: {@code 100 - utilisation}): for a node where the pod's claims
 * are bound to existing volumes, how much of those volumes' capacity the claims request; else, for
 * the claims provisioned there whose capacity is checked, how much of the chosen
 * CSIStorageCapacity's {@code capacity} they request. Per storage class (requests summed; volume
 * capacities summed, a CSIStorageCapacity's counted once), each class scored, the classes averaged
 * and rounded ({@code volume_binding.go} Score, {@code scorer.go}). Less used scores higher. No
 * normalisation; weight 1. Pure.
 */
final class VolumeBindingScore {

  private static final long MAX_UTILIZATION = 100;

  private VolumeBindingScore() {}

  /** Each node's score, in {@code nodes}' order; null when the pod has no claim to bind. */
  static long[] score(VolumeFilters volumes, List<Node> nodes) {
    if (!volumes.bindsOrProvisions()) {
      return null;
    }
    long[] out = new long[nodes.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = of(volumes.volumesOn(nodes.get(i)));
    }
    return out;
  }

  /** The score of what VolumeBinding decided for one node. */
  static long of(PodVolumes volumes) {
    Map<String, long[]> byClass = new LinkedHashMap<>(); // class -> {requested, capacity}
    if (!volumes.staticBindings().isEmpty()) {
      for (PodVolumes.StaticBinding b : volumes.staticBindings()) {
        // upstream's BindingInfo.StorageClassName: the volume's spec field
        String cls = orEmpty(b.pv().getSpec().getStorageClassName());
        long[] r = byClass.computeIfAbsent(cls, c -> new long[2]);
        r[0] += bytes(VolumeHelpers.storageRequest(b.pvc()));
        r[1] +=
            bytes(
                b.pv().getSpec().getCapacity() == null
                    ? null
                    : b.pv().getSpec().getCapacity().get("storage"));
      }
    } else {
      for (PodVolumes.DynamicProvision p : volumes.dynamicProvisions()) {
        if (p.nodeCapacity() == null) {
          continue;
        }
        long[] r =
            byClass.computeIfAbsent(VolumeHelpers.storageClassName(p.pvc()), c -> new long[2]);
        // set, not added: claims of one class share the one capacity
        r[1] = bytes(p.nodeCapacity().getCapacity());
        r[0] += bytes(VolumeHelpers.storageRequest(p.pvc()));
      }
    }
    if (byClass.isEmpty()) {
      return 0;
    }
    long sum = 0;
    for (long[] r : byClass.values()) {
      sum += classScore(r[0], r[1]);
    }
    return Math.round((double) sum / byClass.size());
  }

  /** The default shape at the class's utilisation; none left or over capacity: fully used. */
  private static long classScore(long requested, long capacity) {
    if (capacity == 0 || requested > capacity) {
      return shape(MAX_UTILIZATION);
    }
    return shape(requested * MAX_UTILIZATION / capacity);
  }

  /** {@code BuildBrokenLinearFunction} of the points (0, 100) and (100, 0). */
  private static long shape(long utilization) {
    if (utilization <= 0) {
      return NodeScoring.MAX_NODE_SCORE;
    }
    if (utilization >= MAX_UTILIZATION) {
      return 0;
    }
    return NodeScoring.MAX_NODE_SCORE - utilization;
  }

  /** Whole bytes, rounded up, as upstream's {@code Quantity.Value}; absent is 0. */
  private static long bytes(io.fabric8.kubernetes.api.model.Quantity q) {
    Quantity v = Quantity.fromApi(q);
    return v == null ? 0 : v.value().setScale(0, RoundingMode.CEILING).longValueExact();
  }

  private static String orEmpty(String s) {
    return s == null ? "" : s;
  }
}
