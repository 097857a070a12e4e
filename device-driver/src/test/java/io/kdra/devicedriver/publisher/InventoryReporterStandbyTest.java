package io.kdra.devicedriver.publisher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.Attributes;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServerTransportFilter;
import io.grpc.Status;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.kdra.devicedriver.testing.Inventories;
import io.kdra.inventory.v1.InventoryGrpc;
import io.kdra.inventory.v1.InventorySnapshot;
import io.kdra.inventory.v1.ReportAck;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A driver whose connection reached a standby publisher (kube-proxy pins a connection to one pod)
 * must not stay on it: every refused stream is retried on a new connection, which the Service may
 * route to the leader. The fake publisher here plays a standby that, like an old one, keeps the
 * connection open after refusing.
 */
class InventoryReporterStandbyTest {
  @TempDir Path dir;
  private Server server;
  private InventoryReporter reporter;
  private final AtomicInteger connections = new AtomicInteger();
  private final Set<SocketAddress> clientPorts = ConcurrentHashMap.newKeySet();

  @AfterEach
  void stop() {
    if (reporter != null) {
      reporter.close();
    }
    if (server != null) {
      server.shutdownNow();
    }
  }

  /** Refuses the first {@code refusals} streams as a standby would, then accepts. */
  private int startPublisher(int refusals) throws Exception {
    AtomicInteger calls = new AtomicInteger();
    ServerServiceDefinition service =
        ServerServiceDefinition.builder(InventoryGrpc.getServiceDescriptor())
            .addMethod(
                InventoryGrpc.getReportMethod(),
                ServerCalls.asyncBidiStreamingCall(
                    acks ->
                        new StreamObserver<InventorySnapshot>() {
                          final boolean standby = calls.incrementAndGet() <= refusals;

                          @Override
                          public void onNext(InventorySnapshot s) {
                            if (standby) {
                              Metadata trailers = new Metadata();
                              trailers.put(InventoryReporter.NOT_LEADER, "true");
                              acks.onError(
                                  Status.UNAVAILABLE
                                      .withDescription(
                                          "this slice-publisher replica is not the leader")
                                      .asRuntimeException(trailers));
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
                        }))
            .build();
    server =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .addService(service)
            .addTransportFilter(
                new ServerTransportFilter() {
                  @Override
                  public Attributes transportReady(Attributes transport) {
                    connections.incrementAndGet();
                    clientPorts.add(transport.get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
                    return transport;
                  }
                })
            .build()
            .start();
    return server.getPort();
  }

  private InventoryReporter reporter(int port, Duration initialBackoff) {
    return new InventoryReporter(
        InventoryReporter.Settings.plainText(
            "gpu.kdra.io",
            "node-a",
            "127.0.0.1:" + port,
            dir.resolve("no-token"),
            initialBackoff,
            Duration.ofMinutes(1),
            Duration.ofMinutes(10)),
        Clock.systemUTC());
  }

  @Test
  void aStandbysRefusalIsRetriedOnANewConnection() throws Exception {
    int port = startPublisher(3);
    reporter = reporter(port, Duration.ofMillis(50));
    reporter.start(Inventories.gpus(1));

    await().atMost(Duration.ofSeconds(60)).until(reporter::connected);
    // three refusals, each followed by a fresh connection: the leader is reached on the fourth
    assertThat(connections.get()).isGreaterThanOrEqualTo(4);
    assertThat(clientPorts).hasSizeGreaterThanOrEqualTo(4);
  }

  @Test
  void refusalsByStandbysAreRetriedQuicklyWithoutTheBackoffGrowing() throws Exception {
    // With the normal doubling from 200 ms, eight refusals would take 200 ms x (2^8 - 1) = 51 s
    // (capped at a minute each); standby refusals are retried after at most the initial backoff.
    int port = startPublisher(8);
    reporter = reporter(port, Duration.ofMillis(200));
    long start = System.nanoTime();
    reporter.start(Inventories.gpus(1));

    await().atMost(Duration.ofSeconds(60)).until(reporter::connected);
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(20));
    assertThat(connections.get()).isGreaterThanOrEqualTo(9);
  }
}
