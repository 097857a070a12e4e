package io.kdra.slicepublisher.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.kdra.inventory.v1.AttributeValue;
import io.kdra.inventory.v1.Device;
import io.kdra.inventory.v1.InventoryGrpc;
import io.kdra.inventory.v1.InventorySnapshot;
import io.kdra.inventory.v1.ReportAck;
import io.quarkus.grpc.GrpcClient;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A test driver client over the real HTTP/2 port, against the fabric8 mock API server. */
@QuarkusTest
@WithKubernetesTestServer(crud = true)
class InventoryGrpcServiceTest {

  /** A channel to the application's own port: the driver's view. */
  @GrpcClient("inventory")
  io.grpc.Channel channel;

  @Inject KubernetesClient client;

  @BeforeEach
  void nodes() {
    for (String n : new String[] {"node-a", "node-b", "node-c"}) {
      if (client.nodes().withName(n).get() == null) {
        client
            .nodes()
            .resource(new NodeBuilder().withNewMetadata().withName(n).endMetadata().build())
            .create();
      }
    }
  }

  /** One driver stream: acks in a queue, the end in a future. */
  static final class Driver implements StreamObserver<ReportAck> {
    final BlockingQueue<ReportAck> acks = new LinkedBlockingQueue<>();
    final CompletableFuture<Throwable> end = new CompletableFuture<>();
    StreamObserver<InventorySnapshot> requests;

    @Override
    public void onNext(ReportAck ack) {
      acks.add(ack);
    }

    @Override
    public void onError(Throwable t) {
      end.complete(t);
    }

    @Override
    public void onCompleted() {
      end.complete(null);
    }

    ReportAck send(InventorySnapshot s) throws InterruptedException {
      requests.onNext(s);
      ReportAck ack = acks.poll(20, TimeUnit.SECONDS);
      assertThat(ack).as("ack for sequence %d", s.getSequence()).isNotNull();
      return ack;
    }

    Status endStatus() throws Exception {
      Throwable t = end.get(20, TimeUnit.SECONDS);
      assertThat(t).isInstanceOf(StatusRuntimeException.class);
      return ((StatusRuntimeException) t).getStatus();
    }
  }

