package io.kdra.devicedriver.plugin;

import static io.kdra.devicedriver.testing.ClaimFixture.claim;
import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.devicedriver.kubelet.dra.v1.DRAPluginGrpc;
import io.kdra.devicedriver.kubelet.dra.v1.NodePrepareResourcesRequest;
import io.kdra.devicedriver.prepare.CdiSpecStore;
import io.kdra.devicedriver.prepare.CheckpointStore;
import io.kdra.devicedriver.prepare.ClaimTelemetry;
import io.kdra.devicedriver.prepare.DeviceDriver;
import io.kdra.devicedriver.prepare.PreparePlanner;
import io.kdra.devicedriver.testing.ClaimFixture;
import io.kdra.devicedriver.testing.FakeClaimReader;
import io.kdra.devicedriver.testing.Inventories;
import io.kdra.devicedriver.testing.TestKubelet;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Restart idempotency as the kubelet sees it: a driver is stopped after preparing, a new process
 * (new server, new driver, same checkpoint and directories) answers the repeated prepare with the
 * same CDI ids over the other API version, and its unprepare leaves no file behind.
 */
class RestartOverSocketsTest {
  @TempDir Path dir;
  private final FakeClaimReader reader = new FakeClaimReader();

  private record Node(DeviceDriver driver, KubeletPluginServer server) implements AutoCloseable {
    @Override
    public void close() {
      server.close();
      driver.close();
    }
  }

  private Node start() throws Exception {
    DeviceDriver driver =
        new DeviceDriver(
            new PreparePlanner(ClaimFixture.DRIVER, ClaimFixture.NODE),
            reader,
            () -> Inventories.gpus(4),
            new CdiSpecStore(dir.resolve("cdi")),
            CheckpointStore.open(
                dir.resolve("plugins/gpu.kdra.io/checkpoint.json"), Clock.systemUTC()),
            ClaimTelemetry.NONE,
            Clock.systemUTC(),
            4);
    driver.restore();
    KubeletPluginServer server =
        new KubeletPluginServer(
            new KubeletPluginServer.Settings(
                ClaimFixture.DRIVER, dir.resolve("registry"), dir.resolve("plugins"), true),
            driver,
            new RegistrationState());
    server.start();
    return new Node(driver, server);
  }

  private List<String> specs() throws Exception {
    try (Stream<Path> s = Files.list(dir.resolve("cdi"))) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  @Test
  void aReplacementDriverGivesTheSameAnswerAndCleansUp() throws Exception {
    ClaimFixture a = claim("a").uid("ua").result("gpu", "gpu-0").result("gpu", "gpu-1");
    ClaimFixture b = claim("b").uid("ub").result("gpu", "gpu-2");
    reader.add(a.build()).add(b.build());
    var request =
        NodePrepareResourcesRequest.newBuilder().addClaims(v1(a)).addClaims(v1(b)).build();

    List<String> idsBefore;
    try (Node first = start();
        TestKubelet kubelet = new TestKubelet()) {
      var r =
          DRAPluginGrpc.newBlockingStub(kubelet.dial(first.server().draSocket()))
              .withDeadlineAfter(5, TimeUnit.SECONDS)
              .nodePrepareResources(request);
      idsBefore =
          r.getClaimsOrThrow("ua").getDevicesList().stream()
              .flatMap(d -> d.getCdiDeviceIdsList().stream())
              .toList();
    } // stopped without unpreparing: the pods still run
    assertThat(idsBefore)
        .containsExactly("k8s.gpu.kdra.io/claim=ua-gpu-0", "k8s.gpu.kdra.io/claim=ua-gpu-1");
    Files.delete(dir.resolve("cdi/k8s.gpu.kdra.io-claim_ub.json")); // tmpfs lost it

    try (Node second = start();
        TestKubelet kubelet = new TestKubelet()) {
      assertThat(specs())
          .containsExactly("k8s.gpu.kdra.io-claim_ua.json", "k8s.gpu.kdra.io-claim_ub.json");
      var stub =
          io.kdra.devicedriver.kubelet.dra.v1beta1.DRAPluginGrpc.newBlockingStub(
                  kubelet.dial(second.server().draSocket()))
              .withDeadlineAfter(5, TimeUnit.SECONDS);
      var again =
          stub.nodePrepareResources(
              io.kdra.devicedriver.kubelet.dra.v1beta1.NodePrepareResourcesRequest.newBuilder()
                  .addClaims(v1beta1(a))
                  .addClaims(v1beta1(b))
                  .build());
      assertThat(
              again.getClaimsOrThrow("ua").getDevicesList().stream()
                  .flatMap(d -> d.getCdiDeviceIdsList().stream())
                  .toList())
          .isEqualTo(idsBefore);
      assertThat(specs()).hasSize(2);

      var u =
          stub.nodeUnprepareResources(
              io.kdra.devicedriver.kubelet.dra.v1beta1.NodeUnprepareResourcesRequest.newBuilder()
                  .addClaims(v1beta1(a))
                  .addClaims(v1beta1(b))
                  .build());
      assertThat(u.getClaimsMap()).containsOnlyKeys("ua", "ub");
      assertThat(u.getClaimsMap().values()).allSatisfy(e -> assertThat(e.getError()).isEmpty());
      assertThat(specs()).isEmpty();
    }
    assertThat(reader.reads).hasValue(2); // only the very first prepare read the claims
    assertThat(
            CheckpointStore.open(
                    dir.resolve("plugins/gpu.kdra.io/checkpoint.json"), Clock.systemUTC())
                .all())
        .isEmpty();
  }

  private static io.kdra.devicedriver.kubelet.dra.v1.Claim v1(ClaimFixture c) {
    return io.kdra.devicedriver.kubelet.dra.v1.Claim.newBuilder()
        .setNamespace(c.ref().namespace())
        .setUid(c.ref().uid())
        .setName(c.ref().name())
        .build();
  }

  private static io.kdra.devicedriver.kubelet.dra.v1beta1.Claim v1beta1(ClaimFixture c) {
    return io.kdra.devicedriver.kubelet.dra.v1beta1.Claim.newBuilder()
        .setNamespace(c.ref().namespace())
        .setUid(c.ref().uid())
        .setName(c.ref().name())
        .build();
  }
}
