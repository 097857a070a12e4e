package io.kdra.it.nodes;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The owner a real node's cgroup name carries, which decides whether a later run reaps it. */
class NodeCgroupsTest {

  @Test
  void aNodeOfThisJvmIsOwnedByALiveOwner() {
    NodeCgroups cgroups = NodeCgroups.forNode("rn-a");
    NodeCgroups.Owner owner = NodeCgroups.owner(cgroups.name).orElseThrow();
    assertThat(owner.pid()).isEqualTo(ProcessHandle.current().pid());
    assertThat(owner.node()).isEqualTo("rn-a");
    assertThat(owner.alive()).isTrue();
  }

  @Test
  void aNodeWhoseOwnerStartedAtAnotherInstantIsLeftOver() {
    long self = ProcessHandle.current().pid();
    long started =
        ProcessHandle.current().info().startInstant().orElse(Instant.EPOCH).toEpochMilli();
    // the same pid, reused by a later process: not the owner
    assertThat(
            NodeCgroups.owner("kdra-node." + self + "." + (started - 1000) + ".rn-a")
                .orElseThrow()
                .alive())
        .isFalse();
    // no such process
    assertThat(NodeCgroups.owner("kdra-node.999999999." + started + ".rn-a").orElseThrow().alive())
        .isFalse();
  }

  @Test
  void otherCgroupsAreNeverNodes() {
    for (String name :
        new String[] {
          "kubepods",
          "k8s.io",
          "kdra-node",
          "kdra-node.1.2",
          "kdra-node.x.2.rn-a",
          "kdra-node.1.2.RN_A",
          "system.slice"
        }) {
      assertThat(NodeCgroups.owner(name)).as(name).isEmpty();
    }
  }
}
