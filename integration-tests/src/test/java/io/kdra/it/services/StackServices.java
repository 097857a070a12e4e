package io.kdra.it.services;

import io.kdra.it.support.PausableProxy;
import io.kdra.it.support.ServiceProcess;
import io.kdra.it.support.TestFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A stack's service processes by name, and what a test does to them: stop, crash, start again.
 * Leader-electing replicas are supervised as their ReplicaSet would: a replica that exits by itself
 * is started again, unless it is in a crash loop.
 */
public final class StackServices {

  /**
   * A replica that keeps exiting is left down after this many restarts within {@link
   * #CRASH_LOOP_WINDOW} (a crash loop); a long soak may lose a Lease more often than that in all.
   */
  private static final int MAX_RESTARTS = 5;

  private static final Duration CRASH_LOOP_WINDOW = Duration.ofMinutes(1);

  private final Duration readyTimeout;

  /** The stack's nodes, whose kubelets register a driver again once it started again. */
  private final StackNodes nodes;

  /** Guarded by {@code this}: replicas are started again from their exit's callback. */
  private final Map<String, ServiceProcess> processes = new LinkedHashMap<>();

  /** The leader-electing replicas, started again when they exit by themselves. */
  private final Set<String> replicas = ConcurrentHashMap.newKeySet();

  /** Each node's driver-to-publisher link, when the stack has them. */
  private final Map<String, PausableProxy> publisherLinks = new ConcurrentHashMap<>();

  /** Each claim-controller's link to the API server, when the stack has them. */
  private final Map<String, PausableProxy> apiLinks = new ConcurrentHashMap<>();

  /** The API server's link to the publishers' admission webhook, when the stack has one. */
  private volatile PublisherWebhook webhook;

  private final Map<String, Integer> restarts = new ConcurrentHashMap<>();
  private final Map<String, Deque<Long>> recentRestarts = new ConcurrentHashMap<>();
  private volatile boolean closing;

  StackServices(StackNodes nodes, Duration readyTimeout) {
    this.nodes = nodes;
    this.readyTimeout = readyTimeout;
  }

  /** The names of the stack's service processes. */
  public synchronized List<String> processNames() {
    return List.copyOf(processes.keySet());
  }

  /**
   * Whether the harness starts {@code name} again when it exits by itself (a leader-electing
   * replica, as its ReplicaSet would); others are left to the test.
   */
  public boolean restartsByItself(String name) {
    return replicas.contains(name);
  }

  public synchronized ServiceProcess process(String name) {
    return processes.get(name);
  }

  /**
   * The TCP proxy between {@code node}'s driver and the slice-publishers, which the test may pause
   * or cut; only in stacks made {@code withPublishers}.
   */
  public PausableProxy publisherLink(String node) {
    PausableProxy link = publisherLinks.get(node);
    if (link == null) {
      throw new IllegalStateException("no publisher link for " + node + ": use withPublishers");
    }
    return link;
  }

  void putPublisherLink(String node, PausableProxy link) {
    publisherLinks.put(node, link);
  }

  /**
   * The TCP proxy between the service {@code process} and the API server, which the test may pause
   * or cut; only in stacks made {@code withControllerApiLinks}, for the claim-controllers.
   */
  public PausableProxy apiLink(String process) {
    PausableProxy link = apiLinks.get(process);
    if (link == null) {
      throw new IllegalStateException(
          "no API link for " + process + ": use withControllerApiLinks");
    }
    return link;
  }

  /**
   * The publishers' admission webhook, as the API server reaches it: one address spreading
   * connections over every replica's HTTPS port, as the chart's Service would; only in stacks made
   * {@code withPublisherWebhook}.
   */
  public PublisherWebhook webhook() {
    if (webhook == null) {
      throw new IllegalStateException("no publisher webhook: use withPublisherWebhook");
    }
    return webhook;
  }

  void putWebhook(PublisherWebhook webhook) {
    this.webhook = webhook;
  }

  void putApiLink(String process, PausableProxy link) {
    apiLinks.put(process, link);
  }

  /** A service the test stops, crashes and starts again itself. */
  synchronized void put(ServiceProcess p) {
    processes.put(p.name, p);
  }

  public synchronized List<ServiceProcess> processList() {
    return new ArrayList<>(processes.values());
  }