  private Driver connect(String token) {
    Metadata md = new Metadata();
    if (token != null) {
      md.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
    }
    Driver d = new Driver();
    d.requests =
        InventoryGrpc.newStub(channel)
            .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md))
            .report(d);
    return d;
  }

  private static InventorySnapshot snapshot(String driver, String node, long seq, Device... ds) {
    return InventorySnapshot.newBuilder()
        .setDriver(driver)
        .setNodeName(node)
        .setSequence(seq)
        .addAllDevices(java.util.List.of(ds))
        .build();
  }

  private static Device gpu(String name) {
    return Device.newBuilder()
        .setName(name)
        .putAttributes("model", AttributeValue.newBuilder().setString("H100").build())
        .putCapacity("memory", "80Gi")
        .build();
  }

  private java.util.List<ResourceSlice> slicesOf(String pool) {
    return client.resources(ResourceSlice.class).list().getItems().stream()
        .filter(s -> s.getSpec().getPool().getName().equals(pool))
        .toList();
  }

  @Test
  void acceptedSnapshotIsPublished() throws Exception {
    Driver d = connect("token-for-node-a");
    ReportAck ack = d.send(snapshot("gpu.kdra.io", "node-a", 1, gpu("gpu-0"), gpu("gpu-1")));
    assertThat(ack.getAccepted()).as(ack.getError()).isTrue();
    assertThat(ack.getSequence()).isEqualTo(1);
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(
            () ->
                assertThat(slicesOf("node-a"))
                    .singleElement()
                    .satisfies(s -> assertThat(s.getSpec().getDevices()).hasSize(2)));
    d.requests.onCompleted();
  }

  @Test
  void aSnapshotForAnotherNodeIsRefused() throws Exception {
    Driver d = connect("token-for-node-a");
    d.requests.onNext(snapshot("gpu.kdra.io", "node-b", 1, gpu("gpu-0")));
    Status status = d.endStatus();
    assertThat(status.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
    assertThat(status.getDescription()).contains("\"node-a\"", "\"node-b\"");
    assertThat(slicesOf("node-b")).isEmpty();
  }

  @Test
  void aCallWithoutTokenOrWithABadOneIsUnauthenticated() throws Exception {
    Driver none = connect(null);
    none.requests.onNext(snapshot("gpu.kdra.io", "node-a", 1, gpu("gpu-0")));
    assertThat(none.endStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
    Driver bad = connect("forged");
    bad.requests.onNext(snapshot("gpu.kdra.io", "node-a", 1, gpu("gpu-0")));
    assertThat(bad.endStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
  }

  @Test
  void aBadSnapshotIsRefusedNamingDeviceAndFieldAndTheStreamGoesOn() throws Exception {
    Driver d = connect("token-for-node-b");
    Device bad = Device.newBuilder(gpu("gpu-7")).putCapacity("memory", "lots").build();
    ReportAck ack = d.send(snapshot("gpu.kdra.io", "node-b", 1, bad));
    assertThat(ack.getAccepted()).isFalse();
    assertThat(ack.getError()).contains("device \"gpu-7\": capacity \"memory\"", "\"lots\"");

    ReportAck older = d.send(snapshot("gpu.kdra.io", "node-b", 2, gpu("gpu-7")));
    assertThat(older.getAccepted()).as(older.getError()).isTrue();
    ReportAck replay = d.send(snapshot("gpu.kdra.io", "node-b", 2, gpu("gpu-7")));
    assertThat(replay.getAccepted()).isFalse();
    assertThat(replay.getError()).contains("sequence 2 is not newer than 2");
    ReportAck foreign = d.send(snapshot("nic.other.io", "node-b", 3, gpu("eth0")));
    assertThat(foreign.getAccepted()).isFalse();
    assertThat(foreign.getError()).contains("not served");
    d.requests.onCompleted();
  }

  /**
   * A driver whose stream ends (its process died) gets its devices tainted once the disconnect
   * grace (1 s in tests) has passed, so that nothing new is placed there; a new stream clears it.
   */
  @Test
  void aDriverWhoseStreamEndsIsTaintedAfterTheGraceUntilItReconnects() throws Exception {
    Driver d = connect("token-for-node-c");
    assertThat(d.send(snapshot("gpu.kdra.io", "node-c", 1, gpu("gpu-0"))).getAccepted()).isTrue();
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(() -> assertThat(taintsOf("node-c")).containsExactly(""));
    d.requests.onError(Status.CANCELLED.asRuntimeException());
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(
            () ->
                assertThat(taintsOf("node-c"))
                    .containsExactly("kdra.io/driver-unresponsive=disconnected:NoSchedule"));

    Driver again = connect("token-for-node-c");
    assertThat(again.send(snapshot("gpu.kdra.io", "node-c", 1, gpu("gpu-0"))).getAccepted())
        .isTrue();
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(() -> assertThat(taintsOf("node-c")).containsExactly(""));
    again.requests.onCompleted();
  }

  /** The driver reconnects with its renewed token; the old one no longer proves anything. */
  @Test
  void aStreamEndsWhenItsTokenExpires() throws Exception {
    long exp = java.time.Instant.now().getEpochSecond() + 2;
    String payload = "{\"exp\":" + exp + "}";
    Driver d =
        connect(
            "token-for-node-e."
                + java.util.Base64.getUrlEncoder()
                    .withoutPadding()
                    .encodeToString(payload.getBytes(java.nio.charset.StandardCharsets.UTF_8))
                + ".sig");
    d.requests.onNext(snapshot("gpu.kdra.io", "node-e", 1, gpu("gpu-0")));
    Status status = d.endStatus();
    assertThat(status.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(status.getDescription()).contains("token expired");
  }

  /** Per device of the pool, its taints as key=value:effect, "" for none. */
  private java.util.List<String> taintsOf(String pool) {
    return slicesOf(pool).stream()
        .flatMap(s -> s.getSpec().getDevices().stream())
        .map(
            d ->
                d.getTaints() == null
                    ? ""
                    : String.join(
                        ",",
                        d.getTaints().stream()
                            .map(t -> t.getKey() + "=" + t.getValue() + ":" + t.getEffect())
                            .toList()))
        .toList();
  }
}
