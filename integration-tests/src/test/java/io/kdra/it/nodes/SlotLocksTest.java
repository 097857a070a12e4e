package io.kdra.it.nodes;

import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.it.support.Leftovers;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * A slot's lock (the multi-node cluster's) is the one place where runs beside each other learn that
 * a bridge is taken: it must be the same file for every run of this user, whatever temporary
 * directory a run has ({@code bin/demo} gives its JVM one of its own), or a run takes another's
 * bridge for a killed run's and deletes it.
 */
class SlotLocksTest {

  @Test
  void aSlotsLockIsMachineWideNotInTheRunsTemporaryDirectory() {
    String tmp = System.getProperty("java.io.tmpdir");
    Path own;
    try {
      System.setProperty("java.io.tmpdir", "/a-run-of-its-own");
      own = ClusterNetwork.lockPath(3);
    } finally {
      System.setProperty("java.io.tmpdir", tmp);
    }
    assertThat(own).isEqualTo(ClusterNetwork.lockPath(3));
    assertThat(own.getParent()).isEqualTo(Leftovers.machineWide("cluster-network"));
    assertThat(ClusterNetwork.lockPath(4)).isNotEqualTo(own);
  }
}
