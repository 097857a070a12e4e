package io.kdra.computeclassbridge.reconciler;

import static io.kdra.computeclassbridge.TestData.computeClass;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.computeclassbridge.model.ComputeClass;
import io.kdra.computeclassbridge.model.Priority;
import io.kdra.leadership.Leadership;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.quarkus.test.kubernetes.client.KubernetesServer;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * A bridge replica that does not lead writes nothing, not even the finalizer, which the operator
 * SDK used to add to a ComputeClass on every replica before handing it to the reconciler: with a
 * ComputeClass created while another replica holds the Lease, this one reads it, leaves it to the
 * leader and writes neither finalizer nor status. Once the Lease is free and this replica leads,
 * the ComputeClass is reconciled again without an event of its own: finalizer, objects, status.
 */
@QuarkusTest
@TestProfile(StandbyWritesNothingTest.Elected.class)
@WithKubernetesTestServer(crud = true, setup = StandbyWritesNothingTest.AnotherReplicaLeads.class)
class StandbyWritesNothingTest {

  static final String LEASE_NS = "kdra-system";
  static final String LEASE = "kdra-computeclass-bridge";

  /** Elected as in production, with quick retries. */
  public static class Elected implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.of(
          "kdra.computeclass-bridge.leader-election.enabled", "true",
          "kdra.computeclass-bridge.leader-election.lease-namespace", LEASE_NS,
          "kdra.computeclass-bridge.leader-election.identity", "bridge-a",
          "kdra.computeclass-bridge.leader-election.retry-period", "200ms");
    }
  }

  /** The ComputeClass CRD, a selected namespace, and a Lease another replica renewed just now. */
  public static class AnotherReplicaLeads implements Consumer<KubernetesServer> {
    @Override
    public void accept(KubernetesServer server) {
      KubernetesClient client = server.getClient();
      try (InputStream in = new FileInputStream("../helm/kdra/crds-optional/computeclass.yaml")) {
        client
            .resource(
                client.getKubernetesSerialization().unmarshal(in, CustomResourceDefinition.class))
            .create();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      client
          .resource(
              new NamespaceBuilder()
                  .withNewMetadata()
                  .withName("team-a")
                  .withLabels(Map.of("computeclass.kdra.io/templates", "enabled"))
                  .endMetadata()
                  .build())
          .create();
      ZonedDateTime now = ZonedDateTime.now(ZoneOffset.UTC);
      client
          .resource(
              new LeaseBuilder()
                  .withNewMetadata()
                  .withName(LEASE)
                  .withNamespace(LEASE_NS)
                  .endMetadata()
                  .withNewSpec()
                  .withHolderIdentity("bridge-b")
                  .withLeaseDurationSeconds(3600)
                  .withAcquireTime(now)
                  .withRenewTime(now)
                  .endSpec()
                  .build())
          .create();
    }
  }

  @Inject KubernetesClient client;
  @Inject Leadership leadership;
  @Inject MeterRegistry registry;

  @Test
  void aStandbyLeavesAComputeClassToTheLeaderAndTakesItUpOnceItLeads() {
    double before = leftToTheLeader();
    ComputeClass created = computeClass("standby", Priority.gpu("nvidia-l4", 1));
    created.getMetadata().setUid(null);
    client.resource(created).create();

    await().atMost(Duration.ofMinutes(1)).until(() -> leftToTheLeader() > before);
    assertThat(leadership.leading()).isFalse();
    ComputeClass read = current();
    assertThat(read.getMetadata().getFinalizers()).isNullOrEmpty();
    assertThat(read.getStatus()).isNull();

    // the other replica is gone and its Lease with it: this one leads and applies the class
    client.leases().inNamespace(LEASE_NS).withName(LEASE).delete();
    await().atMost(Duration.ofMinutes(1)).until(leadership::leading);
    await()
        .atMost(Duration.ofMinutes(1))
        .untilAsserted(
            () -> {
              ComputeClass applied = current();
              assertThat(applied.getMetadata().getFinalizers())
                  .containsExactly(ComputeClassReconciler.FINALIZER);
              assertThat(applied.getStatus()).isNotNull();
              assertThat(applied.getStatus().getConditions())
                  .anySatisfy(
                      c -> {
                        assertThat(c.getType()).isEqualTo("Ready");
                        assertThat(c.getStatus()).isEqualTo("True");
                      });
            });
  }

  private ComputeClass current() {
    return client.resources(ComputeClass.class).withName("standby").get();
  }

  private double leftToTheLeader() {
    Counter c = registry.find("kdra.bridge.reconciles").tag("outcome", "standby").counter();
    return c == null ? 0 : c.count();
  }
}
