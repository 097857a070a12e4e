package io.kdra.it.registry;

import io.kdra.it.support.Commands;
import io.kdra.it.support.Leftovers;
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
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * A container registry on 127.0.0.1 for the tests: Debian's {@code docker-registry} (the CNCF
 * distribution registry 2.8) with a configuration file of its own, its storage in a temporary
 * directory and a port the kernel picked, plain HTTP. containerd pulls from a loopback registry
 * over plain HTTP with no extra configuration, so a pod's image {@code 127.0.0.1:<port>/...} comes
 * from here, as from a user's registry. Closing it ends the process and deletes the storage; what a
 * killed test JVM left is ended and deleted by {@link #reapLeftovers}.
 */
public final class LocalRegistry implements AutoCloseable {

  private static final Path PIDS = Leftovers.machineWide("registries");

  /** The temporary directories of {@link #start}: the only ones a reap may delete. */
  private static final Pattern OWN_DIRECTORY = Pattern.compile("kdra-registry-\\d+");

  private static final Duration START_TIMEOUT = Duration.ofSeconds(30);
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  /** {@code 127.0.0.1:<port>}, the registry part of an image reference. */
  public final String address;

  public final Path dir;
  private final Process process;
  private final Thread hook;

  private LocalRegistry(String address, Path dir, Process process) {
    this.address = address;
    this.dir = dir;
    this.process = process;
    this.hook = new Thread(this::end, "local-registry");
    Runtime.getRuntime().addShutdownHook(hook);
  }

  /**
   * Starts a registry and prints {@code <address> <storage directory>}, then waits to be killed: a
   * test JVM that dies with its registry running ({@code LocalRegistryIT}).
   */
  public static void main(String[] args) throws InterruptedException {
    LocalRegistry registry = start();
    System.out.println(registry.address + " " + registry.dir);
    System.out.flush();
    Thread.sleep(Long.MAX_VALUE);
  }

  /** The executable, or null when Debian's docker-registry is not installed. */
  public static Path executable() {
    for (String candidate : List.of("/usr/bin/docker-registry", "/usr/sbin/docker-registry")) {
      if (Files.isExecutable(Path.of(candidate))) {
        return Path.of(candidate);
      }
    }
    return null;
  }

  /** Starts a registry and returns once it answers {@code /v2/}. */
  public static LocalRegistry start() {
    reapLeftovers();
    Path executable = executable();
    if (executable == null) {
      throw new IllegalStateException(
          "docker-registry is not installed (Debian package"
              + " docker-registry; integration-tests/scripts/build-node.sh installs it)");
    }
    try {
      Path dir = Files.createTempDirectory("kdra-registry-");
      int port = ServiceProcess.freePort();
      String address = "127.0.0.1:" + port;
      Path config = dir.resolve("config.yml");
      Files.writeString(
          config,
          "version: 0.1\n"
              + "log:\n"
              + "  level: warn\n"
              + "  accesslog: {disabled: true}\n"
              + "storage:\n"
              + "  filesystem: {rootdirectory: "
              + dir.resolve("storage")
              + "}\n"
              + "  delete: {enabled: true}\n"
              + "http:\n"
              + "  addr: "
              + address
              + "\n");
      Process process =
          new ProcessBuilder(executable.toString(), "serve", config.toString())
              .redirectErrorStream(true)
              .redirectOutput(
                  ProcessBuilder.Redirect.appendTo(dir.resolve("registry.log").toFile()))
              .start();
      Leftovers.entry(process.toHandle(), List.of(dir))
          .ifPresent(e -> leftovers().record(List.of(e)));
      LocalRegistry registry = new LocalRegistry(address, dir, process);
      registry.awaitServing();
      return registry;
    } catch (IOException e) {
      throw new UncheckedIOException("starting docker-registry", e);
    }
  }

  private static Leftovers leftovers() {
    return new Leftovers(PIDS, OWN_DIRECTORY);
  }

  /** Ends the registries (and deletes the storage) of test JVMs that were killed. */
  public static void reapLeftovers() {
    for (Leftovers.Entry e : leftovers().reap()) {
      System.out.println("[registry] ended leftover registry " + e.pid() + " of a killed run");
    }
  }

  private void awaitServing() {
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException(
            "docker-registry exited with " + process.exitValue() + ": " + log());
      }
      if (serving()) {
        System.out.println("[registry] serving on " + address + ", storage in " + dir);
        return;
      }
      ServiceProcess.sleep(100);
    }
    throw new IllegalStateException(
        "docker-registry not serving on " + address + " after " + START_TIMEOUT + ": " + log());
  }

  public boolean serving() {
    return serving(address);
  }

  /** Whether a registry answers {@code /v2/} at {@code address}. */
  public static boolean serving(String address) {
    try {
      return HTTP.send(
                  HttpRequest.newBuilder(URI.create("http://" + address + "/v2/"))
                      .timeout(Duration.ofSeconds(2))
                      .build(),
                  HttpResponse.BodyHandlers.discarding())
              .statusCode()
          == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /**
   * Pushes an image from an OCI archive (what the build leaves in a service's {@code
   * target/container-image/}) as {@code <address>/<repository>:<tag>}, with skopeo; the reference
   * pods use.
   */
  public String push(Path ociArchive, String repository, String tag) {
    String reference = address + "/" + repository + ":" + tag;
    List<String> command =
        new ArrayList<>(
            List.of(
                "skopeo",
                "--insecure-policy",
                "copy",
                "--quiet",
                "--dest-tls-verify=false",
                "oci-archive:" + ociArchive,
                "docker://" + reference));
    Commands.check(Duration.ofMinutes(5), command);
    return reference;
  }

  /** The manifest's layers' compressed sizes in bytes, summed (what a node pulls). */
  public long compressedSize(String repository, String tag) {
    long size = 0;
    for (var layer : manifest(repository, tag).path("layers")) {
      size += layer.path("size").asLong();
    }
    return size;
  }

  /** The image's configuration ({@code config} of its config blob: User, Entrypoint, Env...). */
  public com.fasterxml.jackson.databind.JsonNode config(String repository, String tag) {
    String digest = manifest(repository, tag).path("config").path("digest").asText();
    return json(get("/v2/" + repository + "/blobs/" + digest, "*/*")).path("config");
  }

  private com.fasterxml.jackson.databind.JsonNode manifest(String repository, String tag) {
    return json(
        get(
            "/v2/" + repository + "/manifests/" + tag,
            "application/vnd.oci.image.manifest.v1+json,"
                + "application/vnd.docker.distribution.manifest.v2+json"));
  }

  private static com.fasterxml.jackson.databind.JsonNode json(String text) {
    try {
      return new com.fasterxml.jackson.databind.ObjectMapper().readTree(text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private String get(String path, String accept) {
    try {
      HttpResponse<String> r =
          HTTP.send(
              HttpRequest.newBuilder(URI.create("http://" + address + path))
                  .header("Accept", accept)
                  .timeout(Duration.ofSeconds(10))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      if (r.statusCode() != 200) {
        throw new IllegalStateException("GET " + path + ": " + r.statusCode() + " " + r.body());
      }
      return r.body();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private String log() {
    try {
      return Files.readString(dir.resolve("registry.log"));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  private void end() {
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
    TestFiles.deleteRecursively(dir);
  }

  @Override
  public void close() {
    end();
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException shuttingDown) {
      // the hook runs anyway
    }
  }
}
