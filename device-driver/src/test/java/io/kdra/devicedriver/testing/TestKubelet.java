package io.kdra.devicedriver.testing;

import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.kdra.devicedriver.kubelet.pluginregistration.v1.InfoRequest;
import io.kdra.devicedriver.kubelet.pluginregistration.v1.PluginInfo;
import io.kdra.devicedriver.kubelet.pluginregistration.v1.RegistrationGrpc;
import io.kdra.devicedriver.kubelet.pluginregistration.v1.RegistrationStatus;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.unix.DomainSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Plays the kubelet: dials unix sockets the way it does (target = the socket path, plaintext),
 * runs the plugin-watcher handshake and hands out channels to the DRA endpoint.
 */
public final class TestKubelet implements AutoCloseable {
  private final EventLoopGroup group = new EpollEventLoopGroup(1);
  private final List<ManagedChannel> channels = new ArrayList<>();

  /** A channel to a unix socket. */
  public ManagedChannel dial(Path socket) {
    ManagedChannel ch =
        NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
            .eventLoopGroup(group)
            .channelType(EpollDomainSocketChannel.class)
            .usePlaintext()
            .build();
    channels.add(ch);
    return ch;
  }

  /** GetInfo on a registration socket. */
  public PluginInfo info(Path registrationSocket) {
    return RegistrationGrpc.newBlockingStub(dial(registrationSocket))
        .withDeadlineAfter(5, TimeUnit.SECONDS)
        .getInfo(InfoRequest.getDefaultInstance());
  }

  /**
   * The kubelet's handshake: GetInfo, pick the first offered version it knows, report the outcome.
   *
   * @param known the versions this kubelet speaks, e.g. {@code v1.DRAPlugin}
   * @return the chosen version, or null when none matched (and the plugin was told so)
   */
  public String register(Path registrationSocket, List<String> known) {
    PluginInfo info = info(registrationSocket);
    String chosen = info.getSupportedVersionsList().stream()
        .filter(known::contains).findFirst().orElse(null);
    RegistrationStatus status = chosen != null
        ? RegistrationStatus.newBuilder().setPluginRegistered(true).build()
        : RegistrationStatus.newBuilder().setPluginRegistered(false)
            .setError("none of " + info.getSupportedVersionsList() + " is supported").build();
    RegistrationGrpc.newBlockingStub(dial(registrationSocket))
        .withDeadlineAfter(5, TimeUnit.SECONDS)
        .notifyRegistrationStatus(status);
    return chosen;
  }

  @Override
  public void close() {
    channels.forEach(ManagedChannel::shutdownNow);
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
  }
}
