package io.kdra.it.support;

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
import java.util.regex.Pattern;

/**
 * One kdra service started as a separate JVM from its packaged Quarkus application ({@code
 * <module>/target/quarkus-app/quarkus-run.jar}), configured by system properties, with stdout and
 * stderr in one log file. Closing it ends the whole process tree, also when the test JVM exits
 * without closing it (shutdown hook).
 */
public final class ServiceProcess implements AutoCloseable {

  /**
   * Every service started, with the JVM that started it, so that a later run can end what a killed
   * run left (and only that: a demo or a test run still going keeps its services).
   */
  private static final Path PIDS = Leftovers.machineWide("services");

  /** Services have no directories of their own to delete. */
  private static final Pattern NO_DIRECTORIES = Pattern.compile("(?!)");

  /** The services this JVM started that still run. */
  private static final java.util.Set<ServiceProcess> RUNNING =
      java.util.concurrent.ConcurrentHashMap.newKeySet();

  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  /**
   * The JVM options of the tests' services: small heaps and quick startup, since up to seven JVMs
   * share two cores in these tests.
   */
  public static final List<String> TEST_JVM_OPTIONS =
      List.of("-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto");

  final String module;
  public final String name;
  public final Map<String, String> properties;
  final Map<String, String> environment;
  public final int httpPort;
  public final Path log;
  final List<String> jvmOptions;

  /** The private mount namespace the service runs in; null: this JVM's. */
  final PrivateTmpfs mount;

  private final Process process;
  private final Thread hook;

  /** Set before the harness itself ends the process: its exit is then no surprise. */
  private volatile boolean ending;

  private ServiceProcess(
      String module,
      String name,
      Map<String, String> properties,
      Map<String, String> environment,
      List<String> jvmOptions,
      PrivateTmpfs mount,
      int httpPort,
      Path log,
      Process process) {
    this.module = module;
    this.jvmOptions = jvmOptions;
    this.mount = mount;
    this.name = name;
    this.properties = properties;
    this.environment = environment;
    this.httpPort = httpPort;
    this.log = log;
    this.process = process;
    this.hook = new Thread(this::kill, "kill-" + name);
    Runtime.getRuntime().addShutdownHook(hook);
    RUNNING.add(this);
    process.onExit().thenRun(() -> RUNNING.remove(this));
  }

  /**
   * Ends every service this JVM started that still runs (as their shutdown hooks do, all at once),
   * and returns when they are gone: what must go before the control plane does, since a service
   * stopping gracefully still talks to the API server (e.g. to release its Lease).
   */
  public static void endAll() {
    new ArrayList<>(RUNNING).parallelStream().forEach(ServiceProcess::kill);
  }

  /**
   * Starts {@code module}'s packaged application.
   *
   * @param name a name for logs and the log file
   * @param properties system properties (Quarkus configuration) for the service
   */
  public static ServiceProcess start(
      String module, String name, Map<String, String> properties, Path logDir) {
    return start(module, name, properties, Map.of(), logDir);
  }

  /** As {@link #start(String, String, Map, Path)}, with extra environment variables. */
  public static ServiceProcess start(
      String module,
      String name,
      Map<String, String> properties,
      Map<String, String> environment,
      Path logDir) {
    return start(module, name, properties, environment, TEST_JVM_OPTIONS, logDir);
  }

  /**
   * As {@link #start(String, String, Map, Map, Path)}, with these JVM options instead of {@link
   * #TEST_JVM_OPTIONS} (a benchmark runs a service as its container image does).
   */
  public static ServiceProcess start(
      String module,
      String name,
      Map<String, String> properties,
      Map<String, String> environment,
      List<String> jvmOptions,
      Path logDir) {
    return start(
        module, name, properties, environment, List.copyOf(jvmOptions), null, logDir, freePort());
  }

  /**
   * As {@link #start(String, String, Map, Map, Path)}, inside {@code mount}'s private mount
   * namespace: the service sees that tmpfs (a disk the test fills), nothing else does.
   */
  public static ServiceProcess startInside(
      PrivateTmpfs mount,
      String module,
      String name,
      Map<String, String> properties,
      Map<String, String> environment,
      Path logDir) {
    return start(
        module, name, properties, environment, TEST_JVM_OPTIONS, mount, logDir, freePort());
  }

