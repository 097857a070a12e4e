package io.kdra.devicedriver.plugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.Descriptors.Descriptor;
import io.kdra.devicedriver.discovery.InventoryWatcher;
import io.kdra.devicedriver.discovery.SimulatedBackend;
import io.kdra.devicedriver.health.HealthReporting;
import io.kdra.devicedriver.health.HealthStreams;
import io.kdra.devicedriver.kubelet.drahealth.v1alpha1.DRAResourceHealthGrpc;
import io.kdra.devicedriver.kubelet.drahealth.v1alpha1.DeviceHealth;
import io.kdra.devicedriver.kubelet.drahealth.v1alpha1.DeviceIdentifier;
import io.kdra.devicedriver.kubelet.drahealth.v1alpha1.HealthStatus;
import io.kdra.devicedriver.kubelet.drahealth.v1alpha1.NodeWatchResourcesResponse;
import io.kdra.devicedriver.testing.TestKubelet;
import io.kdra.devicedriver.testing.TestKubelet.HealthWatch;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The device-health stream (v1alpha1.DRAResourceHealth/NodeWatchResources) over the real DRA
 * socket, fed by discovery of a simulated inventory file, with a test client playing the kubelet.
 */
class DraHealthServiceTest {
  private static final String HEALTHY =
      """
      devices:
      - name: gpu-0
      - name: gpu-1
      """;
  private static final String GPU1_UNHEALTHY =
      """
      devices:
      - name: gpu-0
      - name: gpu-1
        health: Unhealthy
        healthMessage: "XID 79: GPU has fallen off the bus"
      """;

  @TempDir Path dir;
  private Path inventoryFile;
  private Instant firstPass;
  private InventoryWatcher inventory;
  private HealthStreams health;
  private KubeletPluginServer server;
  private TestKubelet kubelet;

  @BeforeEach
  void start() throws Exception {
    inventoryFile = dir.resolve("inventory.yaml");
    Files.writeString(inventoryFile, HEALTHY);
    // Passes are run by the test (refresh), not by a timer: each step is then deterministic.
    inventory = new InventoryWatcher(new SimulatedBackend(inventoryFile));
    firstPass = Instant.now();
    inventory.refresh();
    health = new HealthStreams(HealthReporting.forDiscoveryEvery("node-a", Duration.ofSeconds(10)));
    inventory.onPass(health::onPass);
    server =
        new KubeletPluginServer(
            new KubeletPluginServer.Settings(
                "gpu.kdra.io", dir.resolve("registry"), dir.resolve("plugins"), false),
            new KubeletPluginServerTest.RecordingPlugin(),
            new RegistrationState(),
            health);
    server.start();
    kubelet = new TestKubelet();
  }

  @AfterEach
  void stop() {
    kubelet.close();
    server.close();
    inventory.close();
  }

  @Test
  void streamsTheCurrentHealthThenEveryChangeToEveryStream() throws Exception {
    HealthWatch first = kubelet.watchHealth(server.draSocket());
    NodeWatchResourcesResponse initial = first.next();
    assertThat(states(initial))
        .containsExactly(
            Map.entry("gpu-0", HealthStatus.HEALTHY), Map.entry("gpu-1", HealthStatus.HEALTHY));
    assertThat(initial.getDevicesList())
        .allSatisfy(
            d -> {
              assertThat(d.getDevice().getPoolName()).isEqualTo("node-a");
              assertThat(d.getHealthCheckTimeoutSeconds()).isEqualTo(40);
              assertThat(d.getLastUpdatedTime()).isGreaterThanOrEqualTo(firstPass.getEpochSecond());
              assertThat(d.getMessage()).isEmpty();
            });
    HealthWatch second = kubelet.watchHealth(server.draSocket()); // e.g. a kubelet reconnect
    assertThat(states(second.next())).isEqualTo(states(initial));

    rewrite(GPU1_UNHEALTHY);
    for (HealthWatch w : List.of(first, second)) {
      NodeWatchResourcesResponse update = w.next();
      assertThat(states(update))
          .containsExactly(
              Map.entry("gpu-0", HealthStatus.HEALTHY), Map.entry("gpu-1", HealthStatus.UNHEALTHY));
      assertThat(update.getDevices(1).getMessage()).isEqualTo("XID 79: GPU has fallen off the bus");
    }

    first.cancel();
    assertThat(first.end().error()).hasMessageContaining("CANCELLED");
    await().atMost(Duration.ofMinutes(2)).until(() -> health.streams() == 1);

    HealthWatch reopened = kubelet.watchHealth(server.draSocket());
    assertThat(states(reopened.next())).containsEntry("gpu-1", HealthStatus.UNHEALTHY);
    assertThat(health.streams()).isEqualTo(2);

    rewrite("devices: [{name: gpu-0, colour: red}]"); // discovery now fails
    for (HealthWatch w : List.of(second, reopened)) {
      NodeWatchResourcesResponse unknown = w.next();
      assertThat(states(unknown))
          .containsExactly(
              Map.entry("gpu-0", HealthStatus.UNKNOWN), Map.entry("gpu-1", HealthStatus.UNKNOWN));
      assertThat(unknown.getDevices(0).getMessage())
          .startsWith("discovery failed: ")
          .contains("colour: unknown field");
    }
  }

