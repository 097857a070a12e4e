package io.kdra.devicedriver.plugin;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.kdra.devicedriver.kubelet.dra.v1.DRAPluginGrpc;
import io.kdra.devicedriver.kubelet.dra.v1.NodeUnprepareResourcesRequest;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.unix.DomainSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Dials the driver's own DRA socket as the kubelet does and makes the cheapest call there is, an
 * unprepare of no claims (which takes no lock and touches no claim): the liveness check's proof
 * that the socket file is there, the server accepts connections and its handlers still run. A
 * driver whose socket was deleted under it, or whose gRPC server stopped, is not live: the kubelet
 * can no longer reach it, and a restart serves the socket again. Thread-safe.
 */
public final class PluginSocketProbe implements AutoCloseable {
  private final Duration deadline;
  private final EventLoopGroup loop =
      new EpollEventLoopGroup(
          1,
          r -> {
            Thread t = new Thread(r, "plugin-socket-probe");
            t.setDaemon(true);
            return t;
          });

  /**
   * @param deadline how long the call may take
   */
  public PluginSocketProbe(Duration deadline) {
    this.deadline = deadline;
  }

  /** Why the socket does not answer; empty when it does. */
  public Optional<String> check(Path socket) {
    ManagedChannel channel =
        NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
            .eventLoopGroup(loop)
            .channelType(EpollDomainSocketChannel.class)
            .usePlaintext()
            .build();
    try {
      DRAPluginGrpc.newBlockingStub(channel)
          .withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS)
          .nodeUnprepareResources(NodeUnprepareResourcesRequest.getDefaultInstance());
      return Optional.empty();
    } catch (StatusRuntimeException e) {
      return Optional.of(
          socket
              + " does not answer ("
              + e.getStatus().getCode()
              + (e.getStatus().getDescription() == null
                  ? ""
                  : ": " + e.getStatus().getDescription())
              + "): the kubelet cannot reach the driver");
    } finally {
      channel.shutdownNow();
    }
  }

  @Override
  public void close() {
    loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
  }
}
