package io.kdra.it.bench;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.controlplane.UpstreamControllers;
import io.kdra.it.controlplane.WorkloadApi;
import io.kdra.it.nodes.NodeRegistration;
import io.kdra.it.services.Dra;
import io.kdra.it.services.ServiceIdentities;
import io.kdra.it.services.Stack;
import io.kdra.it.support.OwnerOnly;
import io.kdra.it.support.ServiceProcess;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;
import java.util.stream.IntStream;

/**
 * One run of {@link SchedulingBenchmark}: one side, one size, one workload, one phase, on a control
 * plane of its own (fresh etcd). Writes the nodes, slices, classes and templates, starts the side's
 * processes, binds a warm-up pod (so that every informer is synced), in the {@link BenchPhase#WARM}
 * phase runs a {@link WarmBurst}, then creates the pods and measures until all are bound, the run
 * stalls or its deadline passes; the {@link BenchWorkload#CHURN} workload's {@link ChurnWaves}
 * follow.
 */
final class BenchRun {

  /** The two sides: upstream's scheduler and resourceclaim controller, or our controller. */
  enum Side {
    UPSTREAM("upstream", "default-scheduler"),
    OURS("ours", Stack.SCHEDULER);

    final String key;
    final String schedulerName;

    Side(String key, String schedulerName) {
      this.key = key;
      this.schedulerName = schedulerName;
    }
  }

  /**
   * What one run measured. {@code cpuMs}: CPU milliseconds by process over the burst (churn's
   * fill); {@code churn}: the waves' figures, null for the other workloads.
   */
  record Result(
      Side side,
      int nodes,
      int pods,
      BenchWorkload workload,
      BenchPhase phase,
      int round,
      int bound,
      double createSeconds,
      double seconds,
      double p50Ms,
      double p99Ms,
      Map<String, Double> cpuMs,
      double apiRequests,
      Map<String, Double> requestsByKind,
      Map<String, double[]> memoryMib,
      double heapAfterGcMib,
      double loadMean,
      double loadMax,
      ChurnResult churn,
      List<String> problems,
      String notes) {

    double podsPerSecond() {
      return seconds > 0 ? bound / seconds : 0;
    }

    double cpuMsPerPod() {
      return cpuMs.values().stream().mapToDouble(Double::doubleValue).sum() / pods;
    }

    double requestsPerPod() {
      return apiRequests / pods;
    }
  }

  private static final String WARMUP_NAMESPACE = "bench-warmup";
  private static final String WARMUP_DRIVER = "warmup.bench.kdra.io";
  private static final String APISERVER = "kube-apiserver";
  private static final String ETCD = "etcd";
  private static final String CONTROLLER = "claim-controller";

  private final SchedulingBenchmark.Options options;
  private final Side side;
  private final int nodes;
  private final int pods;
  private final BenchWorkload workload;
  private final BenchPhase phase;
  private final int round;
  private final Path logDir;

  BenchRun(
      SchedulingBenchmark.Options options,
      Side side,
      int nodes,
      int pods,
      BenchWorkload workload,
      BenchPhase phase,
      int round,
      Path logDir) {
    this.options = options;
    this.side = side;
    this.nodes = nodes;
    this.pods = pods;
    this.workload = workload;
    this.phase = phase;
    this.round = round;
    this.logDir = logDir;
  }

  Result run() {
    ControlPlane.Running cp = ControlPlane.Running.start();
    UpstreamControllers upstream = null;
    ServiceProcess controller = null;
    try {
      KubernetesClient client = cp.client();
      long t0 = System.nanoTime();
      setUp(client);
      log(
          "%d nodes, %d slices and the workload's objects written in %.1f s",
          nodes, nodes, (System.nanoTime() - t0) / 1e9);
      Config admin = Config.fromKubeconfig(cp.server().getKubeConfigYaml());
      Map<String, Long> pids = new LinkedHashMap<>(controlPlanePids());
      if (side == Side.UPSTREAM) {
        upstream =
            UpstreamControllers.start(
                cp, admin, ServiceIdentities.caFile(admin), logDir, upstreamFlags());
        pids.put(UpstreamControllers.SCHEDULER, upstream.pid(UpstreamControllers.SCHEDULER));
        pids.put(
            UpstreamControllers.CONTROLLER_MANAGER,
            upstream.pid(UpstreamControllers.CONTROLLER_MANAGER));
      } else {
        controller = startController(client, admin);
        pids.put(CONTROLLER, controller.pid());
      }
      warmUp(client);
      return measure(client, pids, controller);
    } finally {
      if (controller != null) {
        controller.close();
      }
      if (upstream != null) {
        upstream.close();
      }
      cp.close();
    }
  }

