package io.kdra.leadership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseSpecBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A Lease that was not written by an elector (created with {@code kubectl}, a GitOps tool or a
 * chart, so its times or its duration are missing) is read as client-go reads it, a missing field
 * being its zero value: a holder that never renewed has no claim to it, and a candidate takes it.
 * Such a Lease once ended every replica's election for good (fabric8's lock threw, its elector
 * retries only after API errors), leaving Ready replicas of which none would ever lead.
 */
@EnableKubernetesMockClient(crud = true)
class ForeignLeaseTest {

  static final String NS = "kdra";
  static final String LEASE = "kdra-slice-publisher";

  KubernetesClient client;
  private ElectionWiring wiring;

  @AfterEach
  void stopElection() {
    if (wiring != null) {
      wiring.stopElections();
    }
  }

  static Stream<Arguments> leasesWrittenByHand() {
    ZonedDateTime longAgo = ZonedDateTime.of(2026, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC);
    return Stream.of(
        Arguments.of(
            "a holder, a duration, no times",
            new LeaseSpecBuilder().withHolderIdentity("someone").withLeaseDurationSeconds(15)),
        Arguments.of(
            "a holder, renewed long ago, no duration",
            new LeaseSpecBuilder()
                .withHolderIdentity("someone")
                .withAcquireTime(longAgo)
                .withRenewTime(longAgo)),
        Arguments.of(
            "a holder, no acquire time", new LeaseSpecBuilder().withHolderIdentity("someone")),
        Arguments.of("an empty spec", new LeaseSpecBuilder()),
        Arguments.of("no spec at all", null));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("leasesWrittenByHand")
  void aCandidateTakesALeaseWrittenByHand(String what, LeaseSpecBuilder spec) {
    writeByHand(spec);

    Leadership candidate = elect("b");

    await(what).atMost(Duration.ofSeconds(20)).until(candidate::leading);
    assertThat(holder()).isEqualTo("b");
  }

  /** The operators' first election is this wiring's too, not the operator SDK's. */
  @Test
  void anOperatorsFirstElectionTakesALeaseWrittenByHand() {
    writeByHand(new LeaseSpecBuilder().withHolderIdentity("someone").withLeaseDurationSeconds(15));
    wiring = ElectionWiringTest.Settings.publisherElection(client, NS, LEASE, "b");
    Leadership candidate = wiring.leadership(() -> {});

    OperatorSdkElection.campaign(wiring, candidate);

    await().atMost(Duration.ofSeconds(20)).until(candidate::leading);
    assertThat(holder()).isEqualTo("b");
  }

  private void writeByHand(LeaseSpecBuilder spec) {
    client
        .resource(
            new LeaseBuilder()
                .withNewMetadata()
                .withName(LEASE)
                .withNamespace(NS)
                .endMetadata()
                .withSpec(spec == null ? null : spec.build())
                .build())
        .create();
  }

  private Leadership elect(String identity) {
    wiring = ElectionWiringTest.Settings.publisherElection(client, NS, LEASE, identity);
    Leadership leadership = wiring.leadership(() -> {});
    wiring.elect(leadership, () -> {});
    return leadership;
  }

  private String holder() {
    Lease lease = client.leases().inNamespace(NS).withName(LEASE).get();
    return lease.getSpec().getHolderIdentity();
  }
}
