package io.kdra.it.nodes;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.PodResourceClaimStatus;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.kdra.devicedriver.kubelet.dra.v1.Claim;
import io.kdra.devicedriver.kubelet.dra.v1.DRAPluginGrpc;
import io.kdra.devicedriver.kubelet.dra.v1.NodePrepareResourceResponse;
import io.kdra.devicedriver.kubelet.dra.v1.NodePrepareResourcesRequest;
import io.kdra.devicedriver.kubelet.dra.v1.NodePrepareResourcesResponse;
import io.kdra.devicedriver.kubelet.dra.v1.NodeUnprepareResourcesRequest;
import io.kdra.devicedriver.kubelet.dra.v1.NodeUnprepareResourcesResponse;
import io.kdra.devicedriver.kubelet.drahealth.v1alpha1.DRAResourceHealthGrpc;
import io.kdra.devicedriver.kubelet.drahealth.v1alpha1.DeviceHealth;
import io.kdra.devicedriver.kubelet.drahealth.v1alpha1.NodeWatchResourcesRequest;
import io.kdra.devicedriver.kubelet.drahealth.v1alpha1.NodeWatchResourcesResponse;
import io.kdra.devicedriver.kubelet.pluginregistration.v1.InfoRequest;
import io.kdra.devicedriver.kubelet.pluginregistration.v1.PluginInfo;
import io.kdra.devicedriver.kubelet.pluginregistration.v1.RegistrationGrpc;
import io.kdra.devicedriver.kubelet.pluginregistration.v1.RegistrationStatus;
import io.kdra.it.support.ServiceProcess;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.unix.DomainSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The part of a kubelet that DRA needs, for one simulated node, in the test JVM: the plugin
 * watcher's registration handshake on {@code <registry>/<driver>-reg.sock}, NodePrepareResources
 * (v1) for every pod bound to the node (once its claims are allocated and reserved for it), and on
 * pod deletion NodeUnprepareResources and the final deletion of the pod object, as a kubelet does
 * after a graceful deletion; and, as the kubelet's DRA manager does for KEP-4680, a
 * NodeWatchResources stream whose latest device health it keeps, forgets when the stream ends and
 * reopens. All calls go over the driver's real unix sockets. Like a kubelet, it renews its node's
 * Lease in {@code kube-node-lease} every 10 s (40 s duration): kube-controller-manager's node
 * lifecycle controller, where it runs ({@code KdraStack.fullControlPlane()}), would otherwise mark
 * the node NotReady and taint it unreachable.
 */
public final class TestKubelet implements AutoCloseable {

  /** Where kubelets keep their node's Lease. */
  public static final String NODE_LEASE_NAMESPACE = "kube-node-lease";

  /** The kubelet's defaults: a 40 s Lease, renewed every quarter of it. */
  private static final int NODE_LEASE_SECONDS = 40;

  private static final long NODE_LEASE_RENEW_SECONDS = 10;

  /** What the driver answered for one prepared pod. */
  public record Prepared(String pod, List<Claim> claims, List<String> cdiIds) {

    /**
     * The CDI ids of the devices themselves, without the device-metadata mounts (one per request,
     * {@code <claim uid>_metadata_<request>}, on by default as upstream's drivers have them).
     */
    public List<String> deviceCdiIds() {
      return cdiIds.stream().filter(id -> !id.contains("_metadata_")).toList();
    }
  }

  private final KubernetesClient client;
  public final String node;
  private final String driver;
  private final Path registryDir;
  private final EpollEventLoopGroup loop = new EpollEventLoopGroup(1);
  private final ScheduledExecutorService worker;

  /** Renews the node Lease, apart from the worker, whose prepares may block for seconds. */
  private final ScheduledExecutorService heartbeat;

  private final Map<String, Prepared> prepared = new ConcurrentHashMap<>();

  /**
   * The claims of each pod whose prepare was called, returned or not: the kubelet's claim cache,
   * which records a pod's claims before it calls NodePrepareResources and unprepares them when the
   * pod goes, whether the prepare succeeded or not (a driver killed mid-prepare may have left state
   * that only this unprepare releases).
   */
  private final Map<String, List<Claim>> claimCache = new ConcurrentHashMap<>();

