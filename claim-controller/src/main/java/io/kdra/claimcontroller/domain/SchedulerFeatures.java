package io.kdra.claimcontroller.domain;

import io.kdra.core.alloc.FeatureGateFlag;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * kube-scheduler's feature gates that change what this controller's scheduler decides, beyond those
 * of its allocator ({@link io.kdra.core.alloc.AllocatorFeatures}). {@link #defaults()} mirrors
 * Kubernetes 1.37.2. Set them as the cluster's kube-scheduler has them, so that both decide alike.
 *
 * @param topologyAwareWorkloadScheduling {@code TopologyAwareWorkloadScheduling} (KEP 5732, alpha
 *     and off in 1.37): a PodGroup's topology constraint ({@code spec.schedulingConstraints})
 *     places its pods in one domain. Off, the constraint is ignored, as kube-scheduler 1.37.2
 *     ignores it with the gate off (no TopologyPlacementGenerator plugin in its default profile,
 *     and its pod-group cycle takes the algorithm without placements), though the API server keeps
 *     a constraint written while its own gate was on
 */
public record SchedulerFeatures(boolean topologyAwareWorkloadScheduling) {

  /** The upstream name of {@link #topologyAwareWorkloadScheduling}. */
  public static final String TOPOLOGY_AWARE_WORKLOAD_SCHEDULING = "TopologyAwareWorkloadScheduling";

  /** The upstream feature-gate names this record holds, sorted. */
  public static final List<String> GATES = List.of(TOPOLOGY_AWARE_WORKLOAD_SCHEDULING);

  /** Kubernetes 1.37.2's defaults: TopologyAwareWorkloadScheduling (alpha) off. */
  public static SchedulerFeatures defaults() {
    return new SchedulerFeatures(false);
  }

  /**
   * These features with the gates of {@code spec} set, in upstream's {@code --feature-gates} syntax
   * ({@link FeatureGateFlag}).
   *
   * @throws IllegalArgumentException naming the entry for an unknown gate (and those known), a
   *     missing or a non-boolean value
   */
  public SchedulerFeatures withGates(String spec) {
    boolean topologyAware = topologyAwareWorkloadScheduling;
    for (Map.Entry<String, Boolean> gate : FeatureGateFlag.parse(spec).entrySet()) {
      if (!gate.getKey().equals(TOPOLOGY_AWARE_WORKLOAD_SCHEDULING)) {
        throw new IllegalArgumentException(
            "unrecognized feature gate: "
                + gate.getKey()
                + " (known: "
                + String.join(", ", GATES)
                + ")");
      }
      topologyAware = gate.getValue();
    }
    return new SchedulerFeatures(topologyAware);
  }

  /** The upstream feature-gate names of the enabled features, sorted. */
  public List<String> enabledNames() {
    List<String> on = new ArrayList<>();
    if (topologyAwareWorkloadScheduling) {
      on.add(TOPOLOGY_AWARE_WORKLOAD_SCHEDULING);
    }
    return on;
  }
}
