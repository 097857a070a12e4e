package io.kdra.computeclassbridge.reconciler;

import static io.kdra.computeclassbridge.TestData.computeClass;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.computeclassbridge.model.ComputeClass;
import io.kdra.computeclassbridge.model.Priority;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.enterprise.inject.Alternative;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Every time the bridge writes comes from the injected {@link Clock}: with a pinned one, the
 * conditions' transitions and the Events' timestamps are that instant.
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true)
@TestProfile(PinnedClockTest.Pinned.class)
class PinnedClockTest {

  static final Instant PINNED = Instant.parse("2030-01-02T03:04:05Z");

  /** Replaces the system clock with {@link PinnedClock}. */
  public static class Pinned implements QuarkusTestProfile {
    @Override
    public Set<Class<?>> getEnabledAlternatives() {
      return Set.of(PinnedClock.class);
    }

    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.of(
          "kdra.computeclass-bridge.namespaces.names",
          "team-pinned",
          "kdra.computeclass-bridge.namespaces.selector",
          "none");
    }
  }

  /** A clock that always says {@link #PINNED}. */
  @Alternative
  @Singleton
  public static class PinnedClock extends Clock {
    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return PINNED;
    }
  }

  @Inject KubernetesClient client;

  @Test
  void conditionsAndEventsCarryTheInjectedClocksTime() {
    client
        .resource(
            new NamespaceBuilder().withNewMetadata().withName("team-pinned").endMetadata().build())
        .create();
    client.resource(computeClass("pinned", Priority.gpu("nvidia-l4", 1))).create();
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(
            () -> {
              ComputeClass cc = client.resources(ComputeClass.class).withName("pinned").get();
              assertThat(cc.getStatus()).isNotNull();
              assertThat(cc.getStatus().getConditions())
                  .isNotEmpty()
                  .allSatisfy(
                      c -> assertThat(c.getLastTransitionTime()).isEqualTo(PINNED.toString()));
              assertThat(client.v1().events().inNamespace("default").list().getItems())
                  .filteredOn(e -> "pinned".equals(e.getInvolvedObject().getName()))
                  .isNotEmpty()
                  .allSatisfy(e -> assertThat(e.getFirstTimestamp()).isEqualTo(PINNED.toString()));
            });
  }
}
