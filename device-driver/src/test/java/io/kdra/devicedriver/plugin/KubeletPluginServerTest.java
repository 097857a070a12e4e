package io.kdra.devicedriver.plugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.StatusRuntimeException;
import io.kdra.devicedriver.kubelet.dra.v1.DRAPluginGrpc;
import io.kdra.devicedriver.kubelet.dra.v1.NodePrepareResourcesRequest;
import io.kdra.devicedriver.kubelet.dra.v1.NodePrepareResourcesResponse;
import io.kdra.devicedriver.kubelet.dra.v1.NodeUnprepareResourcesRequest;
import io.kdra.devicedriver.kubelet.pluginregistration.v1.PluginInfo;
import io.kdra.devicedriver.testing.TestKubelet;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The plugin server over real unix sockets, with a test client playing the kubelet. */
class KubeletPluginServerTest {
  @TempDir Path dir;
  private final RecordingPlugin plugin = new RecordingPlugin();
  private final RegistrationState registration = new RegistrationState();
  private KubeletPluginServer server;
  private TestKubelet kubelet;

  /** Prepares every claim onto device "dev-<uid>", fails uid "bad", forgets uid "lost". */
  static final class RecordingPlugin implements DraPlugin {
    final List<String> calls = new CopyOnWriteArrayList<>();
    final List<String> errors = new CopyOnWriteArrayList<>();
    volatile boolean explode;

    @Override
    public Map<String, PrepareResult> prepareResourceClaims(List<ClaimRef> claims) {
      if (explode) {
        throw new IllegalStateException("boom");
      }
      Map<String, PrepareResult> out = new LinkedHashMap<>();
      for (ClaimRef c : claims) {
        calls.add("prepare " + c);
        if (c.uid().equals("bad")) {
          out.put(c.uid(), PrepareResult.failed("status.allocation: the claim is not allocated"));
        } else if (!c.uid().equals("lost")) {
          out.put(
              c.uid(),
              PrepareResult.ok(
                  List.of(
                      new PreparedDevice(
                          List.of("gpu"),
                          "node-a",
                          "dev-" + c.uid(),
                          List.of("k8s.gpu.kdra.io/claim=" + c.uid() + "-dev")))));
        }
      }
      return out;
    }

    @Override
    public Map<String, String> unprepareResourceClaims(List<ClaimRef> claims) {
      Map<String, String> out = new LinkedHashMap<>();
      claims.forEach(
          c -> {
            calls.add("unprepare " + c);
            out.put(c.uid(), "");
          });
      return out;
    }

    @Override
    public void handleError(String message, Throwable cause) {
      errors.add(message);
    }
  }

  @BeforeEach
  void start() {
    server =
        new KubeletPluginServer(
            new KubeletPluginServer.Settings(
                "gpu.kdra.io", dir.resolve("registry"), dir.resolve("plugins"), false),
            plugin,
            registration);
    server.start();
    kubelet = new TestKubelet();
  }

  @AfterEach
  void stop() {
    kubelet.close();
    server.close();
  }

  @Test
  void socketsAreWhereTheKubeletLooks() {
    assertThat(server.registrationSocket()).isEqualTo(dir.resolve("registry/gpu.kdra.io-reg.sock"));
    assertThat(server.draSocket()).isEqualTo(dir.resolve("plugins/gpu.kdra.io/dra.sock"));
    assertThat(server.serving()).isTrue();
  }

  @Test
  void registrationHandshake() {
    PluginInfo info = kubelet.info(server.registrationSocket());
    assertThat(info.getType()).isEqualTo("DRAPlugin");
    assertThat(info.getName()).isEqualTo("gpu.kdra.io");
    assertThat(info.getEndpoint()).isEqualTo(server.draSocket().toAbsolutePath().toString());
    assertThat(info.getSupportedVersionsList())
        .containsExactly("v1.DRAPlugin", "v1beta1.DRAPlugin");

    assertThat(registration.accepted()).isFalse();
    assertThat(
            kubelet.register(
                server.registrationSocket(), List.of("v1beta1.DRAPlugin", "v1.DRAPlugin")))
        .isEqualTo("v1.DRAPlugin"); // the plugin's order wins
    assertThat(registration.accepted()).isTrue();
  }

  @Test
  void aRefusedRegistrationIsKeptAndReported() {
    assertThat(kubelet.register(server.registrationSocket(), List.of("v2.DRAPlugin"))).isNull();
    assertThat(registration.accepted()).isFalse();
    assertThat(registration.describe()).startsWith("refused: none of [v1.DRAPlugin");
    assertThat(plugin.errors).singleElement().asString().contains("refused");
  }

  @Test
  void v1PrepareAndUnprepare() {
    var stub =
        DRAPluginGrpc.newBlockingStub(kubelet.dial(server.draSocket()))
            .withDeadlineAfter(5, TimeUnit.SECONDS);
    NodePrepareResourcesResponse r =
        stub.nodePrepareResources(
            NodePrepareResourcesRequest.newBuilder()
                .addClaims(v1Claim("a"))
                .addClaims(v1Claim("bad"))
                .addClaims(v1Claim("lost"))
                .build());

    assertThat(r.getClaimsMap()).containsOnlyKeys("a", "bad", "lost");
    var a = r.getClaimsOrThrow("a");
    assertThat(a.getError()).isEmpty();
    assertThat(a.getDevices(0).getDeviceName()).isEqualTo("dev-a");
    assertThat(a.getDevices(0).getPoolName()).isEqualTo("node-a");
    assertThat(a.getDevices(0).getRequestNamesList()).containsExactly("gpu");
    assertThat(a.getDevices(0).getCdiDeviceIdsList())
        .containsExactly("k8s.gpu.kdra.io/claim=a-dev");
    assertThat(a.getDevices(0).hasShareId()).isFalse();
    assertThat(r.getClaimsOrThrow("bad").getError()).contains("status.allocation");
    assertThat(r.getClaimsOrThrow("lost").getError()).startsWith("driver returned no result for");

    var u =
        stub.nodeUnprepareResources(
            NodeUnprepareResourcesRequest.newBuilder()
                .addClaims(v1Claim("a"))
                .addClaims(v1Claim("unknown"))
                .build());
    assertThat(u.getClaimsMap()).containsOnlyKeys("a", "unknown");
    assertThat(u.getClaimsOrThrow("unknown").getError()).isEmpty();
    assertThat(plugin.calls)
        .contains("prepare ns/claim-a (uid a)", "unprepare ns/claim-unknown (uid unknown)");
  }

