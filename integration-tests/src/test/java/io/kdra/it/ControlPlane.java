package io.kdra.it;

import io.fabric8.kubeapitest.KubeAPIServer;
import io.fabric8.kubeapitest.KubeAPIServerConfigBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * A real kube-apiserver with etcd, started once per test run and shared by all test classes
 * that use this extension; stopped when the run ends, also when a test fails.
 *
 * <p>The binaries come from {@code integration-tests/scripts/build-control-plane.sh}, which builds
 * them from the official Go modules into {@code $KDRA_CACHE_DIR} (default
 * {@code ~/.cache/kdra}) in the directory layout of fabric8 kube-api-test. Nothing is downloaded:
 * a missing binary fails the run with the command that builds it.
 */
public final class ControlPlane implements BeforeAllCallback, ParameterResolver {

  /** The Kubernetes version the integration tests target; the root pom pins it. */
  public static final String VERSION = System.getProperty("kdra.k8s.version", "1.36.3");

  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(ControlPlane.class);

  @Override
  public void beforeAll(ExtensionContext context) {
    running(context);
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == KubernetesClient.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    return running(context).client();
  }

  static Running running(ExtensionContext context) {
    return context.getRoot().getStore(NAMESPACE)
        .getOrComputeIfAbsent(Running.class, key -> Running.start(), Running.class);
  }

  static Path cacheDir() {
    String configured = System.getenv("KDRA_CACHE_DIR");
    if (configured != null && !configured.isBlank()) {
      return Path.of(configured);
    }
    String xdg = System.getenv("XDG_CACHE_HOME");
    Path base = xdg != null && !xdg.isBlank() ? Path.of(xdg)
        : Path.of(System.getProperty("user.home"), ".cache");
    return base.resolve("kdra");
  }

  /** The started control plane; closing the root store stops it. */
  record Running(KubeAPIServer server, KubernetesClient client)
      implements ExtensionContext.Store.CloseableResource, AutoCloseable {

    static Running start() {
      Path dir = cacheDir();
      Path binaries = dir.resolve("k8s").resolve(VERSION + "-linux-" + arch());
      if (!Files.isExecutable(binaries.resolve("kube-apiserver"))) {
        throw new IllegalStateException("kube-apiserver " + VERSION + " not found in " + binaries
            + "; build it with integration-tests/scripts/build-control-plane.sh");
      }
      ControlPlaneProcesses.reapLeftovers();
      // real nodes of a killed run point at its gone API server: end them whatever this run tests
      NodeCgroups.reapLeftovers();
      KubeAPIServer server = new KubeAPIServer(KubeAPIServerConfigBuilder.anAPIServerConfig()
          .withTestDir(dir.toString())
          .withApiServerVersion(VERSION)
          .withOfflineMode(true)
          .withUpdateKubeConfig(false)
          .withStartupTimeout(120_000)
          // loopback only (kube-api-test passes no bind address; etcd: build-control-plane.sh)
          .withApiServerFlag("--bind-address", "127.0.0.1")
          .build());
      long started = System.nanoTime();
      try {
        server.start();
      } finally {
        // also when the start fails half-way: whatever did start must be found next time
        ControlPlaneProcesses.record(binaries);
      }
      System.out.printf("[control-plane] kube-apiserver %s with etcd up in %d ms%n", VERSION,
          (System.nanoTime() - started) / 1_000_000);
      KubernetesClient client = new KubernetesClientBuilder()
          .withConfig(Config.fromKubeconfig(server.getKubeConfigYaml())).build();
      return new Running(server, client);
    }

    private static String arch() {
      String arch = System.getProperty("os.arch");
      return switch (arch) {
        case "amd64", "x86_64" -> "amd64";
        case "aarch64", "arm64" -> "arm64";
        default -> arch;
      };
    }

    @Override
    public void close() {
      client.close();
      server.stop();
    }
  }
}
