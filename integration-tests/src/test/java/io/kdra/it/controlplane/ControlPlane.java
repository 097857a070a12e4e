package io.kdra.it.controlplane;

import io.fabric8.kubeapitest.KubeAPIServer;
import io.fabric8.kubeapitest.KubeAPIServerConfigBuilder;
import io.fabric8.kubeapitest.KubeAPITestException;
import io.fabric8.kubeapitest.cert.CertManager;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.kdra.it.support.OwnerOnly;
import io.kdra.it.support.TestFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * A real kube-apiserver with etcd, started once per test run and shared by all test classes that
 * use this extension; stopped when the run ends, also when a test fails.
 *
 * <p>The binaries come from {@code integration-tests/scripts/build-control-plane.sh}, which builds
 * them from the official Go modules into {@code $KDRA_CACHE_DIR} (default {@code ~/.cache/kdra}) in
 * the directory layout of fabric8 kube-api-test. Nothing is downloaded: a missing binary fails the
 * run with the command that builds it.
 */
public final class ControlPlane implements BeforeAllCallback, ParameterResolver {

  /** The Kubernetes version the integration tests target; the root pom pins it. */
  public static final String VERSION = System.getProperty("kdra.k8s.version", "1.37.2");

  /** kube-api-test's limit for each phase of the start (etcd, kube-apiserver, the namespace). */
  private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(120);

  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(ControlPlane.class);

  @Override
  public void beforeAll(ExtensionContext context) {
    running(context);
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    Class<?> type = parameter.getParameter().getType();
    return type == KubernetesClient.class || type == Running.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == Running.class
        ? running(context)
        : running(context).client();
  }

  public static Running running(ExtensionContext context) {
    return context
        .getRoot()
        .getStore(NAMESPACE)
        .getOrComputeIfAbsent(Running.class, key -> Running.start(), Running.class);
  }

  /**
   * kube-apiserver's flags of {@code version}: the Workload API's ({@link WorkloadApi}) with {@code
   * gates} added to its {@code --feature-gates} (a gate named in both takes {@code gates}' value).
   */
  static Map<String, String> apiServerFlags(String version, Map<String, Boolean> gates) {
    Map<String, String> flags = new LinkedHashMap<>(WorkloadApi.apiServerFlags(version));
    if (gates.isEmpty()) {
      return flags;
    }
    Map<String, String> merged = new LinkedHashMap<>();
    String own = flags.getOrDefault("--feature-gates", "");
    for (String gate : own.isEmpty() ? new String[0] : own.split(",")) {
      String[] kv = gate.split("=", 2);
      merged.put(kv[0], kv[1]);
    }
    new TreeMap<>(gates).forEach((g, on) -> merged.put(g, on.toString()));
    flags.put(
        "--feature-gates",
        merged.entrySet().stream()
            .map(e -> e.getKey() + "=" + e.getValue())
            .collect(Collectors.joining(",")));
    return flags;
  }

  public static Path cacheDir() {
    return io.kdra.it.support.Leftovers.cacheDir();
  }

  /** The kubectl that build-control-plane.sh builds beside kube-apiserver (same version). */
  public static Path kubectl() {
    return cacheDir()
        .resolve("k8s")
        .resolve(VERSION + "-linux-" + Running.arch())
        .resolve("kubectl");
  }

