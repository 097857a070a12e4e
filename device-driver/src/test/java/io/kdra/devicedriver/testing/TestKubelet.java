package io.kdra.devicedriver.testing;

import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.kdra.devicedriver.kubelet.drahealth.v1alpha1.DRAResourceHealthGrpc;
import io.kdra.devicedriver.kubelet.drahealth.v1alpha1.NodeWatchResourcesRequest;
import io.kdra.devicedriver.kubelet.drahealth.v1alpha1.NodeWatchResourcesResponse;
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
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * Plays the kubelet: dials unix sockets the way it does (target = the socket path, plaintext), runs
 * the plugin-watcher handshake and hands out channels to the DRA endpoint.
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
    String chosen =
        info.getSupportedVersionsList().stream().filter(known::contains).findFirst().orElse(null);
    RegistrationStatus status =
        chosen != null
            ? RegistrationStatus.newBuilder().setPluginRegistered(true).build()
            : RegistrationStatus.newBuilder()
                .setPluginRegistered(false)
                .setError("none of " + info.getSupportedVersionsList() + " is supported")
                .build();
    RegistrationGrpc.newBlockingStub(dial(registrationSocket))
        .withDeadlineAfter(5, TimeUnit.SECONDS)
        .notifyRegistrationStatus(status);
    return chosen;
  }

  /**
   * Opens {@code NodeWatchResources} on a DRA socket, as the kubelet does right after registration
   * (KEP-4680); what the plugin streams collects in the returned watch.
   */
  public HealthWatch watchHealth(Path draSocket) {
    HealthWatch watch = new HealthWatch();
    DRAResourceHealthGrpc.newStub(dial(draSocket))
        .nodeWatchResources(NodeWatchResourcesRequest.getDefaultInstance(), watch);
    return watch;
  }

  /**
   * Opens {@code NodeWatchResources} of the v1 service, as a 1.37+ kubelet does when the plugin
   * lists {@code v1.DRAResourceHealth}. The messages are wire-identical to v1alpha1's; the watch
   * hands them out as v1alpha1 messages so that tests compare both versions alike.
   */
  public HealthWatch watchHealthV1(Path draSocket) {
    HealthWatch watch = new HealthWatch();
    io.kdra.devicedriver.kubelet.drahealth.v1.DRAResourceHealthGrpc.newStub(dial(draSocket))
        .nodeWatchResources(
            io.kdra.devicedriver.kubelet.drahealth.v1.NodeWatchResourcesRequest
                .getDefaultInstance(),
            new ClientResponseObserver<
                io.kdra.devicedriver.kubelet.drahealth.v1.NodeWatchResourcesRequest,
                io.kdra.devicedriver.kubelet.drahealth.v1.NodeWatchResourcesResponse>() {
              @Override
              public void beforeStart(
                  ClientCallStreamObserver<
                          io.kdra.devicedriver.kubelet.drahealth.v1.NodeWatchResourcesRequest>
                      requestStream) {
                watch.call = requestStream::cancel;
              }

              @Override
              public void onNext(
                  io.kdra.devicedriver.kubelet.drahealth.v1.NodeWatchResourcesResponse value) {
                try {
                  watch.onNext(NodeWatchResourcesResponse.parseFrom(value.toByteString()));
                } catch (InvalidProtocolBufferException e) {
                  watch.onError(e);
                }
              }

              @Override
              public void onError(Throwable t) {
                watch.onError(t);
              }

              @Override
              public void onCompleted() {
                watch.onCompleted();
              }
            });
    return watch;
  }

  /** One open health stream, seen from the kubelet's side. */
  public static final class HealthWatch
      implements ClientResponseObserver<NodeWatchResourcesRequest, NodeWatchResourcesResponse> {
    /** Marks the end of the stream in {@link #events}: completed, or the error. */
    public record End(Throwable error) {}

    private final BlockingQueue<Object> events = new LinkedBlockingQueue<>();
    private volatile BiConsumer<String, Throwable> call;

    @Override
    public void beforeStart(ClientCallStreamObserver<NodeWatchResourcesRequest> requestStream) {
      call = requestStream::cancel;
    }

    @Override
    public void onNext(NodeWatchResourcesResponse value) {
      events.add(value);
    }

    @Override
    public void onError(Throwable t) {
      events.add(new End(t));
    }

    @Override
    public void onCompleted() {
      events.add(new End(null));
    }

    /** The next message; fails if the stream ends or none comes within 10 s. */
    public NodeWatchResourcesResponse next() {
      Object e = take();
      if (e instanceof NodeWatchResourcesResponse r) {
        return r;
      }
      throw new AssertionError("health stream ended instead of sending: " + e);
    }

    /** Waits for the end of the stream, skipping messages; fails after 10 s. */
    public End end() {
      while (true) {
        if (take() instanceof End end) {
          return end;
        }
      }
    }

    /** Cancels the call, as the kubelet does when the plugin deregisters or it stops. */
    public void cancel() {
      call.accept("kubelet stops watching", null);
    }

    private Object take() {
      try {
        Object e = events.poll(60, TimeUnit.SECONDS);
        if (e == null) {
          throw new AssertionError("no health stream event within 60 s");
        }
        return e;
      } catch (InterruptedException ex) {
        Thread.currentThread().interrupt();
        throw new AssertionError(ex);
      }
    }
  }

  @Override
  public void close() {
    channels.forEach(ManagedChannel::shutdownNow);
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
  }
}