  private void setUp(KubernetesClient client) {
    if (workload == BenchWorkload.GANG && !WorkloadApi.servedBy(ControlPlane.VERSION)) {
      throw new IllegalStateException(
          "the gang workload needs the Workload API, served from Kubernetes 1.37 on, not "
              + ControlPlane.VERSION);
    }
    KdraChart.install(client);
    for (String ns : List.of(BenchWorkload.NAMESPACE, WARMUP_NAMESPACE)) {
      client
          .namespaces()
          .resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
          .create();
      // the ServiceAccount admission refuses pods whose ServiceAccount does not exist
      client
          .serviceAccounts()
          .inNamespace(ns)
          .resource(
              new ServiceAccountBuilder()
                  .withNewMetadata()
                  .withName("default")
                  .endMetadata()
                  .build())
          .create();
    }
    parallel(nodes, i -> NodeRegistration.register(client, nodeName(i), Map.of()));
    parallel(nodes, i -> client.resource(workload.slice(nodeName(i), i)).create());
    for (HasMetadata o : workload.prerequisites(pods)) {
      client.resource(o).create();
    }
    // the warm-up: its own node, driver, class and template, so that no GPU is taken
    NodeRegistration.register(client, "bench-warmup", Map.of());
    client
        .resource(
            new ResourceSliceBuilder()
                .withNewMetadata()
                .withName("bench-warmup")
                .endMetadata()
                .withNewSpec()
                .withDriver(WARMUP_DRIVER)
                .withNodeName("bench-warmup")
                .withNewPool()
                .withName("bench-warmup")
                .withGeneration(1L)
                .withResourceSliceCount(1L)
                .endPool()
                .addNewDevice()
                .withName("dev-0")
                .endDevice()
                .endSpec()
                .build())
        .create();
    DeviceClass warmupClass = Dra.gpuClass("bench-warmup", null);
    warmupClass
        .getSpec()
        .getSelectors()
        .get(0)
        .getCel()
        .setExpression("device.driver == \"" + WARMUP_DRIVER + "\"");
    client.resource(warmupClass).create();
    client.resource(Dra.template(WARMUP_NAMESPACE, "warmup", "bench-warmup", 1)).create();
  }

  /** The QPS and controllers the upstream side runs with (see docs/dev/benchmarks.md). */
  private Map<String, List<String>> upstreamFlags() {
    List<String> qps =
        options.upstreamQps() > 0
            ? List.of(
                "--kube-api-qps=" + options.upstreamQps(),
                "--kube-api-burst=" + 2 * options.upstreamQps())
            : List.of();
    List<String> scheduler = new ArrayList<>(qps);
    scheduler.add("--v=" + options.upstreamVerbosity());
    List<String> kcm = new ArrayList<>(qps);
    kcm.add("--v=" + options.upstreamVerbosity());
    // the one controller the workload needs; the others would only add their own informers
    kcm.add("--controllers=resourceclaim-controller");
    if (workload == BenchWorkload.GANG) {
      // kube-scheduler places gangs together only with the Workload API's gate on; without it
      // in kube-controller-manager too, its resourceclaim controller makes no claim for a pod
      // of a PodGroup ("GenericWorkload feature is disabled") and no gang is ever placed
      scheduler.add("--feature-gates=GenericWorkload=true");
      kcm.add("--feature-gates=GenericWorkload=true");
    }
    return Map.of(
        UpstreamControllers.SCHEDULER, scheduler, UpstreamControllers.CONTROLLER_MANAGER, kcm);
  }

