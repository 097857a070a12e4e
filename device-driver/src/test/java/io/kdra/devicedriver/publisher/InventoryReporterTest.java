package io.kdra.devicedriver.publisher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.kdra.devicedriver.discovery.Inventory;
import io.kdra.devicedriver.discovery.NodeDevice;
import io.kdra.devicedriver.testing.Inventories;
import io.kdra.inventory.v1.AttributeValue;
import io.kdra.inventory.v1.Health;
import io.kdra.inventory.v1.InventoryGrpc;
import io.kdra.inventory.v1.InventorySnapshot;
import io.kdra.inventory.v1.ReportAck;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The reporter against a fake slice-publisher on a local port. */
class InventoryReporterTest {
  @TempDir Path dir;
  private final BlockingQueue<InventorySnapshot> received = new LinkedBlockingQueue<>();
  private final List<String> tokens = new CopyOnWriteArrayList<>();
  private final List<StreamObserver<ReportAck>> streams = new CopyOnWriteArrayList<>();

  /** Off: the publisher takes every snapshot and answers none, as one frozen (SIGSTOP) would. */
  private volatile boolean acking = true;

  /** A token the publisher refuses (UNAUTHENTICATED), as an expired one; none when null. */
  private volatile String refusedToken;

  private Server server;
  private InventoryReporter reporter;

