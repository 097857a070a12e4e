package io.kdra.it.services;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.kdra.it.chart.KdraChart;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Objects;

/**
 * Two replicas of a service of a {@link Stack} that elect a leader through one Lease: who holds it,
 * and the waits of a takeover test (a live leader with a live standby before the fault, the standby
 * holding the Lease after it).
 */
public final class LeaseReplicas {

  private final Stack stack;
  private final String lease;
  private final List<String> replicas;

  /** The replicas (process names of {@code stack}) that elect through {@code lease}. */
  public LeaseReplicas(Stack stack, String lease, List<String> replicas) {
    if (replicas.size() != 2) {
      throw new IllegalArgumentException("a leader and a standby, not " + replicas);
    }
    this.stack = stack;
    this.lease = lease;
    this.replicas = List.copyOf(replicas);
  }

  /** The Lease's holder, or null. */
  public String holder() {
    Lease l = stack.client.leases().inNamespace(KdraChart.NAMESPACE).withName(lease).get();
    return l == null || l.getSpec() == null ? null : l.getSpec().getHolderIdentity();
  }

  /** When the Lease was last renewed, or null. */
  public ZonedDateTime renewTime() {
    Lease l = stack.client.leases().inNamespace(KdraChart.NAMESPACE).withName(lease).get();
    return l == null || l.getSpec() == null ? null : l.getSpec().getRenewTime();
  }

  /** The replicas that elect through the Lease. */
  public List<String> replicas() {
    return replicas;
  }

  /** The replica that is not {@code replica}. */
  public String other(String replica) {
    return replica.equals(replicas.get(0)) ? replicas.get(1) : replicas.get(0);
  }

  /**
   * Waits until a replica whose process runs holds the Lease and the other replica runs too (a
   * replica that exited by itself is started again by the harness), and returns the leader.
   */
  public String awaitLiveLeaderAndStandby() {
    return await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(100))
        .until(
            () -> {
              String holder = holder();
              return holder != null
                      && replicas.contains(holder)
                      && stack.services.process(holder).alive()
                      && stack.services.process(other(holder)).alive()
                  ? holder
                  : null;
            },
            Objects::nonNull);
  }

  /** Waits at most {@code atMost} until {@code standby} holds the Lease. */
  public void awaitTakenOverBy(String standby, Duration atMost) {
    await()
        .atMost(atMost)
        .pollInterval(Duration.ofMillis(200))
        .until(() -> standby.equals(holder()));
  }
}
