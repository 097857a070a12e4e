package io.kdra.it.nodes;

import io.kdra.it.controlplane.ControlPlane;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * What {@code integration-tests/scripts/build-cluster-network.sh} built and cached for the
 * multi-node cluster: {@code $KDRA_CACHE_DIR/network/<key>/cni} (the standard CNI plugins), {@code
 * bin/kube-proxy} (the control plane's version) and {@code images/} (CoreDNS and
 * kube-network-policies as OCI archives). The key names every pinned version, as the script does;
 * the versions come from the root pom through failsafe's system properties.
 */
record ClusterNetworkBinaries(Path dir, String coreDnsVersion, String networkPoliciesVersion) {

  static final List<String> FILES =
      List.of(
          "cni/bridge",
          "cni/host-local",
          "cni/loopback",
          "cni/portmap",
          "bin/kube-proxy",
          "images/coredns-oci.tar",
          "images/kube-network-policies-oci.tar");

  static ClusterNetworkBinaries fromCache() {
    String cni = System.getProperty("kdra.cni-plugins.version", "1.10.0");
    String coreDns = System.getProperty("kdra.coredns.version", "1.15.0");
    String knp = System.getProperty("kdra.kube-network-policies.version", "0.8.0");
    String recipe = System.getProperty("kdra.network.recipe", "1");
    String arch =
        switch (System.getProperty("os.arch")) {
          case "amd64", "x86_64" -> "amd64";
          case "aarch64", "arm64" -> "arm64";
          default -> System.getProperty("os.arch");
        };
    Path dir =
        ControlPlane.cacheDir()
            .resolve("network")
            .resolve(
                "kube-proxy-"
                    + ControlPlane.VERSION
                    + "_cni-"
                    + cni
                    + "_coredns-"
                    + coreDns
                    + "_knp-"
                    + knp
                    + "_r"
                    + recipe
                    + "-linux-"
                    + arch);
    for (String f : FILES) {
      if (!Files.isRegularFile(dir.resolve(f))) {
        throw new IllegalStateException(
            dir.resolve(f)
                + " is missing; build it with integration-tests/scripts/build-cluster-network.sh"
                + " (the integration-tests build runs it)");
      }
    }
    return new ClusterNetworkBinaries(dir, coreDns, knp);
  }

  Path cniPlugins() {
    return dir.resolve("cni");
  }

  Path kubeProxy() {
    return dir.resolve("bin/kube-proxy");
  }

  Path image(String name) {
    return dir.resolve("images").resolve(name + "-oci.tar");
  }

  String coreDnsImage() {
    return "k8s.local/coredns:" + coreDnsVersion;
  }

  String networkPoliciesImage() {
    return "k8s.local/kube-network-policies:" + networkPoliciesVersion;
  }
}
