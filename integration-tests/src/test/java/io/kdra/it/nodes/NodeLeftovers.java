package io.kdra.it.nodes;

import io.kdra.it.controlplane.LeftoverReaper;

/** A killed run's real nodes (their cgroups and processes) and its multi-node cluster's bridges. */
public final class NodeLeftovers implements LeftoverReaper {

  @Override
  public void reapLeftovers() {
    NodeCgroups.reapLeftovers();
    if (ClusterNetwork.available()) {
      ClusterNetwork.reapLeftovers();
    }
  }
}
