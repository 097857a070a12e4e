package io.kdra.claimcontroller;

import static io.kdra.claimcontroller.domain.K.NS;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;

import io.fabric8.kubernetes.api.model.PodListBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimListBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.claimcontroller.domain.K;
import io.kdra.core.testing.AllocFixtures;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.quarkus.test.kubernetes.client.KubernetesServer;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * An API server too slow to answer the first lists in time (loaded, restarting) at start-up: the
 * informers retry with backoff instead of giving up, the service starts and stays up, and once the
 * caches have synced it schedules. Before, the operator SDK stopped the service on the first
 * timed-out list (a crash loop under Kubernetes).
 */
@QuarkusTest
@TestProfile(SlowApiServerStartTest.ImpatientClient.class)
@WithKubernetesTestServer(crud = true, setup = SlowApiServerStartTest.SlowFirstLists.class)
class SlowApiServerStartTest {

  static final Duration CLIENT_WAITS = Duration.ofSeconds(1);
  static final Duration SLOWER_THAN_THE_CLIENT_WAITS = Duration.ofSeconds(4);

  /** The client gives up on a request sooner, and the operator on a cache's first sync. */
  public static class ImpatientClient implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.of(
          "quarkus.kubernetes-client.request-timeout",
          CLIENT_WAITS.toMillis() + "ms",
          "quarkus.operator-sdk.cache-sync-timeout",
          "2s");
    }
  }

  /** The first two lists of pods and of claims answer after the client stopped waiting. */
  public static class SlowFirstLists implements Consumer<KubernetesServer> {
    @Override
    public void accept(KubernetesServer server) {
      server
          .expect()
          .get()
          .delay(SLOWER_THAN_THE_CLIENT_WAITS.toMillis(), TimeUnit.MILLISECONDS)
          .withPath("/api/v1/pods?resourceVersion=0")
          .andReturn(200, new PodListBuilder().build())
          .times(2);
      server
          .expect()
          .get()
          .delay(SLOWER_THAN_THE_CLIENT_WAITS.toMillis(), TimeUnit.MILLISECONDS)
          .withPath("/apis/resource.k8s.io/v1/resourceclaims?resourceVersion=0")
          .andReturn(200, new ResourceClaimListBuilder().build())
          .times(2);
    }
  }

  @Inject KubernetesClient client;

  @Test
  void theServiceStartsThenSchedulesOnceTheSlowFirstListsAreRetried() {
    // the test's writes share the impatient client: on a loaded machine one may time out, and
    // is sent again (each is a create-or-update, so one that landed anyway is no error)
    patiently(() -> client.nodes().resource(K.readyNode("node-a")).createOr(n -> n.update()));
    patiently(() -> client.resource(K.template("tpl")).createOr(t -> t.update()));
    patiently(() -> client.resource(AllocFixtures.deviceClass("gpu")).createOr(c -> c.update()));
    patiently(
        () ->
            client
                .resource(
                    AllocFixtures.slice(
                            "node-a-gpu", "node-a", AllocFixtures.device("gpu-0").build())
                        .build())
                .createOr(c -> c.update()));
    patiently(
        () -> client.resource(K.podWithTemplate("late", "gpu", "tpl")).createOr(p -> p.update()));

    await()
        .atMost(Duration.ofMinutes(2))
        .ignoreExceptions()
        .untilAsserted(
            () ->
                assertThat(
                        client
                            .pods()
                            .inNamespace(NS)
                            .withName("late")
                            .get()
                            .getSpec()
                            .getNodeName())
                    .isEqualTo("node-a"));
    given().when().get("/q/health/ready").then().statusCode(200).body("status", equalTo("UP"));
  }

  private static void patiently(Runnable write) {
    await()
        .atMost(Duration.ofMinutes(1))
        .ignoreExceptions()
        .until(
            () -> {
              write.run();
              return true;
            });
  }
}