  private ServiceProcess startController(KubernetesClient client, Config admin) {
    Map<String, String> properties = new LinkedHashMap<>();
    properties.put("quarkus.otel.sdk.disabled", "true");
    properties.put("kdra.claim-controller.leader-election.enabled", "false");
    properties.put("kdra.claim-controller.template-mode", "own");
    Path kubeconfig = logDir.resolve("claim-controller.kubeconfig");
    OwnerOnly.write(
        kubeconfig,
        KdraChart.kubeconfig(
            admin,
            ServiceIdentities.caFile(admin),
            KdraChart.serviceAccount(KdraChart.CONTROLLER),
            KdraChart.token(client, KdraChart.CONTROLLER)));
    ServiceProcess p =
        ServiceProcess.start(
            "claim-controller",
            CONTROLLER,
            properties,
            Map.of("KUBECONFIG", kubeconfig.toString()),
            options.jvmOptions(),
            logDir);
    p.awaitReady(java.time.Duration.ofSeconds(180));
    return p;
  }

  /** One pod on the warm-up node, bound before the measurement starts. */
  private void warmUp(KubernetesClient client) {
    long t0 = System.nanoTime();
    Pod pod = Dra.podWithTemplate(WARMUP_NAMESPACE, "warmup", "warmup");
    pod.getSpec().setSchedulerName(side.schedulerName);
    pod.getSpec().setAutomountServiceAccountToken(false);
    client.resource(pod).create();
    try {
      client
          .pods()
          .inNamespace(WARMUP_NAMESPACE)
          .withName("warmup")
          .waitUntilCondition(
              p -> p != null && p.getSpec().getNodeName() != null, 300, TimeUnit.SECONDS);
    } catch (KubernetesClientException | IllegalStateException e) {
      throw new IllegalStateException(
          "the warm-up pod was not bound within 300 s; logs in " + logDir, e);
    }
    log("warm-up pod bound after %.1f s", (System.nanoTime() - t0) / 1e9);
  }

  private Result measure(
      KubernetesClient client, Map<String, Long> pids, ServiceProcess controller) {
    try (PodTraffic traffic = new PodTraffic(client, options.creators(), this::say)) {
      if (phase == BenchPhase.WARM) {
        new WarmBurst(client, traffic, workload, side.schedulerName, pods, options, this::say)
            .run();
      }
      LoadSampler load = new LoadSampler();
      try {
        return measure(client, traffic, pids, controller, load);
      } finally {
        load.stop();
      }
    }
  }

  private Result measure(
      KubernetesClient client,
      PodTraffic traffic,
      Map<String, Long> pids,
      ServiceProcess controller,
      LoadSampler load) {
    Map<String, Double> cpuBefore = cpu(pids);
    Map<String, Double> requestsBefore = BenchProbes.requests(metrics(client));
    // queued before the measured pods, never bound, left out of the counts
    for (Pod adversary : workload.adversaries(side.schedulerName)) {
      client.resource(adversary).create();
    }
    PodTraffic.Batch burst =
        traffic.create(
            IntStream.range(0, pods).mapToObj(i -> workload.pod(i, side.schedulerName)).toList());
    String stop =
        traffic.awaitBound(
            burst,
            burst.start + TimeUnit.SECONDS.toNanos(options.deadlineSeconds()),
            options.deadlineSeconds(),
            options.stallSeconds());
    long end = traffic.lastBound(burst.names, burst.start);
    Map<String, Double> cpuAfter = cpu(pids);
    Map<String, Double> requestsAfter = BenchProbes.requests(metrics(client));
    Map<String, Double> cpuMs = new LinkedHashMap<>();
    cpuBefore.forEach((k, v) -> cpuMs.put(k, cpuAfter.get(k) - v));
    Map<String, Double> requests = BenchProbes.delta(requestsBefore, requestsAfter);
    // the benchmark's own requests: its pod creations (its informer's watch is older)
    double own = pods - burst.failures.get();
    double total = requests.values().stream().mapToDouble(Double::doubleValue).sum() - own;
    List<String> problems = new ArrayList<>();
    if (stop != null) {
      problems.add(stop);
    }
    ChurnResult churn =
        workload == BenchWorkload.CHURN ? churn(traffic, pids, stop, problems) : null;
    load.stop();
    Map<String, double[]> memory = new LinkedHashMap<>();
    pids.forEach((k, pid) -> memory.put(k, BenchProbes.rssAndPeakMib(pid)));
    double heap =
        controller != null && controller.alive()
            ? BenchProbes.heapAfterGcMib(controller.pid())
            : Double.NaN;
    BindLatency latency = BindLatency.of(traffic.bindMs(burst.names));
    if (controller != null && !controller.alive()) {
      problems.add("claim-controller exited with " + controller.exitValue());
    }
    String notes = check(client, problems);
    return new Result(
        side,
        nodes,
        pods,
        workload,
        phase,
        round,
        traffic.bound(burst.names),
        burst.sendSeconds(),
        (end - burst.start) / 1e9,
        latency.p50Ms(),
        latency.p99Ms(),
        cpuMs,
        total,
        requests,
        memory,
        heap,
        load.mean(),
        load.max(),
        churn,
        problems,
        notes);
  }

