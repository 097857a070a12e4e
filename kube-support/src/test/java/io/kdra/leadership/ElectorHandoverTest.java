package io.kdra.leadership;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Leadership} with fabric8's own elector, as the slice-publisher runs it: stopping the
 * election on shutdown releases the Lease on the stopping thread, and the other replica takes it
 * although its lease duration (an hour here) is far from over.
 */
@EnableKubernetesMockClient(crud = true)
class ElectorHandoverTest {

  static final String NS = "kdra";
  static final String LEASE = "kdra-slice-publisher";

  KubernetesClient client;
  private final List<String> calls = new CopyOnWriteArrayList<>();
  private final List<CompletableFuture<?>> elections = new CopyOnWriteArrayList<>();

  @AfterEach
  void stopElections() {
    elections.forEach(e -> e.cancel(true));
  }

  private Leadership replica(String identity) {
    LeaseRelease release = new LeaseRelease(client, NS, LEASE, identity);
    Leadership leadership =
        Leadership.elected(
            "slice-publisher",
            identity,
            () -> calls.add(identity + " released " + release.release()),
            () -> calls.add(identity + " steps down"));
    elections.add(
        client
            .leaderElector()
            .withConfig(
                new LeaderElectionConfigBuilder()
                    .withName(LEASE)
                    .withLock(new LeaseLock(NS, LEASE, identity))
                    // far longer than the test: a takeover can only come from the release
                    .withLeaseDuration(Duration.ofHours(1))
                    .withRenewDeadline(Duration.ofMinutes(30))
                    .withRetryPeriod(Duration.ofMillis(100))
                    .withReleaseOnCancel(false)
                    .withLeaderCallbacks(
                        leadership.callbacks(() -> calls.add(identity + " writes")))
                    .build())
            .build()
            .start());
    return leadership;
  }

  private String holder() {
    Lease lease = client.leases().inNamespace(NS).withName(LEASE).get();
    return lease == null ? null : lease.getSpec().getHolderIdentity();
  }

  @Test
  void aStoppedLeaderHandsTheLeaseToTheStandby() throws Exception {
    Leadership a = replica("a");
    waitFor(a::leading);
    Leadership b = replica("b");
    waitFor(() -> "a".equals(b.leader()));
    assertThat(b.leading()).isFalse();

    a.shuttingDown();
    elections.get(0).cancel(true);
    // released before cancel returned: the process may close its client right after
    assertThat(calls).containsExactly("a writes", "a released true");
    assertThat(a.leading()).isFalse();

    waitFor(b::leading);
    assertThat(holder()).isEqualTo("b");
    assertThat(calls).containsExactly("a writes", "a released true", "b writes");
  }

  @Test
  void aLeaseTakenByAnotherEndsTheLeaderWithoutARelease() throws Exception {
    Leadership a = replica("a");
    waitFor(a::leading);
    // the leader renews concurrently: retry a conflicting edit, as any other writer would
    for (int attempt = 1; ; attempt++) {
      try {
        client
            .leases()
            .inNamespace(NS)
            .withName(LEASE)
            .edit(
                l -> {
                  l.getSpec().setHolderIdentity("intruder");
                  return l;
                });
        break;
      } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
        if (e.getCode() != 409 || attempt == 10) {
          throw e;
        }
      }
    }
    waitFor(() -> calls.contains("a steps down"));
    assertThat(calls).containsExactly("a writes", "a steps down");
    assertThat(holder()).isEqualTo("intruder");
  }

  private static void waitFor(BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("condition within 20 s").isLessThan(deadline);
      Thread.sleep(20);
    }
  }
}