  private final Map<String, String> lastError = new ConcurrentHashMap<>();
  private volatile ManagedChannel dra;
  private SharedIndexInformer<Pod> informer;

  /** Device health by device name, as the last health message said; empty without a stream. */
  private volatile Map<String, DeviceHealth> health = Map.of();

  private volatile boolean closed;

  /** Whether the Lease is being renewed ({@link #startHeartbeat}). */
  private boolean heartbeatStarted;

  public TestKubelet(KubernetesClient client, String node, String driver, Path registryDir) {
    this.client = client;
    this.node = node;
    this.driver = driver;
    this.registryDir = registryDir;
    this.worker =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "kubelet-" + node);
              t.setDaemon(true);
              return t;
            });
    this.heartbeat =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "kubelet-lease-" + node);
              t.setDaemon(true);
              return t;
            });
  }

  private ManagedChannel channel(Path socket) {
    return NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
        .eventLoopGroup(loop)
        .channelType(EpollDomainSocketChannel.class)
        .overrideAuthority("localhost")
        .usePlaintext()
        .build();
  }

  /**
   * The plugin watcher: waits for the registration socket, asks for the plugin's info, checks it
   * and reports the registration as accepted (which the driver's readiness waits for).
   */
  public void register(Duration timeout) {
    Path socket = registryDir.resolve(driver + "-reg.sock");
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      try {
        registerOnce(socket);
        return;
      } catch (io.grpc.StatusRuntimeException | NoSocketYet e) {
        // not there yet, or the socket a killed driver left behind until its successor binds
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("no registration on " + socket + " after " + timeout, e);
        }
        ServiceProcess.sleep(200);
      }
    }
  }

  private static final class NoSocketYet extends RuntimeException {
    NoSocketYet(Path socket) {
      super("no socket " + socket);
    }
  }

  private void registerOnce(Path socket) {
    if (!Files.exists(socket)) {
      throw new NoSocketYet(socket);
    }
    ManagedChannel reg = channel(socket);
    try {
      var stub = RegistrationGrpc.newBlockingStub(reg).withDeadlineAfter(10, TimeUnit.SECONDS);
      PluginInfo info = stub.getInfo(InfoRequest.getDefaultInstance());
      String problem = null;
      if (!info.getType().equals("DRAPlugin")) {
        problem = "type " + info.getType();
      } else if (!info.getName().equals(driver)) {
        problem = "name " + info.getName();
      } else if (!info.getSupportedVersionsList().contains("v1.DRAPlugin")) {
        problem = "versions " + info.getSupportedVersionsList();
      } else if (!Files.exists(Path.of(info.getEndpoint()))) {
        problem = "no socket at endpoint " + info.getEndpoint();
      }
      RegistrationGrpc.newBlockingStub(reg)
          .withDeadlineAfter(10, TimeUnit.SECONDS)
          .notifyRegistrationStatus(
              RegistrationStatus.newBuilder()
                  .setPluginRegistered(problem == null)
                  .setError(Objects.toString(problem, ""))
                  .build());
      if (problem != null) {
        throw new IllegalStateException("kubelet on " + node + " refused the plugin: " + problem);
      }
      ManagedChannel previous = dra;
      dra = channel(Path.of(info.getEndpoint()));
      if (previous != null) {
        previous.shutdownNow(); // its health stream ends and reopens on the new channel
      } else {
        watchHealth();
      }
    } finally {
      reg.shutdownNow();
    }
  }

  /**
   * Calls NodePrepareResources for the pod's claims again, as a kubelet does after its own restart
   * or on a container restart, on the kubelet's worker (after what it is doing now), and returns
   * what the driver answered.
   */
  public Prepared prepareAgain(Pod pod) throws Exception {
    return worker
        .submit(
            () -> {
              Pod current =
                  client
                      .pods()
                      .inNamespace(pod.getMetadata().getNamespace())
                      .withName(pod.getMetadata().getName())
                      .get();
              prepare(current);
              return prepared.get(key(pod));
            })
        .get(60, TimeUnit.SECONDS);
  }

  /**
   * Starts renewing the node's Lease, as a kubelet does from its start on, before any plugin
   * registers: a launched node whose driver takes longer to start than the node monitor's grace
   * period must not be marked unreachable meanwhile. Idempotent; {@link #start} does it too.
   */
  public synchronized void startHeartbeat() {
    if (!heartbeatStarted) {
      heartbeatStarted = true;
      heartbeat.scheduleWithFixedDelay(
          this::renewLease, 0, NODE_LEASE_RENEW_SECONDS, TimeUnit.SECONDS);
    }
  }

  /** Starts watching the pods bound to this node, and renewing its Lease. */
  public void start() {
    startHeartbeat();
    informer =
        client
            .pods()
            .inAnyNamespace()
            .withField("spec.nodeName", node)
            .inform(
                new ResourceEventHandler<>() {
                  @Override
                  public void onAdd(Pod pod) {
                    worker.execute(() -> sync(pod));
                  }

                  @Override
                  public void onUpdate(Pod old, Pod pod) {
                    worker.execute(() -> sync(pod));
                  }

                  @Override
                  public void onDelete(Pod pod, boolean unknown) {
                    worker.execute(
                        () -> {
                          try {
                            unprepare(pod);
                          } catch (RuntimeException e) {
                            // the driver is down or failed: tried again, as a kubelet's pod
                            // clean-up does, until the devices are released
                            retryLater(pod, e.toString());
                          }
                        });
                  }
                },
                0);
  }

  /** Prepared pods by {@code namespace/name@uid}. */
  public Map<String, Prepared> prepared() {
    return Map.copyOf(prepared);
  }

  public Prepared prepared(Pod pod) {
    return prepared.get(key(pod));
  }

  /** The last error of a prepare for the pod, if any. */
  public String lastError(Pod pod) {
    return lastError.get(key(pod));
  }

  /**
   * One pod: a pod deleted and created again under its name is another pod, as the kubelet tracks
   * pods by UID (else the new one would be taken for prepared while the old one's unprepare still
   * waits for a retry).
   */
  private static String key(Pod pod) {
    return pod.getMetadata().getNamespace()
        + "/"
        + pod.getMetadata().getName()
        + "@"
        + pod.getMetadata().getUid();
  }

  private void sync(Pod seen) {
    Pod pod =
        client
            .pods()
            .inNamespace(seen.getMetadata().getNamespace())
            .withName(seen.getMetadata().getName())
            .get();
    if (pod == null || !pod.getMetadata().getUid().equals(seen.getMetadata().getUid())) {
      try {
        unprepare(seen);
      } catch (RuntimeException e) {
        retryLater(seen, e.toString());
      }
      return;
    }
    if (pod.getMetadata().getDeletionTimestamp() != null) {
      // the containers have stopped: release the devices, then let the API server remove the pod
      try {
        unprepare(pod);
        client
            .pods()
            .inNamespace(pod.getMetadata().getNamespace())
            .withName(pod.getMetadata().getName())
            .withGracePeriod(0)
            .delete();
      } catch (RuntimeException e) {
        retryLater(seen, e.toString());
      }
      return;
    }
    if (prepared.containsKey(key(pod))) {
      return;
    }
    if (pod.getSpec().getResourceClaims().isEmpty() && extendedClaim(pod) == null) {
      // no DRA claims, nothing for the kubelet's DRA manager (e.g. the driver DaemonSet's own
      // pod, which the harness creates only for the driver's node-bound token)
      return;
    }
    try {
      prepare(pod);
    } catch (RuntimeException e) {
      retryLater(seen, e.toString());
    }
  }

  private void retryLater(Pod pod, String error) {
    lastError.put(key(pod), error);
    worker.schedule(() -> sync(pod), 500, TimeUnit.MILLISECONDS);
  }

  /** As the kubelet's DRA manager: every claim must be allocated and reserved for the pod. */
  private void prepare(Pod pod) {
    String ns = pod.getMetadata().getNamespace();
    List<Claim> claims = new ArrayList<>();
    List<String> names = new ArrayList<>();
    for (PodResourceClaim entry : pod.getSpec().getResourceClaims()) {
      String name = entry.getResourceClaimName();
      if (name == null) {
        name =
            pod.getStatus() == null
                ? null
                : pod.getStatus().getResourceClaimStatuses().stream()
                    .filter(s -> s.getName().equals(entry.getName()))
                    .map(PodResourceClaimStatus::getResourceClaimName)
                    .findFirst()
                    .orElse(null);
      }
      if (name == null) {
        throw new IllegalStateException("no claim name yet for entry " + entry.getName());
      }
      names.add(name);
    }
    // as the kubelet (DRAExtendedResource): the scheduler's claim for extended resources
    if (extendedClaim(pod) != null) {
      names.add(extendedClaim(pod));
    }
    for (String name : names) {
      ResourceClaim claim =
          client.resources(ResourceClaim.class).inNamespace(ns).withName(name).get();
      if (claim == null || claim.getStatus() == null || claim.getStatus().getAllocation() == null) {
        throw new IllegalStateException("claim " + name + " is not allocated");
      }
      // as the kubelet with DRAWorkloadResourceClaims: reserved for the pod or, by name, its
      // PodGroup (a pod knows its group's name only)
      Object group =
          pod.getSpec().getAdditionalProperties().get("schedulingGroup") instanceof Map<?, ?> g
              ? g.get("podGroupName")
              : null;
      boolean reserved =
          claim.getStatus().getReservedFor().stream()
              .anyMatch(
                  r ->
                      pod.getMetadata().getUid().equals(r.getUid())
                          || ("scheduling.k8s.io".equals(r.getApiGroup())
                              && "podgroups".equals(r.getResource())
                              && r.getName().equals(group)));
      if (!reserved) {
        throw new IllegalStateException("claim " + name + " is not reserved for the pod");
      }
      boolean ours =
          claim.getStatus().getAllocation().getDevices().getResults().stream()
              .map(DeviceRequestAllocationResult::getDriver)
              .anyMatch(driver::equals);
      if (ours) {
        claims.add(
            Claim.newBuilder()
                .setNamespace(ns)
                .setName(name)
                .setUid(claim.getMetadata().getUid())
                .build());
      }
    }
    List<String> cdiIds = new ArrayList<>();
    if (!claims.isEmpty()) {
      claimCache.put(key(pod), List.copyOf(claims));
      NodePrepareResourcesResponse response =
          DRAPluginGrpc.newBlockingStub(dra)
              .withDeadlineAfter(30, TimeUnit.SECONDS)
              .nodePrepareResources(
                  NodePrepareResourcesRequest.newBuilder().addAllClaims(claims).build());
      for (Claim c : claims) {
        NodePrepareResourceResponse r = response.getClaimsMap().get(c.getUid());
        if (r == null || !r.getError().isEmpty()) {
          throw new IllegalStateException(
              "prepare of " + c.getName() + " failed: " + (r == null ? "no entry" : r.getError()));
        }
        r.getDevicesList().forEach(d -> cdiIds.addAll(d.getCdiDeviceIdsList()));
      }
    }
    prepared.put(key(pod), new Prepared(key(pod), claims, cdiIds));
    lastError.remove(key(pod));
  }

  /** The claim named in {@code status.extendedResourceClaimStatus}, or null. */
  private static String extendedClaim(Pod pod) {
    return pod.getStatus() == null || pod.getStatus().getExtendedResourceClaimStatus() == null
        ? null
        : pod.getStatus().getExtendedResourceClaimStatus().getResourceClaimName();
  }

  private void unprepare(Pod pod) {
    List<Claim> cached = claimCache.get(key(pod));
    if (cached == null || cached.isEmpty()) {
      forget(pod);
      return;
    }
    // as the kubelet's claim cache: a claim stays prepared while another pod here still uses it
    List<Claim> unused =
        cached.stream()
            .filter(
                c ->
                    claimCache.entrySet().stream()
                        .filter(e -> !e.getKey().equals(key(pod)))
                        .noneMatch(
                            e ->
                                e.getValue().stream().anyMatch(o -> o.getUid().equals(c.getUid()))))
            .toList();
    if (unused.isEmpty()) {
      forget(pod);
      return;
    }
    NodeUnprepareResourcesResponse response =
        DRAPluginGrpc.newBlockingStub(dra)
            .withDeadlineAfter(30, TimeUnit.SECONDS)
            .nodeUnprepareResources(
                NodeUnprepareResourcesRequest.newBuilder().addAllClaims(unused).build());
    for (Claim c : unused) {
      var r = response.getClaimsMap().get(c.getUid());
      if (r == null || !r.getError().isEmpty()) {
        throw new IllegalStateException(
            "unprepare of " + c.getName() + " failed: " + (r == null ? "no entry" : r.getError()));
      }
    }
    forget(pod);
  }

  private void forget(Pod pod) {
    prepared.remove(key(pod));
    claimCache.remove(key(pod));
  }

  /** The driver's latest health report, by device name (the kubelet's health cache). */
  public Map<String, DeviceHealth> deviceHealth() {
    return health;
  }

  /**
   * Opens the health stream on the current DRA channel. When it ends, the health is forgotten and
   * the stream reopened a second later (the kubelet: cache cleared, retry after 5 s).
   */
  private void watchHealth() {
    ManagedChannel channel = dra;
    if (closed || channel == null) {
      return;
    }
    DRAResourceHealthGrpc.newStub(channel)
        .nodeWatchResources(
            NodeWatchResourcesRequest.getDefaultInstance(),
            new StreamObserver<>() {
              @Override
              public void onNext(NodeWatchResourcesResponse r) {
                // each message is the complete list
                health =
                    r.getDevicesList().stream()
                        .collect(
                            java.util.stream.Collectors.toUnmodifiableMap(
                                d -> d.getDevice().getDeviceName(), d -> d));
              }

              @Override
              public void onError(Throwable t) {
                ended();
              }

              @Override
              public void onCompleted() {
                ended();
              }

              private void ended() {
                health = Map.of();
                try {
                  worker.schedule(TestKubelet.this::watchHealth, 1, TimeUnit.SECONDS);
                } catch (java.util.concurrent.RejectedExecutionException e) {
                  // closed
                }
              }
            });
  }

  /**
   * The kubelet's node lease heartbeat: the Lease {@code kube-node-lease/<node>}, owned by the Node
   * (so it goes with it), created when missing and its renew time set to now. A failure is retried
   * at the next beat, as the kubelet does.
   */
  private void renewLease() {
    try {
      var now = java.time.ZonedDateTime.now(java.time.ZoneOffset.UTC);
      var leases = client.leases().inNamespace(NODE_LEASE_NAMESPACE);
      var lease = leases.withName(node).get();
      if (lease != null) {
        lease.getSpec().setRenewTime(now);
        leases.resource(lease).update();
        return;
      }
      var n = client.nodes().withName(node).get();
      if (n == null) {
        return;
      }
      leases
          .resource(
              new io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder()
                  .withNewMetadata()
                  .withName(node)
                  .withNamespace(NODE_LEASE_NAMESPACE)
                  .addNewOwnerReference()
                  .withApiVersion("v1")
                  .withKind("Node")
                  .withName(node)
                  .withUid(n.getMetadata().getUid())
                  .endOwnerReference()
                  .endMetadata()
                  .withNewSpec()
                  .withHolderIdentity(node)
                  .withLeaseDurationSeconds(NODE_LEASE_SECONDS)
                  .withRenewTime(now)
                  .endSpec()
                  .build())
          .create();
    } catch (RuntimeException e) {
      lastError.put("lease", e.toString());
    }
  }

  /** Marks the pod Running (as after its containers started). */
  public void markRunning(Pod pod) {
    client
        .pods()
        .inNamespace(pod.getMetadata().getNamespace())
        .withName(pod.getMetadata().getName())
        .editStatus(
            p -> {
              p.getStatus().setPhase("Running");
              return p;
            });
  }

  @Override
  public void close() {
    closed = true;
    heartbeat.shutdownNow();
    if (informer != null) {
      informer.close();
    }
    worker.shutdownNow();
    if (dra != null) {
      dra.shutdownNow();
    }
    loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
  }
}