  /**
   * The waves after the fill, their pods chosen with the round as the seed (both sides of a round
   * replace the same pods); none when the fill was not bound ({@code fillStop}).
   */
  private ChurnResult churn(
      PodTraffic traffic, Map<String, Long> pids, String fillStop, List<String> problems) {
    if (fillStop != null) {
      problems.add("no waves: the fill was not bound");
      return null;
    }
    return new ChurnWaves(
            traffic, i -> workload.pod(i, side.schedulerName), () -> cpu(pids), options, this::say)
        .run(ChurnPlan.of(pods, options.waves(), round), problems);
  }

  /**
   * The correctness check, into {@code problems}: no device in two claims, every pod bound, its
   * claims allocated on its node and reserved for it. Returns notes (alternatives used).
   */
  private String check(KubernetesClient client, List<String> problems) {
    List<Pod> all = client.pods().inNamespace(BenchWorkload.NAMESPACE).list().getItems();
    Map<String, ResourceClaim> claims = new HashMap<>();
    for (ResourceClaim c :
        client
            .resources(ResourceClaim.class)
            .inNamespace(BenchWorkload.NAMESPACE)
            .list()
            .getItems()) {
      claims.put(c.getMetadata().getName(), c);
    }
    Map<String, String> owner = new HashMap<>();
    Map<String, Integer> results = new TreeMap<>();
    int doubles = 0;
    for (ResourceClaim c : claims.values()) {
      if (c.getStatus() == null || c.getStatus().getAllocation() == null) {
        continue;
      }
      for (var r : c.getStatus().getAllocation().getDevices().getResults()) {
        results.merge(r.getRequest(), 1, Integer::sum);
        String device = r.getDriver() + "/" + r.getPool() + "/" + r.getDevice();
        String previous = owner.putIfAbsent(device, c.getMetadata().getName());
        if (previous != null && doubles++ < 5) {
          problems.add(
              device + " allocated to both " + previous + " and " + c.getMetadata().getName());
        }
      }
    }
    int unbound = 0;
    int wrong = 0;
    for (Pod pod : all) {
      if (BenchWorkload.ADVERSARY.equals(pod.getMetadata().getName())) {
        continue;
      }
      String node = pod.getSpec().getNodeName();
      if (node == null) {
        unbound++;
        continue;
      }
      String claimName = claimOf(pod);
      ResourceClaim claim = claimName == null ? null : claims.get(claimName);
      String why =
          claim == null
              ? "no claim"
              : claim.getStatus() == null || claim.getStatus().getAllocation() == null
                  ? "claim " + claimName + " not allocated"
                  : claim.getStatus().getReservedFor().stream()
                          .noneMatch(r -> pod.getMetadata().getUid().equals(r.getUid()))
                      ? "claim " + claimName + " not reserved for it"
                      : claim.getStatus().getAllocation().getDevices().getResults().stream()
                              .anyMatch(r -> !node.equals(r.getPool()))
                          ? "claim " + claimName + " has devices of another node than " + node
                          : null;
      if (why != null && wrong++ < 5) {
        problems.add(pod.getMetadata().getName() + ": " + why);
      }
    }
    // the adversary is not one of the measured pods
    long measured =
        all.stream()
            .filter(p -> !BenchWorkload.ADVERSARY.equals(p.getMetadata().getName()))
            .count();
    if (measured != pods) {
      problems.add(measured + " of " + pods + " pods exist");
    }
    if (unbound > 0) {
      problems.add(unbound + " pods unbound");
    }
    if (doubles > 0) {
      problems.add(doubles + " devices allocated twice");
    }
    if (wrong > 0) {
      problems.add(wrong + " bound pods without their claim allocated and reserved");
    }
    return workload == BenchWorkload.FIRST_AVAILABLE ? "devices by request: " + results : "";
  }