  @Test
  void v1beta1PrepareAndUnprepare() {
    var stub =
        io.kdra.devicedriver.kubelet.dra.v1beta1.DRAPluginGrpc.newBlockingStub(
                kubelet.dial(server.draSocket()))
            .withDeadlineAfter(5, TimeUnit.SECONDS);
    var claim =
        io.kdra.devicedriver.kubelet.dra.v1beta1.Claim.newBuilder()
            .setNamespace("ns")
            .setUid("b")
            .setName("claim-b")
            .build();
    var r =
        stub.nodePrepareResources(
            io.kdra.devicedriver.kubelet.dra.v1beta1.NodePrepareResourcesRequest.newBuilder()
                .addClaims(claim)
                .build());
    assertThat(r.getClaimsOrThrow("b").getDevices(0).getCdiDeviceIdsList())
        .containsExactly("k8s.gpu.kdra.io/claim=b-dev");
    var u =
        stub.nodeUnprepareResources(
            io.kdra.devicedriver.kubelet.dra.v1beta1.NodeUnprepareResourcesRequest.newBuilder()
                .addClaims(claim)
                .build());
    assertThat(u.getClaimsOrThrow("b").getError()).isEmpty();
  }

  @Test
  void aPluginCrashIsAGrpcErrorNotAHang() {
    plugin.explode = true;
    var stub =
        DRAPluginGrpc.newBlockingStub(kubelet.dial(server.draSocket()))
            .withDeadlineAfter(5, TimeUnit.SECONDS);
    assertThatThrownBy(
            () ->
                stub.nodePrepareResources(
                    NodePrepareResourcesRequest.newBuilder().addClaims(v1Claim("a")).build()))
        .isInstanceOf(StatusRuntimeException.class)
        .hasMessageContaining("INTERNAL: v1.NodePrepareResources")
        .hasMessageContaining("boom");
  }

  @Test
  void replacesStaleSocketsAndRemovesThemOnClose() throws Exception {
    server.close();
    Files.writeString(server.draSocket(), "stale");
    Files.writeString(server.registrationSocket(), "stale");
    server.start();
    assertThat(kubelet.info(server.registrationSocket()).getName()).isEqualTo("gpu.kdra.io");
    server.close();
    assertThat(server.draSocket()).doesNotExist();
    assertThat(server.registrationSocket()).doesNotExist();
    assertThat(server.serving()).isFalse();
  }

  @Test
  void aPredecessorStoppingAfterItsReplacementStartedLeavesTheReplacementsSockets() {
    KubeletPluginServer replacement = server("");
    try {
      replacement.start();
      server.close();

      assertThat(replacement.draSocket()).isEqualTo(server.draSocket()).exists();
      assertThat(replacement.registrationSocket()).exists();
      assertThat(kubelet.info(replacement.registrationSocket()).getName()).isEqualTo("gpu.kdra.io");
    } finally {
      replacement.close();
    }
    assertThat(replacement.draSocket()).doesNotExist();
    assertThat(replacement.registrationSocket()).doesNotExist();
  }

  @Test
  void perPodSocketsLetTwoInstancesServeSideBySideAndEachRemovesOnlyItsOwn() {
    server.close();
    KubeletPluginServer old = server("8a0c7c5e-old");
    KubeletPluginServer next = server("1b2d3f4a-new");
    try {
      old.start();
      next.start();
      assertThat(old.registrationSocket())
          .isEqualTo(dir.resolve("registry/gpu.kdra.io-8a0c7c5e-old-reg.sock"));
      assertThat(old.draSocket())
          .isEqualTo(dir.resolve("plugins/gpu.kdra.io/dra-8a0c7c5e-old.sock"));
      assertThat(kubelet.info(old.registrationSocket()).getEndpoint())
          .isEqualTo(old.draSocket().toString());
      assertThat(kubelet.info(next.registrationSocket()).getEndpoint())
          .isEqualTo(next.draSocket().toString());

      old.close();

      assertThat(old.registrationSocket()).doesNotExist();
      assertThat(old.draSocket()).doesNotExist();
      assertThat(next.registrationSocket()).exists();
      assertThat(next.draSocket()).exists();
      assertThat(kubelet.info(next.registrationSocket()).getName()).isEqualTo("gpu.kdra.io");
    } finally {
      old.close();
      next.close();
    }
  }

  private KubeletPluginServer server(String podUid) {
    return new KubeletPluginServer(
        new KubeletPluginServer.Settings(
            "gpu.kdra.io", dir.resolve("registry"), dir.resolve("plugins"), false, podUid),
        plugin,
        new RegistrationState());
  }

  private static io.kdra.devicedriver.kubelet.dra.v1.Claim v1Claim(String uid) {
    return io.kdra.devicedriver.kubelet.dra.v1.Claim.newBuilder()
        .setNamespace("ns")
        .setUid(uid)
        .setName("claim-" + uid)
        .build();
  }
}
