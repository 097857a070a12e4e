package io.kdra.it.karpenter;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kdra.it.controlplane.ControlPlaneProcesses;
import io.kdra.it.support.GoPrograms;
import io.kdra.it.support.OwnerOnly;
import io.kdra.it.support.ServiceProcess;
import io.kdra.it.support.TestFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * kdra-karpenter-kwok (integration-tests/karpenter-kwok, built into the kdra cache by {@code
 * integration-tests/scripts/build-karpenter-kwok.sh}) as a process beside the control plane:
 * Karpenter with its KWOK provider, DRA simulation on ({@code --ignore-dra-requests=false}), the
 * instance types given here, each with the template ResourceSlices of {@link KarpenterTemplates},
 * and a file of instance types that have no capacity ({@link #noCapacityFor}).
 */
public final class KarpenterKwok implements AutoCloseable {

  /** The sigs.k8s.io/karpenter version the wrapper is built on (its go.mod). */
  public static final String VERSION = "v1.15.0";

  private static final Duration READY_TIMEOUT = Duration.ofSeconds(120);

  /**
   * A machine Karpenter may launch: its name (the {@code node.kubernetes.io/instance-type} label)
   * and its hourly price (Karpenter launches the cheapest type that fits, and consolidation
   * replaces a node by a cheaper one).
   */
  public record InstanceType(String name, double price) {}

  private final Process process;
  private final Path dir;
  private final Path log;

  private final Thread hook;

  private KarpenterKwok(Process process, Path dir, Path log) {
    this.process = process;
    this.dir = dir;
    this.log = log;
    // a test JVM ended early (Ctrl-C, a killed Maven) ends Karpenter too
    this.hook = new Thread(process::destroyForcibly, "karpenter-reaper");
    Runtime.getRuntime().addShutdownHook(hook);
  }

  /** The cached binary this checkout's sources build. */
  public static Path binary() {
    return GoPrograms.cached("karpenter-kwok", "karpenter-kwok", VERSION, "kdra-karpenter-kwok");
  }

  /**
   * Karpenter's CRDs (NodePool, NodeClaim, NodeOverlay, CapacityBuffer) and the KWOK provider's
   * KWOKNodeClass, from the karpenter module, which the build script copies beside the binary.
   */
  public static void installCrds(KubernetesClient client) {
    Path crds = binary().resolveSibling("crds");
    if (!Files.isDirectory(crds)) {
      throw new IllegalStateException(
          crds + " not found; build it with integration-tests/scripts/build-karpenter-kwok.sh");
    }
    try (Stream<Path> files = Files.list(crds)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
        CustomResourceDefinition crd =
            Serialization.unmarshal(Files.readString(f), CustomResourceDefinition.class);
        client.resource(crd).forceConflicts().serverSideApply();
        client
            .apiextensions()
            .v1()
            .customResourceDefinitions()
            .withName(crd.getMetadata().getName())
            .waitUntilCondition(
                c ->
                    c != null
                        && c.getStatus() != null
                        && c.getStatus().getConditions() != null
                        && c.getStatus().getConditions().stream()
                            .anyMatch(
                                x ->
                                    x.getType().equals("Established")
                                        && x.getStatus().equals("True")),
                60,
                TimeUnit.SECONDS);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Removes the CRDs {@link #installCrds} installed (and so every object of theirs). */
  public static void uninstallCrds(KubernetesClient client) {
    Path crds = binary().resolveSibling("crds");
    if (!Files.isDirectory(crds)) {
      return;
    }
    try (Stream<Path> files = Files.list(crds)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".yaml")).toList()) {
        HasMetadata crd =
            Serialization.unmarshal(Files.readString(f), CustomResourceDefinition.class);
        client.resource(crd).delete();
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Starts it against the API server of {@code kubeconfig} (it needs to write Nodes, NodeClaims and
   * to read everything it simulates: an admin's) and returns once it is ready.
   *
   * @param templatesJson {@link KarpenterTemplates#json} for {@code types}
   * @param logDir where {@code karpenter.log} goes
   */
  public static KarpenterKwok start(
      String kubeconfig, List<InstanceType> types, String templatesJson, Path logDir) {
    Path binary = binary();
    if (!Files.isExecutable(binary)) {
      throw new IllegalStateException(
          binary + " not found; build it with integration-tests/scripts/build-karpenter-kwok.sh");
    }
    try {
      Path dir = ControlPlaneProcesses.privateDirectory();
      Files.createDirectories(logDir);
      Path kubeconfigFile = dir.resolve("kubeconfig");
      OwnerOnly.write(kubeconfigFile, kubeconfig);
      Path instanceTypes = dir.resolve("instance-types.json");
      TestFiles.write(instanceTypes, instanceTypesJson(types));
      Path templates = dir.resolve("templates.json");
      TestFiles.write(templates, templatesJson);
      Path unavailable = dir.resolve("unavailable");
      TestFiles.write(unavailable, "");
      int health = ServiceProcess.freePort();
      List<String> command =
          List.of(
              binary.toString(),
              "--ignore-dra-requests=false",
              "--disable-leader-election=true",
              "--metrics-port=" + ServiceProcess.freePort(),
              "--health-probe-port=" + health,
              // short batches: the test waits for states, a shorter window only makes them sooner
              "--batch-max-duration=2s",
              "--batch-idle-duration=500ms",
              "--log-level=debug");
      ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
      Path log = logDir.resolve("karpenter.log");
      pb.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
      Map<String, String> env = pb.environment();
      env.put("KUBECONFIG", kubeconfigFile.toString());
      env.put("INSTANCE_TYPES_FILE_PATH", instanceTypes.toString());
      env.put("KDRA_TEMPLATES_FILE", templates.toString());
      env.put("KDRA_UNAVAILABLE_FILE", unavailable.toString());
      Process p = pb.start();
      ControlPlaneProcesses.record(p, List.of(dir));
      KarpenterKwok karpenter = new KarpenterKwok(p, dir, log);
      try {
        karpenter.awaitReady(health);
      } catch (RuntimeException e) {
        karpenter.close();
        throw e;
      }
      return karpenter;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * From now on {@code instanceType} has no capacity: Karpenter sees no available offering of it,
   * and a launch of it fails with an insufficient-capacity error (the wrapper reads the file at
   * every call).
   */
  public void noCapacityFor(String instanceType) {
    TestFiles.write(dir.resolve("unavailable"), instanceType + "\n");
  }

  /** The log file. */
  public Path log() {
    return log;
  }

  /**
   * The KWOK provider's instance-types file ({@code INSTANCE_TYPES_FILE_PATH}): one on-demand
   * offering each, in one zone, with room for 110 pods.
   */
  static String instanceTypesJson(List<InstanceType> types) {
    List<Map<String, Object>> out = new ArrayList<>();
    for (InstanceType t : types) {
      Map<String, Object> offering = new LinkedHashMap<>();
      offering.put("Price", t.price());
      offering.put("Available", true);
      offering.put(
          "Requirements",
          List.of(
              requirement("karpenter.sh/capacity-type", "on-demand"),
              requirement("topology.kubernetes.io/zone", "test-zone-a")));
      Map<String, Object> it = new LinkedHashMap<>();
      it.put("name", t.name());
      it.put("offerings", List.of(offering));
      it.put("architecture", "amd64");
      it.put("operatingSystems", List.of("linux"));
      it.put("resources", Map.of("cpu", "8", "memory", "32Gi", "pods", "110"));
      out.add(it);
    }
    return Serialization.asJson(out);
  }

  private static Map<String, Object> requirement(String key, String value) {
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("key", key);
    r.put("operator", "In");
    r.put("values", List.of(value));
    return r;
  }

  private void awaitReady(int port) {
    HttpClient http = HttpClient.newHttpClient();
    long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
    String last = "no answer";
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException(
            "karpenter exited with " + process.exitValue() + "; log " + log + ":\n" + tail());
      }
      try {
        HttpResponse<String> r =
            http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/readyz"))
                    .timeout(Duration.ofSeconds(3))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() == 200) {
          return;
        }
        last = r.statusCode() + " " + r.body();
      } catch (IOException e) {
        last = e.toString();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
      ServiceProcess.sleep(250);
    }
    throw new IllegalStateException(
        "karpenter not ready after "
            + READY_TIMEOUT
            + ": "
            + last
            + "\nlog "
            + log
            + ":\n"
            + tail());
  }

  private String tail() {
    try {
      List<String> all = Files.readAllLines(log);
      return String.join("\n", all.subList(Math.max(0, all.size() - 40), all.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  /** SIGTERM, SIGKILL after 10 s; then its directory goes. Idempotent. */
  @Override
  public void close() {
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException e) {
      // the JVM is shutting down: the hook runs anyway
    }
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    TestFiles.deleteRecursively(dir);
  }
}
