package io.kdra.slicepublisher.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.Attributes;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.ServerTransportFilter;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.kdra.inventory.v1.InventoryGrpc;
import io.kdra.inventory.v1.InventorySnapshot;
import io.kdra.inventory.v1.ReportAck;
import io.kdra.slicepublisher.config.InventoryConnections;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A standby refuses inventory streams as not the leader and lets go of the connection, so that the
 * driver's next attempt is a new connection, which the Service may route to the leader; and every
 * connection has a maximum age, so that connections are spread again over time.
 */
class StandbyRefusalTest {
  private final AtomicBoolean leader = new AtomicBoolean();
  private final AtomicInteger opened = new AtomicInteger();
  private final AtomicInteger closed = new AtomicInteger();
  private final AtomicInteger streams = new AtomicInteger();
  private Server server;
  private ManagedChannel channel;

  @AfterEach
  void stop() throws Exception {
    if (channel != null) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (server != null) {
      server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  /** Accepts every snapshot while this replica leads: the service behind the interceptor. */
  private final InventoryGrpc.InventoryImplBase service =
      new InventoryGrpc.InventoryImplBase() {
        @Override
        public StreamObserver<InventorySnapshot> report(StreamObserver<ReportAck> acks) {
          streams.incrementAndGet();
          return new StreamObserver<>() {
            @Override
            public void onNext(InventorySnapshot s) {
              acks.onNext(
                  ReportAck.newBuilder().setSequence(s.getSequence()).setAccepted(true).build());
            }

            @Override
            public void onError(Throwable t) {}

            @Override
            public void onCompleted() {
              acks.onCompleted();
            }
          };
        }
      };

  private void start(InventoryConnections.Limits limits) throws Exception {
    NettyServerBuilder builder =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .addService(ServerInterceptors.intercept(service, new StandbyRefusal(leader::get)))
            .addTransportFilter(
                new ServerTransportFilter() {
                  @Override
                  public Attributes transportReady(Attributes transport) {
                    opened.incrementAndGet();
                    return transport;
                  }

                  @Override
                  public void transportTerminated(Attributes transport) {
                    closed.incrementAndGet();
                  }
                });
    InventoryConnections.apply(limits, builder);
    server = builder.build().start();
    channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext().build();
  }

  /** Opens a stream and sends one snapshot; the future completes with how the stream ended. */
  private CompletableFuture<Throwable> report(CompletableFuture<ReportAck> firstAck) {
    CompletableFuture<Throwable> end = new CompletableFuture<>();
    StreamObserver<InventorySnapshot> requests =
        InventoryGrpc.newStub(channel)
            .report(
                new StreamObserver<>() {
                  @Override
                  public void onNext(ReportAck ack) {
                    firstAck.complete(ack);
                  }

                  @Override
                  public void onError(Throwable t) {
                    end.complete(t);
                  }

                  @Override
                  public void onCompleted() {
                    end.complete(null);
                  }
                });
    requests.onNext(
        InventorySnapshot.newBuilder()
            .setDriver("gpu.kdra.io")
            .setNodeName("a")
            .setSequence(1)
            .build());
    return end;
  }

  @Test
  void aStandbyRefusesAsNotTheLeaderAndClosesTheConnection() throws Exception {
    start(
        new InventoryConnections.Limits(
            Duration.ofMinutes(30), Duration.ofSeconds(10), Duration.ofSeconds(1)));

    Throwable refused = report(new CompletableFuture<>()).get(30, TimeUnit.SECONDS);

    Status status = Status.fromThrowable(refused);
    assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(status.getDescription()).contains("not the leader");
    assertThat(Status.trailersFromThrowable(refused).get(StandbyRefusal.NOT_LEADER))
        .isEqualTo("true");
    assertThat(streams.get()).as("the service never sees a standby's stream").isZero();
    // the client keeps its channel; the server closes the connection it no longer uses
    await().atMost(Duration.ofSeconds(30)).until(() -> closed.get() == 1);
    assertThat(opened.get()).isEqualTo(1);
  }

  @Test
  void theLeaderServesTheStreamAndEndsItOnlyAtTheConnectionsMaximumAge() throws Exception {
    leader.set(true);
    start(
        new InventoryConnections.Limits(
            Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofSeconds(1)));

    CompletableFuture<ReportAck> ack = new CompletableFuture<>();
    CompletableFuture<Throwable> end = report(ack);
    assertThat(ack.get(30, TimeUnit.SECONDS).getAccepted()).isTrue();

    // an open stream is not idle, but the connection's age ends it: the driver reconnects anew
    end.get(30, TimeUnit.SECONDS);
    await().atMost(Duration.ofSeconds(30)).until(() -> closed.get() == 1);
  }
}
