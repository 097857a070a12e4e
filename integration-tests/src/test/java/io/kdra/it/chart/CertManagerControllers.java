package io.kdra.it.chart;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.controlplane.ControlPlane;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * cert-manager's controller and CA injector (its certificate controllers, the SelfSigned and CA
 * issuers, the CertificateRequest approver, the injector for webhook configurations), built from
 * cert-manager's Go module by {@code integration-tests/scripts/build-cert-manager.sh}, run out of
 * cluster against the suite's API server with an admin kubeconfig, after its CRDs.
 */
public final class CertManagerControllers implements AutoCloseable {

  static final String VERSION = System.getProperty("kdra.cert-manager.version", "1.21.2");

  /** build-cert-manager.sh's RECIPE. */
  private static final int RECIPE = 1;

  private final Process process;
  private final Thread hook;

  private CertManagerControllers(Process process) {
    this.process = process;
    this.hook = new Thread(process::destroyForcibly, "kill-cert-manager");
    Runtime.getRuntime().addShutdownHook(hook);
  }

  /** Where build-cert-manager.sh put them. */
  public static Path dir() {
    String arch = System.getProperty("os.arch").equals("aarch64") ? "arm64" : "amd64";
    return ControlPlane.cacheDir()
        .resolve("cert-manager")
        .resolve(VERSION + "_r" + RECIPE + "-linux-" + arch);
  }

  public static boolean built() {
    return Files.isExecutable(dir().resolve("kdra-cert-manager"));
  }

  /** Applies the CRDs, waits until they are served, and starts the controllers. */
  public static CertManagerControllers start(KubernetesClient admin, Path kubeconfig, Path log) {
    try (Stream<Path> files = Files.list(dir().resolve("crds"))) {
      for (Path crd : files.sorted().toList()) {
        try (InputStream in = Files.newInputStream(crd)) {
          for (HasMetadata o : admin.load(in).items()) {
            admin.resource(o).forceConflicts().serverSideApply();
          }
        }
      }
      for (String name :
          List.of("certificates", "certificaterequests", "issuers", "clusterissuers")) {
        admin
            .apiextensions()
            .v1()
            .customResourceDefinitions()
            .withName(name + ".cert-manager.io")
            .waitUntilCondition(CertManagerControllers::established, 60, TimeUnit.SECONDS);
      }
      Files.createDirectories(log.getParent());
      Process p =
          new ProcessBuilder(
                  dir().resolve("kdra-cert-manager").toString(),
                  "--kubeconfig",
                  kubeconfig.toString(),
                  "--v=2")
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
              .start();
      return new CertManagerControllers(p);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static boolean established(CustomResourceDefinition c) {
    // a CRD just created has a status without conditions
    return c != null
        && c.getStatus() != null
        && c.getStatus().getConditions() != null
        && c.getStatus().getConditions().stream()
            .anyMatch(x -> x.getType().equals("Established") && x.getStatus().equals("True"));
  }

  boolean alive() {
    return process.isAlive();
  }

  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(15, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException shuttingDown) {
      // the hook runs anyway
    }
  }
}
