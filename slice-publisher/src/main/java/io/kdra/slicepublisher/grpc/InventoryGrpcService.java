package io.kdra.slicepublisher.grpc;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.kdra.inventory.v1.InventoryGrpc;
import io.kdra.inventory.v1.InventorySnapshot;
import io.kdra.inventory.v1.ReportAck;
import io.kdra.slicepublisher.domain.PlannerSettings;
import io.kdra.slicepublisher.observability.PublisherMetrics;
import io.quarkus.grpc.GrpcService;
import io.smallrye.common.annotation.Blocking;
import jakarta.inject.Inject;
import org.jboss.logging.Logger;

/**
 * The inventory API. Per stream: the caller's token is reviewed once, at the first snapshot ({@link
 * DriverAuthenticator}), and the stream ends with UNAUTHENTICATED when the token expires; every
 * snapshot must be for the caller's own node (else the stream ends with PERMISSION_DENIED); then
 * {@link SnapshotIntake} decides and the ack says what became of it. A replica that is not the
 * leader ends streams with UNAVAILABLE so that drivers reconnect (through the Service) to the
 * leader. Runs on worker threads: the review may block.
 */
@GrpcService
public class InventoryGrpcService extends InventoryGrpc.InventoryImplBase {

  private static final Logger LOG = Logger.getLogger(InventoryGrpcService.class);

  @Inject DriverAuthenticator authenticator;
  @Inject SnapshotIntake intake;
  @Inject WritingReplica replica;
  @Inject PlannerSettings settings;
  @Inject PublisherMetrics metrics;
  private final RefusalLog refusals = new RefusalLog();

  @Override
  @Blocking
  public StreamObserver<InventorySnapshot> report(StreamObserver<ReportAck> responses) {
    String token = BearerTokenInterceptor.TOKEN.get();
    String peer = BearerTokenInterceptor.PEER.get();
    // synchronized: the token's expiry ends the stream from a timer thread
    return new StreamObserver<>() {
      private boolean reviewed;
      private Runnable cancelExpiry = () -> {};
      private String node;
      private Long lastSequence;
      private String lastDriver;
      private String lastNode;
      private boolean closed;

      @Override
      public synchronized void onNext(InventorySnapshot snapshot) {
        if (closed) {
          return;
        }
        if (!replica.writer()) {
          // stopped leading while the stream was open; StandbyRefusal refuses new streams
          closed = true;
          responses.onError(StandbyRefusal.refusal());
          return;
        }
        if (!reviewed) {
          DriverAuthenticator.Caller caller;
          try {
            caller = authenticator.authenticate(token, peer);
          } catch (DriverAuthenticator.Refused e) {
            fail(e.status());
            return;
          }
          node = caller.node();
          reviewed = true;
          cancelExpiry = authenticator.atExpiry(caller, () -> expired(caller));
        }
        if (node != null && !node.equals(snapshot.getNodeName())) {
          fail(
              Status.PERMISSION_DENIED.withDescription(
                  "the driver pod runs on node \""
                      + node
                      + "\" and may not report node \""
                      + snapshot.getNodeName()
                      + "\""));
          return;
        }
        ReportAck ack = intake.accept(snapshot, lastSequence);
        if (ack.getAccepted()) {
          lastSequence = snapshot.getSequence();
          lastDriver = snapshot.getDriver();
          lastNode = snapshot.getNodeName();
        } else {
          LOG.debugf(
              "refused snapshot %d of %s on %s: %s",
              snapshot.getSequence(), snapshot.getDriver(), snapshot.getNodeName(), ack.getError());
        }
        responses.onNext(ack);
      }

      /** Routine (the kubelet renews tokens): the driver reconnects with its new one. */
      private synchronized void expired(DriverAuthenticator.Caller caller) {
        if (!closed) {
          closed = true;
          LOG.debugf("ending the inventory stream of node %s: its token expired", node);
          responses.onError(
              Status.UNAUTHENTICATED
                  .withDescription(
                      "the stream's token expired at "
                          + caller.validUntil()
                          + "; reconnect with the renewed one")
                  .asRuntimeException());
          ended();
        }
      }

      private void fail(Status status) {
        closed = true;
        cancelExpiry.run();
        if (status.getCode() == Status.Code.UNAVAILABLE) {
          LOG.debugf("ending inventory stream: %s", status.getDescription());
        } else {
          refusals.refused(status.getCode().name(), status.getDescription());
          metrics.refusedStream(status.getCode().name());
        }
        responses.onError(status.asRuntimeException());
      }

      @Override
      public synchronized void onError(Throwable t) {
        closed = true;
        cancelExpiry.run();
        LOG.debugf("inventory stream ended by the driver: %s", t.toString());
        ended();
      }

      @Override
      public synchronized void onCompleted() {
        cancelExpiry.run();
        if (!closed) {
          closed = true;
          responses.onCompleted();
        }
        ended();
      }

      /** The driver process is gone, restarting, or cut off: its devices may not be prepared. */
      private void ended() {
        if (lastSequence != null
            && lastDriver != null
            && intake.streamEnded(lastDriver, lastNode, lastSequence)) {
          LOG.infof(
              "driver %s on node %s disconnected; its devices get the %s taint unless it"
                  + " reconnects within %s",
              lastDriver, lastNode, settings.staleTaintKey(), settings.disconnectedTaintAfter());
        }
      }
    };
  }
}
