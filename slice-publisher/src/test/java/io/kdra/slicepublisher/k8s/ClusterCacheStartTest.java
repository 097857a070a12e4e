package io.kdra.slicepublisher.k8s;

import static io.kdra.slicepublisher.domain.Fixtures.DRIVER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeListBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceListBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An API server that cannot answer the first list (overloaded at start-up, restarting) must not
 * leave the caches unsynced for good: each informer retries, with backoff, until it has listed.
 */
@EnableKubernetesMockClient(crud = true)
class ClusterCacheStartTest {

  static final Duration CLIENT_WAITS = Duration.ofMillis(300);
  static final Duration SLOWER_THAN_THE_CLIENT_WAITS = Duration.ofSeconds(2);

  KubernetesMockServer server;
  KubernetesClient client;
  private ClusterCache cache;

  @AfterEach
  void tearDown() {
    if (cache != null) {
      cache.close();
    }
  }

  @Test
  void theCachesSyncOnceTheApiServerAnswersAfterFailedFirstLists() {
    client
        .nodes()
        .resource(new NodeBuilder().withNewMetadata().withName("n1").endMetadata().build())
        .create();
    // answers slower than the client waits: each first list times out (an error fabric8 does not
    // retry on its own, unlike a 5xx)
    server
        .expect()
        .get()
        .delay(SLOWER_THAN_THE_CLIENT_WAITS.toMillis(), TimeUnit.MILLISECONDS)
        .withPath("/api/v1/nodes?resourceVersion=0")
        .andReturn(200, new NodeListBuilder().build())
        .times(2);
    server
        .expect()
        .get()
        .delay(SLOWER_THAN_THE_CLIENT_WAITS.toMillis(), TimeUnit.MILLISECONDS)
        .withPath("/apis/resource.k8s.io/v1/resourceslices?resourceVersion=0")
        .andReturn(200, new ResourceSliceListBuilder().build())
        .once();
    KubernetesClient impatient =
        new KubernetesClientBuilder()
            .withConfig(
                new ConfigBuilder(client.getConfiguration())
                    .withRequestTimeout((int) CLIENT_WAITS.toMillis())
                    .build())
            .build();

    cache = new ClusterCache(impatient, Set.of(DRIVER), false);
    cache.start();

    await().atMost(Duration.ofMinutes(1)).until(cache::synced);
    assertThat(cache.node("n1")).isPresent();
  }
}