  private static ServiceProcess start(
      String module,
      String name,
      Map<String, String> properties,
      Map<String, String> environment,
      List<String> jvmOptions,
      PrivateTmpfs mount,
      Path logDir,
      int port) {
    Path jar = moduleDir(module).resolve("target/quarkus-app/quarkus-run.jar");
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException(
          jar
              + " is missing; package "
              + module
              + " first (./mvnw -pl integration-tests -am install -DskipTests)");
    }
    Map<String, String> props = new LinkedHashMap<>(properties);
    props.put("quarkus.http.port", Integer.toString(port));
    props.put("quarkus.http.host", "127.0.0.1");
    List<String> command = new ArrayList<>();
    if (mount != null) {
      command.addAll(mount.enter());
    }
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmOptions);
    // this JVM's temporary directory (the demo's is its own, removed when it stops), not /tmp
    command.add("-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"));
    props.forEach((k, v) -> command.add("-D" + k + "=" + v));
    command.add("-jar");
    command.add(jar.toString());
    try {
      Files.createDirectories(logDir);
      Path log = logDir.resolve(name + ".log");
      ProcessBuilder builder =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
      builder.environment().putAll(environment);
      Process process = builder.start();
      if (mount != null) {
        // recorded as the java it becomes, not as nsenter: a leftover is recognised by its program
        mount.awaitEntered(process);
      }
      Leftovers.entry(process.toHandle(), List.of()).ifPresent(e -> leftovers().record(List.of(e)));
      return new ServiceProcess(
          module,
          name,
          Map.copyOf(properties),
          Map.copyOf(environment),
          jvmOptions,
          mount,
          port,
          log,
          process);
    } catch (IOException e) {
      throw new UncheckedIOException("starting " + name, e);
    }
  }

  /** The repository's {@code module} directory; tests run in {@code integration-tests/}. */
  public static Path moduleDir(String module) {
    Path here = Path.of("").toAbsolutePath();
    Path root = Files.isDirectory(here.resolve(module)) ? here : here.getParent();
    return root.resolve(module);
  }

  static Leftovers leftovers() {
    return new Leftovers(PIDS, NO_DIRECTORIES);
  }

  /**
   * Ends the services that a run killed with SIGKILL left running (no shutdown hook ran): only
   * processes recorded ({@link Leftovers#machineWide}) that are still the recorded ones (same start
   * time and executable, so a reused pid is never hit) and whose test or demo JVM is gone.
   */
  public static void killLeftovers() {
    for (Leftovers.Entry e : leftovers().reap()) {
      System.out.println("[stack] ended leftover service process " + e.pid() + " of a killed run");
    }
  }

  private static final FreePorts PORTS = FreePorts.belowEphemeralRange();

  /** A port for a process to bind later (see {@link FreePorts} for why not an ephemeral one). */
  public static int freePort() {
    return PORTS.take();
  }

  public boolean alive() {
    return process.isAlive();
  }

  /** The JVM's process id (a benchmark reads its CPU time and memory). */
  public long pid() {
    return process.pid();
  }

  /**
   * Runs {@code action} when the process exits by itself (it crashed, or gave up, as a replica that
   * lost its Lease does), not when the harness ends it ({@link #close}, {@link #killForcibly}, the
   * shutdown hook).
   */
  public void onExitByItself(Runnable action) {
    process
        .onExit()
        .thenRun(
            () -> {
              if (!ending) {
                action.run();
              }
            });
  }

  public int exitValue() {
    return process.exitValue();
  }

  /**
   * The value of one series in {@code /q/metrics}, e.g. {@code name{label="x"}} as Micrometer
   * writes it (labels in its order); null while the process does not serve it.
   */
  public Double metric(String series) {
    try {
      String body =
          HTTP.send(
                  HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/q/metrics"))
                      .timeout(Duration.ofSeconds(10))
                      .build(),
                  HttpResponse.BodyHandlers.ofString())
              .body();
      return body.lines()
          .filter(l -> l.startsWith(series + " "))
          .map(l -> Double.valueOf(l.substring(series.length() + 1).trim()))
          .findFirst()
          .orElse(null);
    } catch (IOException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  /**
   * Writes the JVM's thread stacks to {@code out} (the JDK's {@code jcmd}, run as the tests' own
   * JVM is): what a stuck reconcile or a lost event leaves no log line of. Best effort; a failure
   * says why in {@code out}.
   */
  public void threadDumpTo(Path out) {
    Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
    try {
      Process dump =
          new ProcessBuilder(jcmd.toString(), Long.toString(process.pid()), "Thread.print", "-l")
              .redirectErrorStream(true)
              .redirectOutput(out.toFile())
              .start();
      if (!dump.waitFor(60, TimeUnit.SECONDS)) {
        dump.destroyForcibly();
        Files.writeString(out, "jcmd did not answer within 60 s");
      }
    } catch (IOException e) {
      try {
        Files.writeString(out, "no thread dump: " + e);
      } catch (IOException ignored) {
        // the dump folder itself is gone: nothing to report into
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The body of {@code /q/health/ready}, or why there is none. */
  public String readiness() {
    try {
      HttpResponse<String> r =
          HTTP.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/q/health/ready"))
                  .timeout(Duration.ofSeconds(3))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      return r.statusCode() + " " + r.body();
    } catch (IOException e) {
      return "no answer: " + e;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "interrupted";
    }
  }

  public boolean ready() {
    return readiness().startsWith("200 ");
  }

  /** Fails with the readiness body and the log's tail when not ready in time or dead. */
  public void awaitReady(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException(
            name + " exited with " + process.exitValue() + "; log " + log + ":\n" + tail(40));
      }
      if (ready()) {
        return;
      }
      sleep(250);
    }
    throw new IllegalStateException(
        name
            + " not ready after "
            + timeout
            + ": "
            + readiness()
            + "\nlog "
            + log
            + ":\n"
            + tail(40));
  }

  String tail(int lines) {
    try {
      List<String> all = Files.readAllLines(log);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  /**
   * Freezes the process (SIGSTOP), as a long GC pause or a stopped container does: its timers,
   * renewals and writes in flight all wait, and resume where they were on {@link #resume}.
   */
  public void pause() {
    signal("STOP");
  }

  /** Lets a {@link #pause}d process run on (SIGCONT). */
  public void resume() {
    signal("CONT");
  }

  private void signal(String signal) {
    try {
      Process kill =
          new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid()))
              .redirectErrorStream(true)
              .start();
      if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        throw new IllegalStateException(
            "kill -"
                + signal
                + " "
                + name
                + ": "
                + new String(kill.getInputStream().readAllBytes()));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** A crash: SIGKILL to the process and its descendants, no shutdown hooks run. */
  public void killForcibly() {
    ending = true;
    List<ProcessHandle> tree = new ArrayList<>(process.descendants().toList());
    tree.add(process.toHandle());
    tree.forEach(ProcessHandle::destroyForcibly);
    try {
      if (!process.waitFor(15, TimeUnit.SECONDS)) {
        throw new IllegalStateException(name + " still runs after SIGKILL");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException shuttingDown) {
      // nothing left to end
    }
  }

  /**
   * The same service started again with the same configuration and HTTP port, as a pod restarted
   * behind its Service: the drivers keep reaching a restarted slice-publisher.
   */
  public ServiceProcess startAgain() {
    return start(
        module, name, properties, environment, jvmOptions, mount, log.getParent(), httpPort);
  }

  /** Ends the process and its descendants: SIGTERM, then SIGKILL after a grace period. */
  private void kill() {
    ending = true;
    List<ProcessHandle> tree = new ArrayList<>(process.descendants().toList());
    tree.add(process.toHandle());
    tree.forEach(ProcessHandle::destroy);
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        tree.forEach(ProcessHandle::destroyForcibly);
        process.waitFor(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      tree.forEach(ProcessHandle::destroyForcibly);
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    kill();
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException shuttingDown) {
      // the hook runs (or ran) anyway
    }
  }

  public static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