  /**
   * A replica of a Deployment with leader election: a replica that loses its Lease exits (it may no
   * longer write), and its ReplicaSet starts it again. So does the harness: when a replica exits by
   * itself, it is started again on the same configuration, up to {@value #MAX_RESTARTS} times
   * within {@link #CRASH_LOOP_WINDOW} ({@link #restarts}). Crashes and stops the harness makes
   * ({@link #crash}, {@link #stop}) are left to the test.
   */
  synchronized void putReplica(ServiceProcess p) {
    replicas.add(p.name);
    put(p);
    p.onExitByItself(() -> restartExited(p));
  }

  private synchronized void restartExited(ServiceProcess exited) {
    if (closing || processes.get(exited.name) != exited) {
      return;
    }
    Deque<Long> recent = recentRestarts.computeIfAbsent(exited.name, k -> new ArrayDeque<>());
    long now = System.nanoTime();
    while (!recent.isEmpty() && now - recent.peekFirst() > CRASH_LOOP_WINDOW.toNanos()) {
      recent.removeFirst();
    }
    if (recent.size() >= MAX_RESTARTS) {
      System.out.printf(
          "[stack] %s exited with %d again; left down after %d restarts within %s%n",
          exited.name, exited.exitValue(), MAX_RESTARTS, CRASH_LOOP_WINDOW);
      return;
    }
    recent.addLast(now);
    int n = restarts.merge(exited.name, 1, Integer::sum);
    System.out.printf(
        "[stack] %s exited by itself with %d; started again, as its ReplicaSet"
            + " would (restart %d)%n",
        exited.name, exited.exitValue(), n);
    try {
      putReplica(exited.startAgain());
    } catch (RuntimeException e) {
      System.out.println("[stack] starting " + exited.name + " again: " + e);
    }
  }

  /** How often the replica {@code name} exited by itself and was started again. */
  public int restarts(String name) {
    return restarts.getOrDefault(name, 0);
  }

  /** Returns once every service is ready. */
  void awaitAllReady() {
    for (ServiceProcess p : processList()) {
      p.awaitReady(readyTimeout);
    }
  }

  /**
   * A crash: the service is killed (SIGKILL, no shutdown) and then started again on the same
   * configuration and node directories, as a restarted pod; a driver registers again with its
   * node's kubelet. Returns once the new process is ready.
   */
  public ServiceProcess crashAndRestart(String name) {
    crash(name);
    return restart(name);
  }

  /** Stops the service as Kubernetes does (SIGTERM, SIGKILL after a grace period). */
  public void stop(String name) {
    process(name).close();
  }

  /** Kills the service (SIGKILL, no shutdown); {@link #restart} starts it again. */
  public void crash(String name) {
    process(name).killForcibly();
  }

  /**
   * Starts a crashed service again on the same configuration and node directories; a driver
   * registers again with its node's kubelet. Returns once the new process is ready.
   */
  public ServiceProcess restart(String name) {
    ServiceProcess fresh = restartWithoutWaiting(name);
    fresh.awaitReady(readyTimeout);
    return fresh;
  }

  /**
   * As {@link #restart}, returning once the process runs (and a driver registered with its
   * kubelet), not once it is ready: readiness may need another service that is down too.
   */
  public ServiceProcess restartWithoutWaiting(String name) {
    ServiceProcess fresh = process(name).startAgain();
    if (replicas.contains(name)) {
      putReplica(fresh);
    } else {
      synchronized (this) {
        processes.put(name, fresh);
      }
    }
    nodes.restarted(name, readyTimeout);
    return fresh;
  }

  /** From now on, a replica that exits stays down (the stack is closing). */
  void closing() {
    closing = true;
  }

  /** Stops every process, in parallel. */
  void stopAll() {
    closing = true;
    processList().parallelStream().forEach(ServiceProcess::close);
    publisherLinks.values().forEach(PausableProxy::close);
    apiLinks.values().forEach(PausableProxy::close);
    if (webhook != null) {
      webhook.link().close();
    }
  }

  /** Writes each service's readiness and thread stacks and copies its log into {@code dir}. */
  void dumpTo(Path dir) throws IOException {
    for (ServiceProcess p : processList()) {
      TestFiles.write(dir.resolve(p.name + ".readiness.txt"), p.alive() ? p.readiness() : "exited");
      if (p.alive()) {
        p.threadDumpTo(dir.resolve(p.name + ".threads.txt"));
      }
      if (Files.exists(p.log)) {
        Files.copy(p.log, dir.resolve(p.name + ".log"), StandardCopyOption.REPLACE_EXISTING);
      }
    }
  }
}