  private static String claimOf(Pod pod) {
    var entry = pod.getSpec().getResourceClaims().get(0);
    if (entry.getResourceClaimName() != null) {
      return entry.getResourceClaimName();
    }
    if (pod.getStatus() == null) {
      return null;
    }
    return pod.getStatus().getResourceClaimStatuses().stream()
        .filter(s -> s.getName().equals(entry.getName()))
        .map(s -> s.getResourceClaimName())
        .findFirst()
        .orElse(null);
  }

  /** kube-apiserver's and etcd's pids: this JVM's children running them. */
  private static Map<String, Long> controlPlanePids() {
    Map<String, Long> pids = new LinkedHashMap<>();
    ProcessHandle.current()
        .children()
        .filter(ProcessHandle::isAlive)
        .forEach(
            h -> {
              String command =
                  h.info().command().map(c -> Path.of(c).getFileName().toString()).orElse("");
              if (command.equals(APISERVER)) {
                pids.put(APISERVER, h.pid());
              } else if (command.startsWith(ETCD)) {
                pids.put(ETCD, h.pid());
              }
            });
    if (pids.size() != 2) {
      throw new IllegalStateException("kube-apiserver and etcd not found among " + pids);
    }
    return pids;
  }

  private static Map<String, Double> cpu(Map<String, Long> pids) {
    Map<String, Double> cpu = new LinkedHashMap<>();
    pids.forEach((k, pid) -> cpu.put(k, BenchProbes.cpuMillis(pid)));
    return cpu;
  }

  private static String metrics(KubernetesClient client) {
    return client.raw("/metrics");
  }

  private static String nodeName(int i) {
    return String.format("node-%04d", i);
  }

  private void parallel(int count, IntConsumer task) {
    ExecutorService pool = Executors.newFixedThreadPool(16);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        int n = i;
        futures.add(pool.submit(() -> task.accept(n)));
      }
      for (Future<?> f : futures) {
        f.get();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException("setting up the run: " + e.getCause(), e.getCause());
    } finally {
      pool.shutdownNow();
    }
  }

  private void say(String message) {
    log("%s", message);
  }

  private void log(String format, Object... args) {
    System.out.printf(
        "[bench] %s %s %s %d/%d r%d: %s%n",
        side.key, workload.key(), phase.key, nodes, pods, round, String.format(format, args));
  }

  /** The 1-minute load average, sampled every 2 s while the run measures. */
  private static final class LoadSampler {
    private final List<Double> samples = java.util.Collections.synchronizedList(new ArrayList<>());
    private final java.util.concurrent.ScheduledExecutorService timer =
        Executors.newSingleThreadScheduledExecutor();

    LoadSampler() {
      timer.scheduleAtFixedRate(
          () -> samples.add(BenchProbes.loadAverage()), 0, 2, TimeUnit.SECONDS);
    }

    void stop() {
      timer.shutdownNow();
    }

    double mean() {
      synchronized (samples) {
        return samples.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN);
      }
    }

    double max() {
      synchronized (samples) {
        return samples.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
      }
    }
  }
}
