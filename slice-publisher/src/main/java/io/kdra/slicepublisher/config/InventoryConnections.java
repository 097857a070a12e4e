package io.kdra.slicepublisher.config;

import io.grpc.netty.NettyServerBuilder;
import io.quarkus.grpc.api.ServerBuilderCustomizer;
import io.quarkus.grpc.runtime.config.GrpcServerConfiguration;
import io.vertx.grpc.VertxServerBuilder;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * How long the inventory gRPC keeps a connection ({@code
 * kdra.slice-publisher.inventory-connections.*}).
 *
 * <p>The drivers reach the publisher through a ClusterIP Service, and kube-proxy picks a pod per
 * connection, not per stream: a connection stays with the pod it first reached. Only the leader
 * serves streams; a standby refuses them ({@code StandbyRefusal}). So a connection must not outlive
 * its use: an idle one (a refused driver that keeps its channel) is closed after {@code max-idle},
 * and every connection ends after {@code max-age} (plus {@code max-age-grace} for the stream on it,
 * grpc-java adds ±10 % jitter), so that connections are spread again over time and each stream is
 * authenticated again. A driver whose stream ends reconnects on a new connection within about a
 * second, well inside {@code kdra.slice-publisher.stale.disconnected-taint-after}.
 */
@ApplicationScoped
public class InventoryConnections implements ServerBuilderCustomizer<VertxServerBuilder> {

  /** The limits, as plain values. */
  public record Limits(Duration maxAge, Duration maxAgeGrace, Duration maxIdle) {
    public Limits {
      Objects.requireNonNull(maxAge, "maxAge");
      Objects.requireNonNull(maxAgeGrace, "maxAgeGrace");
      Objects.requireNonNull(maxIdle, "maxIdle");
    }
  }

  private final Limits limits;

  @Inject
  public InventoryConnections(PublisherConfig config) {
    PublisherConfig.InventoryConnections c = config.inventoryConnections();
    this.limits = new Limits(c.maxAge(), c.maxAgeGrace(), c.maxIdle());
  }

  @Override
  public void customize(GrpcServerConfiguration grpc, VertxServerBuilder builder) {
    apply(limits, builder.nettyBuilder());
  }

  /** Sets the limits on a grpc-java Netty server (grpc-java raises any below a second to one). */
  public static void apply(Limits limits, NettyServerBuilder builder) {
    builder
        .maxConnectionAge(limits.maxAge().toMillis(), TimeUnit.MILLISECONDS)
        .maxConnectionAgeGrace(limits.maxAgeGrace().toMillis(), TimeUnit.MILLISECONDS)
        .maxConnectionIdle(limits.maxIdle().toMillis(), TimeUnit.MILLISECONDS);
  }
}
