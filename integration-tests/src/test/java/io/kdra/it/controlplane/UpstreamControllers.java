package io.kdra.it.controlplane;

import io.fabric8.kubernetes.client.Config;
import io.kdra.it.support.Leftovers;
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
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;

/**
 * kube-scheduler and kube-controller-manager from the control plane's cache, against the run's API
 * server, for one stack ({@code KdraStack.fullControlPlane()}): what makes Deployments,
 * ReplicaSets, garbage collection, the node lifecycle controller, ServiceAccounts and {@code
 * kube-root-ca.crt}, upstream's resourceclaim controller and upstream's scheduling exist as on a
 * real cluster.
 *
 * <p>Each runs as the user it is on a real cluster ({@code system:kube-scheduler}, {@code
 * system:kube-controller-manager}: the API server's bootstrap RBAC binds their roles), from a
 * static token the API server knows ({@link #writeTokenFile}); kube-controller-manager gives each
 * controller its own ServiceAccount's token ({@code --use-service-account-credentials}), as kubeadm
 * sets it up. One replica each, so no leader election (a stack's successor would otherwise wait for
 * its predecessor's Lease to expire). Their logs go to the stack's log directory, their kubeconfigs
 * and serving certificates to a private directory that goes with them; a killed run's processes and
 * directory are ended by the next run ({@link ControlPlaneProcesses}).
 */
public final class UpstreamControllers implements AutoCloseable {

  public static final String SCHEDULER = "kube-scheduler";
  public static final String CONTROLLER_MANAGER = "kube-controller-manager";

  /** The API server's static tokens, in the control plane's directory. */
  static final String TOKEN_FILE = "static-tokens.csv";

  private static final Duration READY_TIMEOUT = Duration.ofSeconds(120);

  /** The user each runs as, by binary (the names of their bootstrap ClusterRoleBindings). */
  private static final Map<String, String> USERS =
      Map.of(
          SCHEDULER, "system:kube-scheduler",
          CONTROLLER_MANAGER, "system:kube-controller-manager");

  private static final HttpClient HTTPS = insecureLoopbackClient();

  private final Map<String, Process> processes;
  private final Map<String, Path> logs;
  private final Path dir;
  private final Thread hook;

  private UpstreamControllers(Map<String, Process> processes, Map<String, Path> logs, Path dir) {
    this.processes = processes;
    this.logs = logs;
    this.dir = dir;
    this.hook =
        new Thread(
            () -> processes.values().forEach(Process::destroyForcibly),
            "upstream-controllers-reaper");
    Runtime.getRuntime().addShutdownHook(hook);
  }

  /**
   * The API server's {@code --token-auth-file} in the control plane's directory {@code dir}: a
   * random token for each of the two users (0600).
   */
  static Path writeTokenFile(Path dir) {
    SecureRandom random = new SecureRandom();
    StringBuilder csv = new StringBuilder();
    USERS.forEach(
        (binary, user) -> {
          byte[] token = new byte[24];
          random.nextBytes(token);
          csv.append(HexFormat.of().formatHex(token))
              .append(',')
              .append(user)
              .append(',')
              .append(user)
              .append('\n');
        });
    Path file = dir.resolve(TOKEN_FILE);
    OwnerOnly.write(file, csv.toString());
    return file;
  }

