package io.kdra.it.nodes;

import io.kdra.it.controlplane.ControlPlane;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * What {@code integration-tests/scripts/build-node.sh} built and cached for the real nodes: {@code
 * $KDRA_CACHE_DIR/node/<key>/bin} (kubelet, containerd, its runc shim, ctr, crictl) and {@code
 * images/} (pause and busybox as OCI archives). The key names every pinned version, as the script
 * does; the versions come from the root pom through failsafe's system properties.
 */
public record RealNodeBinaries(Path dir, String k8sVersion, String containerdVersion, Path runc) {

  public static RealNodeBinaries fromCache() {
    String k8s = ControlPlane.VERSION;
    String containerd = System.getProperty("kdra.containerd.version", "2.4.2");
    String crictl = System.getProperty("kdra.crictl.version", "1.37.0");
    String recipe = System.getProperty("kdra.node.recipe", "1");
    String arch =
        switch (System.getProperty("os.arch")) {
          case "amd64", "x86_64" -> "amd64";
          case "aarch64", "arm64" -> "arm64";
          default -> System.getProperty("os.arch");
        };
    Path dir =
        ControlPlane.cacheDir()
            .resolve("node")
            .resolve(
                "kubelet-"
                    + k8s
                    + "_containerd-"
                    + containerd
                    + "_crictl-"
                    + crictl
                    + "_r"
                    + recipe
                    + "-linux-"
                    + arch);
    for (String f :
        List.of(
            "bin/kubelet",
            "bin/containerd",
            "bin/containerd-shim-runc-v2",
            "bin/ctr",
            "bin/crictl",
            "images/pause-oci.tar",
            "images/busybox-oci.tar")) {
      if (!Files.isRegularFile(dir.resolve(f))) {
        throw new IllegalStateException(
            dir.resolve(f)
                + " is missing; build the real node with"
                + " integration-tests/scripts/build-node.sh (the integration-tests build runs it)");
      }
    }
    Path runc =
        List.of("/usr/sbin/runc", "/usr/bin/runc", "/usr/local/sbin/runc", "/usr/local/bin/runc")
            .stream()
            .map(Path::of)
            .filter(Files::isExecutable)
            .findFirst()
            .orElseThrow(
                () ->
                    new IllegalStateException(
                        "runc is not installed; build-node.sh" + " installs Debian's"));
    return new RealNodeBinaries(dir, k8s, containerd, runc);
  }

  Path bin() {
    return dir.resolve("bin");
  }

  Path images() {
    return dir.resolve("images");
  }
}
