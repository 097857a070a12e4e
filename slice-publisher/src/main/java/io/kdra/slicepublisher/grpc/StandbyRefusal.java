package io.kdra.slicepublisher.grpc;

import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.quarkus.grpc.GlobalInterceptor;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.spi.Prioritized;
import jakarta.inject.Inject;

/**
 * A replica that is not the leader refuses every inventory stream at once: UNAVAILABLE with the
 * trailer {@code kdra-not-leader: true}, before any authentication (a standby spends no TokenReview
 * on a stream it will not serve). The driver then drops its connection and retries on a new one,
 * which the Service routes afresh; the server's idle limit ({@code
 * kdra.slice-publisher.inventory-connections.max-idle}) closes the refused connection for drivers
 * that keep it.
 */
@ApplicationScoped
@GlobalInterceptor
public class StandbyRefusal implements ServerInterceptor, Prioritized {

  /** The trailer that tells a driver it reached a standby; inventory.proto documents it. */
  public static final Metadata.Key<String> NOT_LEADER =
      Metadata.Key.of("kdra-not-leader", Metadata.ASCII_STRING_MARSHALLER);

  /** Higher runs first (Quarkus orders global interceptors so): before authentication. */
  static final int PRIORITY = 1_000_000;

  private final WritingReplica replica;

  @Inject
  public StandbyRefusal(WritingReplica replica) {
    this.replica = replica;
  }

  /** The refusal, also for a stream whose replica stops leading while it is open. */
  public static StatusRuntimeException refusal() {
    Metadata trailers = new Metadata();
    trailers.put(NOT_LEADER, "true");
    return Status.UNAVAILABLE
        .withDescription("this slice-publisher replica is not the leader")
        .asRuntimeException(trailers);
  }

  @Override
  public <Q, A> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
    if (replica.writer()) {
      return next.startCall(call, headers);
    }
    StatusRuntimeException refused = refusal();
    call.close(refused.getStatus(), refused.getTrailers());
    return new ServerCall.Listener<>() {};
  }

  @Override
  public int getPriority() {
    return PRIORITY;
  }
}
