package io.kdra.it.demo;

import java.nio.file.Path;

/**
 * {@code bin/demo}'s arguments: {@code [--once] [--cluster | --test-kubelet] [manifest directory]},
 * or {@code [--once] --scale-out}.
 *
 * @param once stop right after the report
 * @param testKubelet test kubelets instead of real nodes
 * @param cluster the chart on a multi-node cluster instead of the services as processes
 * @param scaleOut the scale-out story ({@link ScaleOutScene}) instead of the manifests' pods
 * @param manifests the directory whose manifests are applied (relative to integration-tests/)
 */
record DemoArgs(
    boolean once, boolean testKubelet, boolean cluster, boolean scaleOut, Path manifests) {

  static final String USAGE =
      "usage: bin/demo [--once] [--cluster | --test-kubelet] [manifest directory]\n"
          + "       bin/demo [--once] --scale-out";

  /** The arguments, or an IllegalArgumentException whose message is what to print. */
  static DemoArgs parse(String... args) {
    boolean once = false;
    boolean testKubelet = false;
    boolean cluster = false;
    boolean scaleOut = false;
    Path manifests = null;
    for (String a : args) {
      switch (a) {
        case "--once" -> once = true;
        case "--test-kubelet" -> testKubelet = true;
        case "--cluster" -> cluster = true;
        case "--scale-out" -> scaleOut = true;
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
    if (cluster && scaleOut) {
      throw new IllegalArgumentException(
          "--cluster installs the chart on fixed nodes, --scale-out starts from none: choose one\n"
              + USAGE);
    }
    if (scaleOut && manifests != null) {
      throw new IllegalArgumentException(
          "--scale-out applies no manifests: its Deployment is its own\n" + USAGE);
    }
    return new DemoArgs(
        once, testKubelet, cluster, scaleOut, manifests == null ? Path.of("demo") : manifests);
  }

  /**
   * What stops the demo before it starts: {@code --cluster} not as root (its nodes, pod network and
   * kube-proxy need root); null when it may start.
   */
  String refusal(boolean root) {
    return cluster && !root ? DemoReport.CLUSTER_NEEDS_ROOT : null;
  }
}
