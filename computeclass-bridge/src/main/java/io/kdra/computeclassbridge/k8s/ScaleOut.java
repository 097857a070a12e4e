package io.kdra.computeclassbridge.k8s;

import io.kdra.computeclassbridge.model.ComputeClass;
import io.kdra.computeclassbridge.scaleout.NodePoolMapper;
import io.kdra.computeclassbridge.scaleout.NodePoolPlan;
import java.util.List;
import java.util.Optional;
import org.jboss.logging.Logger;

/**
 * Scale-out through Karpenter, when it is turned on ({@code
 * kdra.computeclass-bridge.scale-out.enabled}) and the API server serves {@code karpenter.sh/v1}
 * NodePools; otherwise it writes nothing and says why once.
 */
public final class ScaleOut {

  private static final Logger LOG = Logger.getLogger(ScaleOut.class);

  private final Optional<NodePoolMapper> mapper;
  private final NodePools nodePools;
  private volatile boolean saidNotServed;

  /**
   * @param mapper empty when scale-out is off
   */
  public ScaleOut(Optional<NodePoolMapper> mapper, NodePools nodePools) {
    this.mapper = mapper;
    this.nodePools = nodePools;
  }

  /** Applies the NodePools of {@code cc}; priorities without machines come back as conflicts. */
  public ApplyReport apply(ComputeClass cc) {
    if (!active()) {
      return ApplyReport.of(List.of(), List.of());
    }
    NodePoolPlan plan = mapper.get().plan(cc);
    ApplyReport problems =
        ApplyReport.of(
            List.of(), plan.problems().stream().map(p -> "scale-out: " + p.message()).toList());
    return nodePools.apply(cc, plan.nodePools()).plus(problems);
  }

  /** Deletes the NodePools of a ComputeClass that is going. */
  public ApplyReport remove(ComputeClass cc) {
    if (!active()) {
      return ApplyReport.of(List.of(), List.of());
    }
    return nodePools.apply(cc, List.of());
  }

  private boolean active() {
    if (mapper.isEmpty()) {
      return false;
    }
    if (nodePools.served()) {
      return true;
    }
    if (!saidNotServed) {
      saidNotServed = true;
      LOG.warn(
          "kdra.computeclass-bridge.scale-out.enabled is true but the API server does not serve karpenter.sh/v1"
              + " NodePools (is Karpenter installed?): no NodePools are written until it does");
    }
    return false;
  }
}
