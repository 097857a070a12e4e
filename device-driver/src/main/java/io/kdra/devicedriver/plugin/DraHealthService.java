package io.kdra.devicedriver.plugin;

import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.ServerServiceDefinition;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.kdra.devicedriver.health.HealthReport;
import io.kdra.devicedriver.health.HealthState;
import io.kdra.devicedriver.health.HealthStreams;
import io.kdra.devicedriver.kubelet.drahealth.v1.DRAResourceHealthGrpc;
import io.kdra.devicedriver.kubelet.drahealth.v1.DeviceHealth;
import io.kdra.devicedriver.kubelet.drahealth.v1.DeviceIdentifier;
import io.kdra.devicedriver.kubelet.drahealth.v1.HealthStatus;
import io.kdra.devicedriver.kubelet.drahealth.v1.NodeWatchResourcesResponse;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.jboss.logging.Logger;

/**
 * The {@code DRAResourceHealth} service (KEP-4680) on the DRA socket, in both versions a kubelet
 * may dial: {@code v1} (1.37+ kubelets pick it first) and {@code v1alpha1} (1.31-1.36, and 1.37
 * with plugins that list only it). Each {@code NodeWatchResources} call becomes a {@link
 * HealthStreams} subscriber until the kubelet cancels it or the server stops. Only translation and
 * flow control live here. The two versions' messages are identical on the wire, so a v1alpha1
 * stream gets the v1 message's bytes, as upstream's kubeletplugin helper converts them.
 *
 * <p>Flow control: a stream whose client does not read keeps only the newest unsent report (each
 * report is complete, so older ones are worthless) and gets it when it is ready again.
 */
final class DraHealthService implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(DraHealthService.class);

  /**
   * The service names as the kubelet's registration handshake lists services, newest first: a 1.37+
   * kubelet takes the first of its own list ({@code v1}, then {@code v1alpha1}) that the plugin
   * lists, and opens no health stream when the plugin lists neither.
   */
  static final List<String> SERVICES =
      List.of(
          DRAResourceHealthGrpc.SERVICE_NAME,
          io.kdra.devicedriver.kubelet.drahealth.v1alpha1.DRAResourceHealthGrpc.SERVICE_NAME);

  private final HealthStreams health;
  private final Set<Stream<?>> open = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  DraHealthService(HealthStreams health) {
    this.health = health;
  }

  /** Both versions' service definitions, {@link #SERVICES}' order. */
  List<ServerServiceDefinition> definitions() {
    return List.of(
        ServerServiceDefinition.builder(DRAResourceHealthGrpc.getServiceDescriptor())
            .addMethod(
                DRAResourceHealthGrpc.getNodeWatchResourcesMethod(),
                ServerCalls.asyncServerStreamingCall(
                    (req, out) -> watch(out, "v1", DraHealthService::response)))
            .build(),
        ServerServiceDefinition.builder(
                io.kdra.devicedriver.kubelet.drahealth.v1alpha1.DRAResourceHealthGrpc
                    .getServiceDescriptor())
            .addMethod(
                io.kdra.devicedriver.kubelet.drahealth.v1alpha1.DRAResourceHealthGrpc
                    .getNodeWatchResourcesMethod(),
                ServerCalls.asyncServerStreamingCall(
                    (req, out) -> watch(out, "v1alpha1", DraHealthService::v1alpha1Response)))
            .build());
  }

  private <R> void watch(
      StreamObserver<R> observer, String version, Function<HealthReport, R> translate) {
    var out = (ServerCallStreamObserver<R>) observer;
    Stream<R> stream = new Stream<>(out, translate);
    // Both handlers must be set before this method returns (grpc-java's rule).
    out.setOnCancelHandler(() -> forget(stream));
    out.setOnReadyHandler(stream::flush);
    if (closed) { // a call that slipped in while the server stops
      stream.complete();
      return;
    }
    open.add(stream);
    health.subscribe(stream);
    // which version the kubelet chose: a 1.37+ kubelet picks v1 when both are listed
    LOG.infof("the kubelet opened a device-health stream (%s); %d open", version, open.size());
  }

  private void forget(Stream<?> stream) {
    health.unsubscribe(stream);
    open.remove(stream);
    LOG.debugf("health stream closed; %d open", open.size());
  }

  /** Ends every open stream cleanly (the kubelet sees EOF and reconnects to the next server). */
  @Override
  public void close() {
    closed = true;
    for (Stream<?> s : open) {
      forget(s);
      s.complete();
    }
  }

  static NodeWatchResourcesResponse response(HealthReport report) {
    NodeWatchResourcesResponse.Builder response = NodeWatchResourcesResponse.newBuilder();
    for (HealthReport.Device d : report.devices()) {
      response.addDevices(
          DeviceHealth.newBuilder()
              .setDevice(
                  DeviceIdentifier.newBuilder().setPoolName(d.pool()).setDeviceName(d.name()))
              .setHealth(status(d.state()))
              .setLastUpdatedTime(d.determinedAt().getEpochSecond())
              .setHealthCheckTimeoutSeconds(d.checkTimeout().getSeconds())
              .setMessage(d.message()));
    }
    return response.build();
  }

  /** The same report for a v1alpha1 stream: its messages are v1's, byte for byte. */
  static io.kdra.devicedriver.kubelet.drahealth.v1alpha1.NodeWatchResourcesResponse
      v1alpha1Response(HealthReport report) {
    try {
      return io.kdra.devicedriver.kubelet.drahealth.v1alpha1.NodeWatchResourcesResponse.parseFrom(
          response(report).toByteString());
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalStateException("v1 and v1alpha1 health messages differ on the wire", e);
    }
  }

  private static HealthStatus status(HealthState state) {
    return switch (state) {
      case UNKNOWN -> HealthStatus.UNKNOWN;
      case HEALTHY -> HealthStatus.HEALTHY;
      case UNHEALTHY -> HealthStatus.UNHEALTHY;
    };
  }

  /** One NodeWatchResources call, of either version. */
  private static final class Stream<R> implements HealthStreams.Subscriber {
    private final ServerCallStreamObserver<R> out;
    private final Function<HealthReport, R> translate;
    private HealthReport pending;
    private boolean done;

    Stream(ServerCallStreamObserver<R> out, Function<HealthReport, R> translate) {
      this.out = out;
      this.translate = translate;
    }

    @Override
    public synchronized boolean send(HealthReport report) {
      if (done || out.isCancelled()) {
        return false;
      }
      if (!out.isReady()) {
        pending = report;
        return true;
      }
      pending = null;
      out.onNext(translate.apply(report));
      return true;
    }

    synchronized void flush() {
      if (pending != null && !done && !out.isCancelled() && out.isReady()) {
        HealthReport report = pending;
        pending = null;
        try {
          out.onNext(translate.apply(report));
        } catch (RuntimeException e) {
          // cancelled in between; the cancel handler drops this stream
          LOG.debugf("health stream ended while sending: %s", e.toString());
        }
      }
    }

    synchronized void complete() {
      if (done) {
        return;
      }
      done = true;
      if (!out.isCancelled()) {
        try {
          out.onCompleted();
        } catch (RuntimeException e) {
          LOG.debugf("health stream ended while completing: %s", e.toString());
        }
      }
    }
  }
}
