package io.kdra.it.services;

import io.fabric8.kubernetes.client.Config;
import io.kdra.it.nodes.RealNode;
import io.kdra.it.registry.LocalRegistry;
import io.kdra.it.support.ServiceProcess;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Assumptions;

/** The four images the build made, and what the tests that run them need before they start. */
public final class BuiltImages {

  public static final List<String> SERVICES =
      List.of("slice-publisher", "device-driver", "claim-controller", "computeclass-bridge");

  private BuiltImages() {}

  /**
   * Skips the calling test class unless it runs as root, every image was built and Debian's
   * docker-registry is installed.
   */
  public static void assumeRunnable() {
    assumeBuilt(SERVICES);
    Assumptions.assumeTrue(
        LocalRegistry.executable() != null, "Debian's docker-registry is not installed: skipped");
  }

  /**
   * Skips the calling test class unless it runs as root and the images of {@code services} were
   * built: for nodes that import them rather than pull them from a registry.
   */
  public static void assumeBuilt(List<String> services) {
    Assumptions.assumeTrue(RealNode.runsAsRoot(), "real nodes need root: skipped");
    for (String service : services) {
      Assumptions.assumeTrue(
          Files.isRegularFile(archive(service)),
          archive(service)
              + " is missing: the build made no images (-DskipTests or -Dkdra.images=false; build"
              + " them with -Dkdra.images=true)");
    }
  }

  /** The OCI archive the build left in {@code <service>/target/container-image/}. */
  public static Path archive(String service) {
    return ServiceProcess.moduleDir(service)
        .resolve("target/container-image/" + service + "-oci.tar");
  }

  /**
   * The name the build gave the service's image ({@code org.opencontainers.image.ref.name} in the
   * archive's index: podman's {@code localhost/kdra/<service>:<tag>}), under which a node's
   * containerd imports it.
   */
  public static String reference(String service) throws IOException {
    Process tar =
        new ProcessBuilder("tar", "-xOf", archive(service).toString(), "index.json").start();
    byte[] index = tar.getInputStream().readAllBytes();
    try {
      if (tar.waitFor() != 0) {
        throw new IOException("no index.json in " + archive(service));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(e);
    }
    return new com.fasterxml.jackson.databind.ObjectMapper()
        .readTree(index)
        .path("manifests")
        .path(0)
        .path("annotations")
        .path("org.opencontainers.image.ref.name")
        .asText();
  }

  /** The chart's appVersion: the images' tag the chart pulls by default. */
  public static String appVersion() throws IOException {
    return Files.readAllLines(ServiceProcess.moduleDir("helm").resolve("kdra/Chart.yaml")).stream()
        .filter(l -> l.startsWith("appVersion:"))
        .map(l -> l.substring(l.indexOf(':') + 1).trim().replace("\"", ""))
        .findFirst()
        .orElseThrow();
  }

  /** The API server's CA (PEM) from the admin kubeconfig: what kube-root-ca.crt holds. */
  public static String caCertificate(Config admin) throws IOException {
    if (admin.getCaCertData() != null) {
      return new String(Base64.getDecoder().decode(admin.getCaCertData()), StandardCharsets.UTF_8);
    }
    return Files.readString(Path.of(admin.getCaCertFile()));
  }
}
