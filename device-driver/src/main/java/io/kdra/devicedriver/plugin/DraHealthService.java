package io.kdra.devicedriver.plugin;

import io.grpc.ServerServiceDefinition;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.kdra.devicedriver.health.HealthReport;
import io.kdra.devicedriver.health.HealthState;
import io.kdra.devicedriver.health.HealthStreams;
import io.kdra.devicedriver.kubelet.drahealth.v1alpha1.DRAResourceHealthGrpc;
import io.kdra.devicedriver.kubelet.drahealth.v1alpha1.DeviceHealth;
import io.kdra.devicedriver.kubelet.drahealth.v1alpha1.DeviceIdentifier;
import io.kdra.devicedriver.kubelet.drahealth.v1alpha1.HealthStatus;
import io.kdra.devicedriver.kubelet.drahealth.v1alpha1.NodeWatchResourcesResponse;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jboss.logging.Logger;

/**
 * The {@code v1alpha1.DRAResourceHealth} service (KEP-4680) on the DRA socket: each {@code
 * NodeWatchResources} call becomes a {@link HealthStreams} subscriber until the kubelet cancels it
 * or the server stops. Only translation and flow control live here.
 *
 * <p>Flow control: a stream whose client does not read keeps only the newest unsent report (each
 * report is complete, so older ones are worthless) and gets it when it is ready again.
 */
final class DraHealthService implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(DraHealthService.class);

  /** The service name as the kubelet's registration handshake lists services. */
  static final String SERVICE = DRAResourceHealthGrpc.SERVICE_NAME;

  private final HealthStreams health;
  private final Set<Stream> open = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  DraHealthService(HealthStreams health) {
    this.health = health;
  }

  ServerServiceDefinition definition() {
    return ServerServiceDefinition.builder(DRAResourceHealthGrpc.getServiceDescriptor())
        .addMethod(
            DRAResourceHealthGrpc.getNodeWatchResourcesMethod(),
            ServerCalls.asyncServerStreamingCall((req, out) -> watch(out)))
        .build();
  }

  private void watch(StreamObserver<NodeWatchResourcesResponse> observer) {
    var out = (ServerCallStreamObserver<NodeWatchResourcesResponse>) observer;
    Stream stream = new Stream(out);
    // Both handlers must be set before this method returns (grpc-java's rule).
    out.setOnCancelHandler(() -> forget(stream));
    out.setOnReadyHandler(stream::flush);
    if (closed) { // a call that slipped in while the server stops
      stream.complete();
      return;
    }
    open.add(stream);
    health.subscribe(stream);
    LOG.debugf("health stream opened; %d open", open.size());
  }

  private void forget(Stream stream) {
    health.unsubscribe(stream);
    open.remove(stream);
    LOG.debugf("health stream closed; %d open", open.size());
  }

  /** Ends every open stream cleanly (the kubelet sees EOF and reconnects to the next server). */
  @Override
  public void close() {
    closed = true;
    for (Stream s : open) {
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

  private static HealthStatus status(HealthState state) {
    return switch (state) {
      case UNKNOWN -> HealthStatus.UNKNOWN;
      case HEALTHY -> HealthStatus.HEALTHY;
      case UNHEALTHY -> HealthStatus.UNHEALTHY;
    };
  }

  /** One NodeWatchResources call. */
  private static final class Stream implements HealthStreams.Subscriber {
    private final ServerCallStreamObserver<NodeWatchResourcesResponse> out;
    private HealthReport pending;
    private boolean done;

    Stream(ServerCallStreamObserver<NodeWatchResourcesResponse> out) {
      this.out = out;
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
      out.onNext(response(report));
      return true;
    }

    synchronized void flush() {
      if (pending != null && !done && !out.isCancelled() && out.isReady()) {
        HealthReport report = pending;
        pending = null;
        try {
          out.onNext(response(report));
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
