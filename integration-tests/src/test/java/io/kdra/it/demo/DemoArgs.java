package io.kdra.it.demo;

import java.nio.file.Path;

/**
 * {@code bin/demo}'s arguments: {@code [--once] [--cluster | --test-kubelet] [manifest directory]}.
 *
 * @param once stop right after the report
 * @param testKubelet test kubelets instead of real nodes
 * @param cluster the chart on a multi-node cluster instead of the services as processes
 * @param manifests the directory whose manifests are applied (relative to integration-tests/)
 */
record DemoArgs(boolean once, boolean testKubelet, boolean cluster, Path manifests) {

  static final String USAGE =
      "usage: bin/demo [--once] [--cluster | --test-kubelet] [manifest directory]";

  /** The arguments, or an IllegalArgumentException whose message is what to print. */
  static DemoArgs parse(String... args) {
    boolean once = false;
    boolean testKubelet = false;
    boolean cluster = false;
    Path manifests = Path.of("demo");
    for (String a : args) {
      switch (a) {
        case "--once" -> once = true;
        case "--test-kubelet" -> testKubelet = true;
        case "--cluster" -> cluster = true;
        default -> {
          if (a.startsWith("-")) {
            throw new IllegalArgumentException(USAGE);
          }
          manifests = Path.of(a);
        }
      }
    }
    if (cluster && testKubelet) {
      throw new IllegalArgumentException(
          "--cluster runs real nodes, --test-kubelet none: choose one\n" + USAGE);
    }
    return new DemoArgs(once, testKubelet, cluster, manifests);
  }

  /**
   * What stops the demo before it starts: {@code --cluster} not as root (its nodes, pod network and
   * kube-proxy need root); null when it may start.
   */
  String refusal(boolean root) {
    return cluster && !root ? DemoReport.CLUSTER_NEEDS_ROOT : null;
  }
}
