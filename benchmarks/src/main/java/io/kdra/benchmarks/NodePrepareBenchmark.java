package io.kdra.benchmarks;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatus;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.kdra.devicedriver.discovery.Inventory;
import io.kdra.devicedriver.discovery.SimulatedBackend;
import io.kdra.devicedriver.kubelet.dra.v1.Claim;
import io.kdra.devicedriver.kubelet.dra.v1.DRAPluginGrpc;
import io.kdra.devicedriver.kubelet.dra.v1.NodePrepareResourcesRequest;
import io.kdra.devicedriver.kubelet.dra.v1.NodeUnprepareResourcesRequest;
import io.kdra.devicedriver.plugin.KubeletPluginServer;
import io.kdra.devicedriver.plugin.RegistrationState;
import io.kdra.devicedriver.prepare.CdiSpecStore;
import io.kdra.devicedriver.prepare.CheckpointStore;
import io.kdra.devicedriver.prepare.ClaimReader;
import io.kdra.devicedriver.prepare.ClaimTelemetry;
import io.kdra.devicedriver.prepare.DeviceDriver;
import io.kdra.devicedriver.prepare.PreparePlanner;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.unix.DomainSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * NodePrepareResources latency as the kubelet sees it: a gRPC v1 call over the unix socket to the
 * real {@link KubeletPluginServer} and {@link DeviceDriver}, simulated backend, CDI spec and
 * checkpoint written with fsync into a directory on disk. The ResourceClaim comes from an in-memory
 * reader, so API-server latency is excluded (it is the caller's network, not ours).
 *
 * <p>Not JMH: what matters is the distribution of single calls (p50/p99) and of concurrent bursts,
 * which a plain timed loop reports directly.
 *
 * <pre>java -cp benchmarks/target/benchmarks.jar io.kdra.benchmarks.NodePrepareBenchmark [dir]
 * </pre>
 */
public final class NodePrepareBenchmark {
  private static final String DRIVER = "gpu.kdra.io";
  private static final String NODE = "bench-node";

  public static void main(String[] args) throws Exception {
    Path dir = Files.createTempDirectory(Path.of(args.length > 0 ? args[0] : "target"), "prep");
    Map<String, ResourceClaim> claims = new ConcurrentHashMap<>();
    ClaimReader reader = (ns, name) -> Optional.ofNullable(claims.get(name));
    Inventory inventory = new SimulatedBackend(dir.resolve("none.yaml")).discover();
    DeviceDriver driver =
        new DeviceDriver(
            new PreparePlanner(DRIVER, NODE),
            reader,
            () -> inventory,
            new CdiSpecStore(dir.resolve("cdi")),
            CheckpointStore.open(dir.resolve("plugins/checkpoint.json"), Clock.systemUTC()),
            ClaimTelemetry.NONE,
            Clock.systemUTC(),
            8);
    KubeletPluginServer server =
        new KubeletPluginServer(
            new KubeletPluginServer.Settings(
                DRIVER, dir.resolve("registry"), dir.resolve("plugins"), false),
            driver,
            new RegistrationState());
    server.start();
    EpollEventLoopGroup group = new EpollEventLoopGroup(2);
    ManagedChannel channel =
        NettyChannelBuilder.forAddress(new DomainSocketAddress(server.draSocket().toString()))
            .eventLoopGroup(group)
            .channelType(EpollDomainSocketChannel.class)
            .usePlaintext()
            .build();
    var stub = DRAPluginGrpc.newBlockingStub(channel);

    int[] counter = {0};
    Supplier<Claim> newClaim =
        () -> {
          String name = "c" + (counter[0]++);
          claims.put(name, claim(name, "gpu-" + (counter[0] % 8)));
          return Claim.newBuilder()
              .setNamespace("default")
              .setName(name)
              .setUid("uid-" + name)
              .build();
        };

    // warm-up: JIT, connection, file system
    for (int i = 0; i < 300; i++) {
      Claim c = newClaim.get();
      prepare(stub, c);
      unprepare(stub, c);
    }

    int n = 1000;
    long[] prep = new long[n];
    long[] unprep = new long[n];
    long[] repeat = new long[n];
    for (int i = 0; i < n; i++) {
      Claim c = newClaim.get();
      long t0 = System.nanoTime();
      prepare(stub, c);
      long t1 = System.nanoTime();
      prepare(stub, c); // the kubelet's retry: answered from the checkpoint
      long t2 = System.nanoTime();
      unprepare(stub, c);
      long t3 = System.nanoTime();
      prep[i] = t1 - t0;
      repeat[i] = t2 - t1;
      unprep[i] = t3 - t2;
    }
    report("prepare, 1 claim (new)", prep);
    report("prepare, 1 claim (repeat)", repeat);
    report("unprepare, 1 claim", unprep);

    // 64 pods at once, one claim each: 64 concurrent kubelet calls
    ExecutorService pods = Executors.newFixedThreadPool(64);
    int rounds = 30;
    long[] burstCalls = new long[rounds * 64];
    long[] burstWall = new long[rounds];
    for (int r = 0; r < rounds; r++) {
      List<Claim> batch = new ArrayList<>();
      for (int i = 0; i < 64; i++) {
        batch.add(newClaim.get());
      }
      long start = System.nanoTime();
      List<Future<Long>> futures = new ArrayList<>();
      for (Claim c : batch) {
        futures.add(
            pods.submit(
                () -> {
                  long t = System.nanoTime();
                  prepare(stub, c);
                  return System.nanoTime() - t;
                }));
      }
      for (int i = 0; i < 64; i++) {
        burstCalls[r * 64 + i] = futures.get(i).get();
      }
      burstWall[r] = System.nanoTime() - start;
      for (Claim c : batch) {
        unprepare(stub, c);
      }
    }
    report("prepare, 64 concurrent calls (per call)", burstCalls);
    report("prepare, 64 concurrent calls (whole burst)", burstWall);

    pods.shutdown();
    channel.shutdownNow();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    server.close();
    driver.close();
  }

  private static void prepare(DRAPluginGrpc.DRAPluginBlockingStub stub, Claim c) {
    var r =
        stub.nodePrepareResources(NodePrepareResourcesRequest.newBuilder().addClaims(c).build());
    String error = r.getClaimsOrThrow(c.getUid()).getError();
    if (!error.isEmpty()) {
      throw new IllegalStateException(error);
    }
  }

  private static void unprepare(DRAPluginGrpc.DRAPluginBlockingStub stub, Claim c) {
    stub.nodeUnprepareResources(NodeUnprepareResourcesRequest.newBuilder().addClaims(c).build());
  }

  private static ResourceClaim claim(String name, String device) {
    DeviceRequestAllocationResult r = new DeviceRequestAllocationResult();
    r.setRequest("gpu");
    r.setDriver(DRIVER);
    r.setPool(NODE);
    r.setDevice(device);
    DeviceAllocationResult devices = new DeviceAllocationResult();
    devices.setResults(List.of(r));
    AllocationResult allocation = new AllocationResult();
    allocation.setDevices(devices);
    ResourceClaimStatus status = new ResourceClaimStatus();
    status.setAllocation(allocation);
    ResourceClaim claim = new ResourceClaim();
    ObjectMeta meta = new ObjectMeta();
    meta.setName(name);
    meta.setNamespace("default");
    meta.setUid("uid-" + name);
    claim.setMetadata(meta);
    claim.setStatus(status);
    return claim;
  }

  private static void report(String what, long[] nanos) {
    long[] s = nanos.clone();
    Arrays.sort(s);
    System.out.printf(
        "%-45s n=%5d  p50=%7.2f ms  p90=%7.2f ms  p99=%7.2f ms  max=%7.2f ms%n",
        what, s.length, ms(s, 0.50), ms(s, 0.90), ms(s, 0.99), s[s.length - 1] / 1e6);
  }

  private static double ms(long[] sorted, double q) {
    return sorted[Math.min(sorted.length - 1, (int) Math.ceil(q * sorted.length) - 1)] / 1e6;
  }
}
