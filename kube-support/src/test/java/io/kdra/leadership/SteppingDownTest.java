package io.kdra.leadership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A leader that loses its Lease while running (its renewals failed past the renew deadline, as in
 * an API-server outage, or another replica holds it) steps down in the process and campaigns again:
 * no exit, and it leads again once the Lease is free.
 */
@EnableKubernetesMockClient(crud = true)
class SteppingDownTest {

  static final String NS = "kdra";
  static final String LEASE = "kdra-slice-publisher";

  KubernetesClient client;
  private final List<String> calls = new CopyOnWriteArrayList<>();
  private final List<CompletableFuture<?>> elections = new CopyOnWriteArrayList<>();
  private final List<ElectionWiring> wirings = new CopyOnWriteArrayList<>();

  @AfterEach
  void stopElections() {
    elections.forEach(e -> e.cancel(true));
    wirings.forEach(ElectionWiring::stopElections);
  }

  private ElectionWiring wiring(String identity) {
    ElectionWiring w = ElectionWiringTest.Settings.publisherElection(client, NS, LEASE, identity);
    wirings.add(w);
    return w;
  }

  /** The first election run by someone else, as quarkus-operator-sdk runs it. */
  @Test
  void aLeaderThatLosesTheLeaseStepsDownAndLeadsAgainOnceItIsFree() throws Exception {
    ElectionWiring wiring = wiring("a");
    Leadership a = wiring.leadership(() -> calls.add("a steps down"));
    elections.add(
        client
            .leaderElector()
            .withConfig(wiring.electorConfig(a, () -> calls.add("a writes")))
            .build()
            .start());
    waitFor(() -> a.leading() && calls.size() == 1);

    editLease(l -> withHolder(l, "intruder"));
    waitFor(() -> !a.leading());
    assertThat(calls).containsExactly("a writes", "a steps down");

    // the other holder goes away and frees the Lease, as a released one looks
    editLease(l -> withHolder(l, null));
    // leading turns true just before the writing starts, on the elector's thread
    waitFor(() -> a.leading() && calls.size() == 3);
    assertThat(calls).containsExactly("a writes", "a steps down", "a writes");
    assertThat(holder()).isEqualTo("a");
    assertThat(a.acquisitions()).isEqualTo(2);
  }

  /** Every election run by the wiring, as the slice-publisher runs them; shutdown releases. */
  @Test
  void theWiringsOwnElectionsGoOnUntilStoppedAndTheLastLeaderReleases() throws Exception {
    ElectionWiring wiring = wiring("a");
    Leadership a = wiring.leadership(() -> calls.add("a steps down"));
    wiring.elect(a, () -> calls.add("a writes"));
    waitFor(() -> a.leading() && calls.size() == 1);
    editLease(l -> withHolder(l, "intruder"));
    waitFor(() -> calls.contains("a steps down"));
    editLease(l -> withHolder(l, null));
    waitFor(() -> a.leading() && calls.size() == 3);

    a.shuttingDown();
    wiring.stopElections();
    assertThat(a.leading()).isFalse();
    assertThat(holder()).as("released on shutdown").isNull();
    assertThat(calls).containsExactly("a writes", "a steps down", "a writes");
  }

  private static Lease withHolder(Lease l, String holder) {
    l.getSpec().setHolderIdentity(holder);
    return l;
  }

  /** Edits the Lease; the leader renews concurrently, so a conflict is retried. */
  private void editLease(UnaryOperator<Lease> change) {
    for (int attempt = 1; ; attempt++) {
      try {
        client.leases().inNamespace(NS).withName(LEASE).edit(change);
        return;
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409 || attempt == 10) {
          throw e;
        }
      }
    }
  }

  private String holder() {
    Lease lease = client.leases().inNamespace(NS).withName(LEASE).get();
    return lease == null ? null : lease.getSpec().getHolderIdentity();
  }

  private static void waitFor(BooleanSupplier condition) {
    await().atMost(Duration.ofSeconds(20)).until(condition::getAsBoolean);
  }
}