  private static String token(Path controlPlaneDir, String user) {
    try {
      return Files.readAllLines(controlPlaneDir.resolve(TOKEN_FILE)).stream()
          .map(l -> l.split(","))
          .filter(f -> f.length >= 2 && f[1].equals(user))
          .map(f -> f[0])
          .findFirst()
          .orElseThrow(() -> new IllegalStateException("no token for " + user));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Starts both and returns once both answer {@code /healthz}.
   *
   * @param caFile the API server's CA, also kube-controller-manager's {@code --root-ca-file} (what
   *     it publishes as {@code kube-root-ca.crt})
   */
  public static UpstreamControllers start(
      ControlPlane.Running cp, Config admin, Path caFile, Path logDir) {
    return start(cp, admin, caFile, logDir, Map.of());
  }

  /**
   * As {@link #start(ControlPlane.Running, Config, Path, Path)}, with extra flags by binary ({@code
   * --name=value} each); one named as a default flag replaces that default (a benchmark raises
   * {@code --kube-api-qps} or narrows {@code --controllers}).
   */
  public static UpstreamControllers start(
      ControlPlane.Running cp,
      Config admin,
      Path caFile,
      Path logDir,
      Map<String, List<String>> extraFlags) {
    return start(cp.binaries(), cp.dir(), admin, caFile, logDir, extraFlags);
  }

  /**
   * As {@link #start(ControlPlane.Running, Config, Path, Path, Map)}, for any API server whose
   * directory {@code controlPlaneDir} holds the token file ({@link #writeTokenFile}) and the
   * ServiceAccount signing key ({@code apiserver.key}): the multi-node cluster's ({@link
   * ClusterApiServer}).
   */
  public static UpstreamControllers start(
      Path binaries,
      Path controlPlaneDir,
      Config admin,
      Path caFile,
      Path logDir,
      Map<String, List<String>> extraFlags) {
    for (String binary : USERS.keySet()) {
      if (!Files.isExecutable(binaries.resolve(binary))) {
        throw new IllegalStateException(
            binary
                + " not found in "
                + binaries
                + "; build it with integration-tests/scripts/build-control-plane.sh");
      }
    }
    long started = System.nanoTime();
    Path dir;
    try {
      dir = ControlPlaneProcesses.privateDirectory();
      Files.createDirectories(logDir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Map<String, Process> processes = new LinkedHashMap<>();
    Map<String, Path> logs = new LinkedHashMap<>();
    Map<String, Integer> ports = new LinkedHashMap<>();
    UpstreamControllers controllers = new UpstreamControllers(processes, logs, dir);
    try {
      for (String binary : List.of(CONTROLLER_MANAGER, SCHEDULER)) {
        String user = USERS.get(binary);
        Path kubeconfig = dir.resolve(binary + ".kubeconfig");
        OwnerOnly.write(
            kubeconfig, Kubeconfigs.kubeconfig(admin, caFile, user, token(controlPlaneDir, user)));
        int port = ServiceProcess.freePort();
        List<String> command =
            new ArrayList<>(
                List.of(
                    binaries.resolve(binary).toString(),
                    "--kubeconfig=" + kubeconfig,
                    "--authentication-kubeconfig=" + kubeconfig,
                    "--authorization-kubeconfig=" + kubeconfig,
                    // kube-api-test's API server has no front proxy (no request-header CA): without
                    // this, both log every few seconds that the CA bundle's content is missing
                    "--authentication-skip-lookup=true",
                    "--bind-address=127.0.0.1",
                    "--secure-port=" + port,
                    "--cert-dir=" + dir.resolve(binary + "-certs"),
                    "--leader-elect=false",
                    "--v=2"));
        if (binary.equals(CONTROLLER_MANAGER)) {
          command.addAll(
              List.of(
                  // every controller enabled by default, resourceclaim-controller, the garbage
                  // collector and node lifecycle among them
                  "--controllers=*",
                  "--use-service-account-credentials=true",
                  // the key the API server signs and checks ServiceAccount tokens with
                  "--service-account-private-key-file="
                      + controlPlaneDir.resolve(
                          io.fabric8.kubeapitest.cert.CertManager.API_SERVER_KEY_NAME),
                  "--root-ca-file=" + caFile.toAbsolutePath(),
                  "--cluster-name=kdra-it"));
        }
        command = withFlags(command, extraFlags.getOrDefault(binary, List.of()));
        Path log = logDir.resolve(binary + ".log");
        Process p =
            new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
        processes.put(binary, p);
        logs.put(binary, log);
        ports.put(binary, port);
        Leftovers.entry(p.toHandle(), List.of(dir))
            .ifPresent(e -> ControlPlaneProcesses.leftovers().record(List.of(e)));
      }
      for (String binary : processes.keySet()) {
        controllers.awaitHealthy(binary, ports.get(binary));
      }
    } catch (IOException | RuntimeException e) {
      controllers.close();
      throw e instanceof IOException io ? new UncheckedIOException(io) : (RuntimeException) e;
    }
    System.out.printf(
        "[control-plane] kube-controller-manager and kube-scheduler up in %d ms;" + " logs in %s%n",
        (System.nanoTime() - started) / 1_000_000, logDir);
    return controllers;
  }

  /** {@code command} with {@code extra} appended, each replacing a flag of the same name. */
  public static List<String> withFlags(List<String> command, List<String> extra) {
    java.util.Set<String> replaced = new java.util.HashSet<>();
    for (String flag : extra) {
      replaced.add(flagName(flag));
    }
    List<String> merged = new ArrayList<>();
    merged.add(command.get(0));
    for (String arg : command.subList(1, command.size())) {
      if (!replaced.contains(flagName(arg))) {
        merged.add(arg);
      }
    }
    merged.addAll(extra);
    return merged;
  }

  private static String flagName(String flag) {
    int eq = flag.indexOf('=');
    return eq < 0 ? flag : flag.substring(0, eq);
  }

  /** The process id of {@code binary} (a benchmark reads its CPU time and memory). */
  public long pid(String binary) {
    return processes.get(binary).pid();
  }

  private void awaitHealthy(String binary, int port) {
    Process p = processes.get(binary);
    long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
    String last = "no answer";
    while (System.nanoTime() < deadline) {
      if (!p.isAlive()) {
        throw new IllegalStateException(
            binary
                + " exited with "
                + p.exitValue()
                + "; log "
                + logs.get(binary)
                + ":\n"
                + tail(binary, 40));
      }
      try {
        HttpResponse<String> r =
            HTTPS.send(
                HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + port + "/healthz"))
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
        binary
            + " not healthy after "
            + READY_TIMEOUT
            + ": "
            + last
            + "\nlog "
            + logs.get(binary)
            + ":\n"
            + tail(binary, 40));
  }

  /** The log files, by binary. */
  public Map<String, Path> logs() {
    return Map.copyOf(logs);
  }

  /** Whether {@code binary} still runs (a dump says so). */
  public boolean alive(String binary) {
    Process p = processes.get(binary);
    return p != null && p.isAlive();
  }

  private String tail(String binary, int lines) {
    try {
      List<String> all = Files.readAllLines(logs.get(binary));
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  /** SIGTERM, SIGKILL after 10 s; then their directory goes. Idempotent. */
  @Override
  public void close() {
    processes.values().forEach(Process::destroy);
    for (Process p : processes.values()) {
      try {
        if (!p.waitFor(10, TimeUnit.SECONDS)) {
          p.destroyForcibly();
          p.waitFor(5, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        p.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException shuttingDown) {
      // the hook runs anyway
    }
    TestFiles.deleteRecursively(dir);
  }

  /**
   * Their serving certificates are self-signed at start; {@code /healthz} on loopback is all this
   * client reads, so it trusts any certificate.
   */
  private static HttpClient insecureLoopbackClient() {
    try {
      SSLContext ssl = SSLContext.getInstance("TLS");
      ssl.init(
          null,
          new TrustManager[] {
            new X509TrustManager() {
              @Override
              public void checkClientTrusted(X509Certificate[] chain, String authType) {}

              @Override
              public void checkServerTrusted(X509Certificate[] chain, String authType) {}

              @Override
              public X509Certificate[] getAcceptedIssuers() {
                return new X509Certificate[0];
              }
            }
          },
          new SecureRandom());
      // HTTP/1.1: their Go servers answer the JDK client's HTTP/2 with GOAWAY
      return HttpClient.newBuilder()
          .sslContext(ssl)
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(2))
          .build();
    } catch (java.security.GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }
}