  private int startPublisher(int port) throws Exception {
    ServerServiceDefinition service =
        ServerServiceDefinition.builder(InventoryGrpc.getServiceDescriptor())
            .addMethod(
                InventoryGrpc.getReportMethod(),
                ServerCalls.asyncBidiStreamingCall(
                    acks -> {
                      streams.add(acks);
                      return new StreamObserver<InventorySnapshot>() {
                        @Override
                        public void onNext(InventorySnapshot s) {
                          received.add(s);
                          if (!acking) {
                            return;
                          }
                          acks.onNext(
                              ReportAck.newBuilder()
                                  .setSequence(s.getSequence())
                                  .setAccepted(true)
                                  .build());
                        }

                        @Override
                        public void onError(Throwable t) {}

                        @Override
                        public void onCompleted() {
                          acks.onCompleted();
                        }
                      };
                    }))
            .build();
    ServerInterceptor auth =
        new ServerInterceptor() {
          @Override
          public <Q, R> ServerCall.Listener<Q> interceptCall(
              ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
            String token = String.valueOf(headers.get(InventoryReporter.AUTHORIZATION));
            tokens.add(token);
            if (token.equals(refusedToken)) {
              call.close(io.grpc.Status.UNAUTHENTICATED.withDescription("expired"), new Metadata());
              return new ServerCall.Listener<>() {};
            }
            return Contexts.interceptCall(io.grpc.Context.current(), call, headers, next);
          }
        };
    server =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port))
            .addService(ServerInterceptors.intercept(service, auth))
            .build()
            .start();
    return server.getPort();
  }

  @AfterEach
  void stop() {
    if (reporter != null) {
      reporter.close();
    }
    if (server != null) {
      server.shutdownNow();
    }
  }

  private InventoryReporter reporter(int port) throws Exception {
    Files.writeString(dir.resolve("token"), "secret-token\n");
    return new InventoryReporter(
        InventoryReporter.Settings.plainText(
            "gpu.kdra.io",
            "node-a",
            "127.0.0.1:" + port,
            dir.resolve("token"),
            Duration.ofMillis(50),
            Duration.ofMillis(200),
            Duration.ofMinutes(10)),
        Clock.fixed(Instant.ofEpochMilli(1000), ZoneOffset.UTC));
  }

  @Test
  void sendsASnapshotOnConnectAndOnEveryChangeWithTheToken() throws Exception {
    int port = startPublisher(0);
    reporter = reporter(port);
    reporter.start(Inventories.gpus(2));

    InventorySnapshot first = received.poll(60, TimeUnit.SECONDS);
    assertThat(first).isNotNull();
    assertThat(first.getDriver()).isEqualTo("gpu.kdra.io");
    assertThat(first.getNodeName()).isEqualTo("node-a");
    assertThat(first.getSequence()).isEqualTo(1001);
    assertThat(first.getDevicesList())
        .extracting(d -> d.getName())
        .containsExactly("gpu-0", "gpu-1");
    assertThat(first.getDevices(1).getAttributesOrThrow("index"))
        .isEqualTo(AttributeValue.newBuilder().setInt(1).build());
    assertThat(first.getDevices(1).getCapacityOrThrow("memory")).isEqualTo("80Gi");
    assertThat(tokens).containsExactly("Bearer secret-token");

    Inventory changed =
        new Inventory(
            List.of(
                Inventories.gpus(2).devices().get(0),
                Inventories.gpus(2)
                    .devices()
                    .get(1)
                    .withHealth(NodeDevice.Health.UNHEALTHY, "XID 79")),
            List.of(),
            List.of());
    reporter.report(changed);
    InventorySnapshot second = received.poll(60, TimeUnit.SECONDS);
    assertThat(second.getSequence()).isEqualTo(1002);
    assertThat(second.getDevices(1).getHealth()).isEqualTo(Health.UNHEALTHY);
    assertThat(second.getDevices(1).getHealthMessage()).isEqualTo("XID 79");
    awaitConnected(true);
  }

  @Test
  void theNodeOperationsTheDevicesNeedNotHaveGoWithEverySnapshot() throws Exception {
    Files.writeString(dir.resolve("token"), "secret-token\n");
    reporter =
        new InventoryReporter(
            new InventoryReporter.Settings(
                "gpu.kdra.io",
                "node-a",
                "127.0.0.1:" + startPublisher(0),
                dir.resolve("token"),
                Duration.ofMillis(50),
                Duration.ofMillis(200),
                Duration.ofMinutes(10),
                Optional.empty(),
                InventoryReporter.DEFAULT_ACK_TIMEOUT,
                List.of("*")),
            Clock.systemUTC());
    reporter.start(Inventories.gpus(1));

    InventorySnapshot first = received.poll(60, TimeUnit.SECONDS);
    assertThat(first).isNotNull();
    assertThat(first.getSkipNodeOperationsList()).containsExactly("*");
    reporter.report(Inventories.gpus(2));
    InventorySnapshot second = received.poll(60, TimeUnit.SECONDS);
    assertThat(second.getSkipNodeOperationsList()).containsExactly("*");
  }

  @Test
  void snapshotsSayNothingOfNodeOperationsByDefault() throws Exception {
    reporter = reporter(startPublisher(0));
    reporter.start(Inventories.gpus(1));
    InventorySnapshot first = received.poll(60, TimeUnit.SECONDS);
    assertThat(first).isNotNull();
    assertThat(first.getSkipNodeOperationsList()).isEmpty();
  }

  @Test
  void aDeclarationTheApiServerWouldRefuseStopsTheDriverAtStart() {
    assertThatThrownBy(
            () ->
                new InventoryReporter.Settings(
                    "gpu.kdra.io",
                    "node-a",
                    "127.0.0.1:1",
                    dir.resolve("token"),
                    Duration.ofMillis(50),
                    Duration.ofMillis(200),
                    Duration.ofMinutes(10),
                    Optional.empty(),
                    InventoryReporter.DEFAULT_ACK_TIMEOUT,
                    List.of("NodePrepareResources")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("kdra.device-driver.skip-node-operations")
        .hasMessageContaining("NodePrepareResources cannot be skipped");
  }

  @Test
  void aPublisherThatStopsAnsweringIsLeftForANewConnection() throws Exception {
    Files.writeString(dir.resolve("token"), "secret-token\n");
    reporter =
        new InventoryReporter(
            new InventoryReporter.Settings(
                "gpu.kdra.io",
                "node-a",
                "127.0.0.1:" + startPublisher(0),
                dir.resolve("token"),
                Duration.ofMillis(50),
                Duration.ofMillis(200),
                Duration.ofMillis(200),
                Optional.empty(),
                Duration.ofMillis(500)),
            Clock.systemUTC());
    reporter.start(Inventories.gpus(1));
    awaitConnected(true);
    assertThat(streams).hasSize(1);

    acking = false;
    // its heartbeats go unanswered: the stream is given up and another one opened
    awaitConnected(false);
    assertThat(reporter.lastError()).contains("no acknowledgement");
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> assertThat(streams.size()).as("streams opened").isGreaterThanOrEqualTo(2));

    acking = true;
    awaitConnected(true);
  }

  @Test
  void reconnectsWithBackoffResendingTheLatestSnapshotWithTheTokenReadAgain() throws Exception {
    int port = startPublisher(0);
    reporter = reporter(port);
    reporter.start(Inventories.gpus(1));
    assertThat(received.poll(60, TimeUnit.SECONDS)).isNotNull();
    awaitConnected(true);

    server.shutdownNow();
    server.awaitTermination(5, TimeUnit.SECONDS);
    awaitConnected(false);
    assertThat(reporter.lastError()).isNotEmpty();
    // the kubelet rotated the projected token meanwhile, and the old one expired: a connect
    // attempt that read the token before the rotation is refused, and the next one reads it again
    // (without the refusal such an attempt may legitimately land with the old, still valid token)
    Files.writeString(dir.resolve("token"), "rotated-token\n");
    refusedToken = "Bearer secret-token";

    startPublisher(port);
    InventorySnapshot again = received.poll(60, TimeUnit.SECONDS);
    assertThat(again).isNotNull();
    assertThat(again.getSequence()).isGreaterThan(1001);
    assertThat(again.getDevicesCount()).isEqualTo(1);
    assertThat(tokens).contains("Bearer rotated-token");
    awaitConnected(true);
  }

  @Test
  void everySnapshotSaysHowOldItsDiscoveryIsAndHowOftenDiscoveryRuns() throws Exception {
    int port = startPublisher(0);
    Files.writeString(dir.resolve("token"), "secret-token\n");
    java.util.concurrent.atomic.AtomicReference<java.util.Optional<Instant>> discovered =
        new java.util.concurrent.atomic.AtomicReference<>(java.util.Optional.empty());
    reporter =
        new InventoryReporter(
            InventoryReporter.Settings.plainText(
                "gpu.kdra.io",
                "node-a",
                "127.0.0.1:" + port,
                dir.resolve("token"),
                Duration.ofMillis(50),
                Duration.ofMillis(200),
                Duration.ofMinutes(10)),
            Clock.fixed(Instant.ofEpochMilli(100_000), ZoneOffset.UTC),
            new InventoryReporter.Discovery(Duration.ofSeconds(10), discovered::get));
    reporter.start(Inventories.gpus(1));

    InventorySnapshot beforeAnyPass = received.poll(60, TimeUnit.SECONDS);
    assertThat(beforeAnyPass.hasDiscoveryAgeMillis()).isFalse();
    assertThat(beforeAnyPass.getDiscoveryIntervalMillis()).isEqualTo(10_000);

    discovered.set(java.util.Optional.of(Instant.ofEpochMilli(40_000)));
    reporter.report(Inventories.gpus(2));
    InventorySnapshot later = received.poll(60, TimeUnit.SECONDS);
    assertThat(later.getDiscoveryAgeMillis()).isEqualTo(60_000);
    assertThat(later.getDiscoveryIntervalMillis()).isEqualTo(10_000);
  }

  @Test
  void withoutADiscoverySourceTheSnapshotSaysNothingOfIt() throws Exception {
    int port = startPublisher(0);
    reporter = reporter(port);
    reporter.start(Inventories.gpus(1));
    InventorySnapshot s = received.poll(60, TimeUnit.SECONDS);
    assertThat(s.hasDiscoveryAgeMillis()).isFalse();
    assertThat(s.getDiscoveryIntervalMillis()).isZero();
  }

  private void awaitConnected(boolean expected) {
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(reporter.connected()).isEqualTo(expected));
  }
}