  /**
   * The started control plane; closing the root store stops it.
   *
   * @param dir this control plane's own directory, where kube-api-test writes its keys
   * @param shared the suite's one ({@link ControlPlane}), not a test's own ({@link #startOwn})
   */
  public record Running(
      KubeAPIServer server, KubernetesClient client, Path dir, Path binaries, boolean shared)
      implements ExtensionContext.Store.CloseableResource, AutoCloseable {

    /**
     * The keys and certificates kube-api-test writes into its directory, and the API server's
     * static tokens (kube-scheduler's and kube-controller-manager's).
     */
    public static final List<String> CREDENTIALS =
        List.of(
            CertManager.API_SERVER_KEY_NAME,
            CertManager.API_SERVER_CERT_NAME,
            CertManager.CLIENT_KEY_NAME,
            CertManager.CLIENT_CERT_NAME,
            UpstreamControllers.TOKEN_FILE);

    public static Running start() {
      return start(Map.of(), true);
    }

    /**
     * A control plane of a test's own beside the shared one, its kube-apiserver with these feature
     * {@code gates} over the suite's ({@code --feature-gates}): for a gate that must not be on in
     * the API server every other test class shares. The caller closes it.
     */
    public static Running startOwn(Map<String, Boolean> gates) {
      return start(gates, false);
    }

    private static Running start(Map<String, Boolean> gates, boolean shared) {
      Path cache = cacheDir();
      Path binaries = cache.resolve("k8s").resolve(VERSION + "-linux-" + arch());
      if (!Files.isExecutable(binaries.resolve("kube-apiserver"))) {
        throw new IllegalStateException(
            "kube-apiserver "
                + VERSION
                + " not found in "
                + binaries
                + "; build it with integration-tests/scripts/build-control-plane.sh");
      }
      // only a killed JVM's: the control planes of this one and of live runs stay
      ControlPlaneProcesses.reapLeftovers();
      // real nodes of a killed run point at its gone API server: end them whatever this run tests
      LeftoverReaper.reapAll();
      // kube-api-test writes the API server's and the admin's (system:masters) keys into its
      // directory, readable by all and reused by every run if that were the cache: so a directory
      // of this run's own (0700, in java.io.tmpdir), with the cache's binaries linked in (and
      // the ServiceAccount admission plugin on, see privateDirectory); its keys
      // are made 0600 and it is deleted when the control plane stops
      Path dir = privateDirectory(cache, binaries);
      // the identities kube-scheduler and kube-controller-manager have on a real cluster (there
      // client certificates; kube-api-test's CA signs none but its own), for a full control plane
      Path tokens = UpstreamControllers.writeTokenFile(dir);
      KubeAPIServerConfigBuilder config =
          KubeAPIServerConfigBuilder.anAPIServerConfig()
              .withTestDir(dir.toString())
              .withApiServerVersion(VERSION)
              .withOfflineMode(true)
              .withUpdateKubeConfig(false)
              .withStartupTimeout((int) STARTUP_TIMEOUT.toMillis())
              // loopback only (kube-api-test passes no bind address; etcd:
              // build-control-plane.sh)
              .withApiServerFlag("--bind-address", "127.0.0.1")
              .withApiServerFlag("--token-auth-file", tokens.toString());
      // the Workload API and PodGroup claims (GangSchedulingIT), where the version has them
      apiServerFlags(VERSION, gates).forEach(config::withApiServerFlag);
      KubeAPIServer server = new KubeAPIServer(config.build());
      MidnightWrap.awaitSafeStart(STARTUP_TIMEOUT);
      long started = System.nanoTime();
      try {
        server.start();
      } catch (RuntimeException e) {
        TestFiles.deleteRecursively(dir);
        throw e;
      } finally {
        // also when the start fails half-way: whatever did start must be found next time
        ControlPlaneProcesses.record(binaries, dir);
      }
      for (String name : CREDENTIALS) {
        OwnerOnly.restrict(dir.resolve(name));
      }
      System.out.printf(
          "[control-plane] kube-apiserver %s with etcd up in %d ms%n",
          VERSION, (System.nanoTime() - started) / 1_000_000);
      KubernetesClient client =
          new KubernetesClientBuilder()
              .withConfig(Config.fromKubeconfig(server.getKubeConfigYaml()))
              .build();
      return new Running(server, client, dir, binaries, shared);
    }

    /**
     * The control plane's own directory: kube-api-test finds the binaries under its {@code
     * k8s/<version>-linux-<arch>/}, here links to the cache's, but for kube-apiserver, a script
     * that drops the {@code --disable-admission-plugins ServiceAccount} kube-api-test always
     * passes. A real cluster has that plugin on: it is what gives pods their ServiceAccount token
     * volume, which pods installed by the chart need (and it refuses pods whose ServiceAccount does
     * not exist, as a real cluster does).
     */
    private static Path privateDirectory(Path cache, Path binaries) {
      try {
        Path dir = ControlPlaneProcesses.privateDirectory();
        Path own = dir.resolve("k8s").resolve(binaries.getFileName());
        Files.createDirectories(own);
        try (Stream<Path> files = Files.list(binaries)) {
          for (Path binary : files.toList()) {
            if (!binary.getFileName().toString().equals("kube-apiserver")) {
              Files.createSymbolicLink(own.resolve(binary.getFileName()), binary.toAbsolutePath());
            }
          }
        }
        Path wrapper = own.resolve("kube-apiserver");
        Files.writeString(wrapper, apiServerWrapper(binaries.resolve("kube-apiserver")));
        Files.setPosixFilePermissions(wrapper, PosixFilePermissions.fromString("rwx------"));
        return dir;
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    /** The script in place of kube-apiserver; exec keeps the pid (the reaper records it). */
    static String apiServerWrapper(Path apiServer) {
      return """
          #!/bin/sh
          # kube-api-test's --disable-admission-plugins ServiceAccount is dropped: a real
          # cluster runs that plugin
          drop=0
          for arg in "$@"; do
            shift
            if [ "$drop" = 1 ]; then drop=0; continue; fi
            if [ "$arg" = --disable-admission-plugins ]; then drop=1; continue; fi
            set -- "$@" "$arg"
          done
          exec '%s' "$@"
          """
          .formatted(apiServer.toAbsolutePath());
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
      if (shared) {
        // a kube-apiserver a test started again (ApiServerOutage) is not kube-api-test's to
        // stop; such restarts are of the shared control plane, never of a test's own
        ApiServerOutage.endRestarted();
        // and an etcd started again (EtcdRestart)
        EtcdRestart.endRestarted();
      }
      try {
        server.stop();
      } catch (KubeAPITestException e) {
        // when a process of it exits first (Ctrl-C signals the demo's whole process group, or
        // the reaper's shutdown hook ends it), kube-api-test stops and deletes etcd's directories
        // itself, concurrently: then they are gone already
        if (!(e.getCause() instanceof java.nio.file.NoSuchFileException)) {
          throw e;
        }
      } finally {
        // the links to the cache go, never what they point to (the walk follows no links)
        TestFiles.deleteRecursively(dir);
      }
    }
  }
}