  @Test
  void v1AndV1alpha1StreamsGetTheSameReports() throws Exception {
    HealthWatch v1 = kubelet.watchHealthV1(server.draSocket());
    HealthWatch v1alpha1 = kubelet.watchHealth(server.draSocket());
    assertThat(v1.next()).isEqualTo(v1alpha1.next());
    assertThat(health.streams()).isEqualTo(2);

    rewrite(GPU1_UNHEALTHY);
    NodeWatchResourcesResponse update = v1.next();
    assertThat(states(update)).containsEntry("gpu-1", HealthStatus.UNHEALTHY);
    assertThat(update).isEqualTo(v1alpha1.next());

    v1.cancel();
    await().atMost(Duration.ofMinutes(2)).until(() -> health.streams() == 1);
    server.close();
    assertThat(v1alpha1.end().error()).isNull();
  }

  @Test
  void unchangedPassesSendNothingUntilTheHeartbeat() throws Exception {
    HealthWatch w = kubelet.watchHealth(server.draSocket());
    w.next();
    inventory.refresh(); // checked again, nothing changed, heartbeat (13 s) not due
    rewrite(GPU1_UNHEALTHY);
    // the next message is the change, not a copy of the unchanged state
    assertThat(states(w.next())).containsEntry("gpu-1", HealthStatus.UNHEALTHY);
  }

  @Test
  void stoppingTheServerEndsTheStreamsCleanly() {
    HealthWatch w = kubelet.watchHealth(server.draSocket());
    w.next();
    server.close();
    assertThat(w.end().error()).isNull(); // EOF: the kubelet clears its cache and reconnects
    assertThat(health.streams()).isZero();
  }

  @Test
  void registrationListsBothHealthServicesNewestFirstAfterTheDraServices() {
    // A 1.37 kubelet picks the first health service of its own list that the plugin lists, and
    // opens no stream when none is listed; a 1.36 kubelet ignores the health entries.
    assertThat(kubelet.info(server.registrationSocket()).getSupportedVersionsList())
        .containsExactly(
            "v1.DRAPlugin",
            "v1beta1.DRAPlugin",
            "v1.DRAResourceHealth",
            "v1alpha1.DRAResourceHealth");
    assertThat(kubelet.register(server.registrationSocket(), List.of("v1.DRAPlugin")))
        .isEqualTo("v1.DRAPlugin");
  }

  /** The names and numbers the kubelet's v1 client uses (k8s.io/kubelet v0.37.2). */
  @Test
  void v1WireNamesAndNumbersAreUpstreams() {
    assertThat(
            io.kdra.devicedriver.kubelet.drahealth.v1.DRAResourceHealthGrpc
                .getNodeWatchResourcesMethod()
                .getFullMethodName())
        .isEqualTo("v1.DRAResourceHealth/NodeWatchResources");
    // the same messages as v1alpha1, field for field
    assertThat(
            fields(
                io.kdra.devicedriver.kubelet.drahealth.v1.NodeWatchResourcesResponse
                    .getDescriptor()))
        .isEqualTo(fields(NodeWatchResourcesResponse.getDescriptor()));
    assertThat(fields(io.kdra.devicedriver.kubelet.drahealth.v1.DeviceHealth.getDescriptor()))
        .isEqualTo(fields(DeviceHealth.getDescriptor()));
    assertThat(fields(io.kdra.devicedriver.kubelet.drahealth.v1.DeviceIdentifier.getDescriptor()))
        .isEqualTo(fields(DeviceIdentifier.getDescriptor()));
    for (HealthStatus s :
        List.of(HealthStatus.UNKNOWN, HealthStatus.HEALTHY, HealthStatus.UNHEALTHY)) {
      assertThat(
              io.kdra.devicedriver.kubelet.drahealth.v1.HealthStatus.forNumber(s.getNumber())
                  .name())
          .isEqualTo(s.name());
    }
  }

  /** The names and numbers the kubelet's v1alpha1 client uses (k8s.io/kubelet v0.36.3). */
  @Test
  void wireNamesAndNumbersAreUpstreams() {
    assertThat(DRAResourceHealthGrpc.getNodeWatchResourcesMethod().getFullMethodName())
        .isEqualTo("v1alpha1.DRAResourceHealth/NodeWatchResources");
    assertThat(fields(NodeWatchResourcesResponse.getDescriptor())).isEqualTo(Map.of("devices", 1));
    assertThat(fields(DeviceHealth.getDescriptor()))
        .isEqualTo(
            Map.of(
                "device",
                1,
                "health",
                2,
                "last_updated_time",
                3,
                "health_check_timeout_seconds",
                4,
                "message",
                5));
    assertThat(fields(DeviceIdentifier.getDescriptor()))
        .isEqualTo(Map.of("pool_name", 1, "device_name", 2));
    assertThat(HealthStatus.UNKNOWN.getNumber()).isZero();
    assertThat(HealthStatus.HEALTHY.getNumber()).isEqualTo(1);
    assertThat(HealthStatus.UNHEALTHY.getNumber()).isEqualTo(2);
  }

  private void rewrite(String yaml) throws Exception {
    FileTime old = Files.getLastModifiedTime(inventoryFile);
    Files.writeString(inventoryFile, yaml);
    // a distinct mtime, however coarse the file system's clock
    Files.setLastModifiedTime(inventoryFile, FileTime.fromMillis(old.toMillis() + 5000));
    inventory.refresh();
  }

  private static Map<String, HealthStatus> states(NodeWatchResourcesResponse r) {
    return r.getDevicesList().stream()
        .collect(
            Collectors.toMap(
                d -> d.getDevice().getDeviceName(), DeviceHealth::getHealth,
                (a, b) -> a, java.util.LinkedHashMap::new));
  }

  private static Map<String, Integer> fields(Descriptor d) {
    return d.getFields().stream().collect(Collectors.toMap(f -> f.getName(), f -> f.getNumber()));
  }
}
