package io.kdra.it.nodes;

import io.kdra.it.support.TestFiles;
import java.nio.file.Path;

/**
 * A JVM that holds a multi-node cluster with every part a user's has (kubelets and containerd, the
 * CNI plugins, kube-proxy, CoreDNS, kube-network-policies) until it is killed: what {@code
 * KilledClusterIT} kills with SIGKILL to prove that the next start leaves nothing behind. Once the
 * cluster is up it writes {@code <dir>/ready} (its bridge) and waits.
 *
 * <p>Usage: {@code MultiNodeClusterMain <directory> <nodes>}
 */
public final class MultiNodeClusterMain {

  private MultiNodeClusterMain() {}

  public static void main(String[] args) throws InterruptedException {
    Path dir = Path.of(args[0]).toAbsolutePath();
    int nodes = Integer.parseInt(args[1]);
    MultiNodeCluster cluster = MultiNodeCluster.start(nodes, dir).withDns().withNetworkPolicies();
    TestFiles.write(dir.resolve("ready"), cluster.network.addresses.bridge() + "\n");
    Thread.currentThread().join(); // until killed
  }
}
